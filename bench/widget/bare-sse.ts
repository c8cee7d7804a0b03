// The baseline of `brainstem bench widget`: the least a server can do to stream a model's reply
// to a visitor. A bare uWebSockets.js server that, for each POST, asks the same fake model
// for a streamed chat completion and relays each content piece as one server-sent event,
// corked, with nothing else (no database, no agent, no openai package). Run as a child process;
// prints `listening on http://127.0.0.1:PORT`.
import uWS from 'uWebSockets.js';

const model = process.env.BARE_MODEL_URL ?? '';
const app = uWS.App();

app.post('/relay', (res, req) => {
  const key = req.getQuery('key') ?? '';
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData(() => {});
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-store');
  });
  void (async () => {
    try {
      const r = await fetch(`${model}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer bare' },
        body: JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: key }] }),
      });
      const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done || aborted) break;
        buf += value;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const line = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
          const text = (JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content;
          if (text && !aborted) res.cork(() => res.write(`event: delta\ndata: ${JSON.stringify({ text })}\n\n`));
        }
      }
      if (!aborted) res.cork(() => res.end('event: done\ndata: {}\n\n'));
    } catch {
      if (!aborted) res.cork(() => res.close());
    }
  })();
});

app.get('/events', (res) => {
  res.onAborted(() => {});
  res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream');
  res.write('event: state\ndata: {}\n\n');
});

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) process.exit(1);
  process.stdout.write(`listening on http://127.0.0.1:${uWS.us_socket_local_port(socket)}\n`);
});
