import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

/**
 * A scripted OpenAI-compatible server on a real port, speaking the wire format the `openai`
 * package expects for chat completions (with `usage`), speech, transcriptions and models.
 * The dialogue benchmarks and the tests drive the real client and the real plugins against it.
 */
export interface FakeOpenAI {
  /** Base URL to give the client, ending in /v1. */
  readonly baseUrl: string;
  /** Chat requests as received (parsed JSON bodies). */
  readonly chats: Array<Record<string, any>>;
  readonly speeches: Array<Record<string, any>>;
  readonly transcriptions: Array<{ fields: Record<string, string>; file: Buffer; filename: string; mime: string }>;
  /** What the next chat answers; default a fixed line. */
  reply: (body: Record<string, any>) => string;
  /** Tool calls the next chat makes besides its text (streamed requests): none by default. */
  toolCalls: (body: Record<string, any>) => { name: string; arguments: string }[];
  /** A streamed reply's pace: words per second (0 sends them all at once). */
  tokensPerSecond: number;
  /** Told just before each streamed content chunk is written (benchmarks time the server behind it). */
  onChunk: ((index: number, body: Record<string, any>) => void) | null;
  /** What the next transcription answers. */
  transcript: string;
  /** Delay before every answer, in ms. */
  latencyMs: number;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** The next `count` requests (any route but /models) answer `status`, with the given headers. */
  failNext(status: number, count?: number, headers?: Record<string, string>): void;
  /** Requests received per route, failures included. */
  hits(route: 'chat' | 'speech' | 'transcriptions' | 'models'): number;
  close(): Promise<void>;
}

/** A valid 16-bit mono PCM WAV of `samples` samples of a quiet square wave. */
export function tinyWav(samples = 1600, rate = 16000): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(i % 40 < 20 ? 1000 : -1000, i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeOpenAI(options: { latencyMs?: number } = {}): Promise<FakeOpenAI> {
  const failures: Array<{ status: number; headers: Record<string, string> }> = [];
  const counts = { chat: 0, speech: 0, transcriptions: 0, models: 0 };
  let seq = 0;
  const fake: Omit<FakeOpenAI, 'baseUrl' | 'close'> = {
    chats: [],
    speeches: [],
    transcriptions: [],
    reply: () => 'Stay close, it is not safe here.',
    toolCalls: () => [],
    tokensPerSecond: 0,
    onChunk: null,
    transcript: 'hello there',
    latencyMs: options.latencyMs ?? 0,
    usage: { prompt_tokens: 120, completion_tokens: 12 },
    failNext(status, count = 1, headers = {}) {
      for (let i = 0; i < count; i++) failures.push({ status, headers });
    },
    hits: (route) => counts[route],
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    if (res.destroyed) return;
    const payload = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    res.writeHead(status, { 'content-type': Buffer.isBuffer(body) ? 'audio/wav' : 'application/json', 'content-length': String(payload.length), ...headers });
    res.end(payload);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const route =
      path === '/v1/chat/completions'
        ? 'chat'
        : path === '/v1/audio/speech'
          ? 'speech'
          : path === '/v1/audio/transcriptions'
            ? 'transcriptions'
            : path === '/v1/models'
              ? 'models'
              : null;
    if (!route) return send(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
    counts[route]++;
    if (route === 'models') return send(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'test' }] });
    const raw = route === 'transcriptions' ? null : await readBody(req);
    if (fake.latencyMs > 0) await new Promise((r) => setTimeout(r, fake.latencyMs));
    const failure = failures.shift();
    if (failure) {
      if (route === 'transcriptions') req.resume();
      return send(res, failure.status, { error: { message: `scripted ${failure.status}`, type: 'server_error' } }, failure.headers);
    }
    if (route === 'chat') {
      const body = JSON.parse(raw!.toString('utf8')) as Record<string, any>;
      fake.chats.push(body);
      if (body.stream === true) return streamChat(res, body, `chatcmpl-${++seq}`);
      return send(res, 200, {
        id: `chatcmpl-${++seq}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: fake.reply(body) }, finish_reason: 'stop', logprobs: null }],
        usage: { ...fake.usage, total_tokens: fake.usage.prompt_tokens + fake.usage.completion_tokens },
      });
    }
    if (route === 'speech') {
      fake.speeches.push(JSON.parse(raw!.toString('utf8')) as Record<string, any>);
      return send(res, 200, tinyWav());
    }
    const fields: Record<string, string> = {};
    let file = Buffer.alloc(0);
    let filename = '';
    let mime = '';
    await new Promise<void>((resolve, reject) => {
      const bb = busboy({ headers: req.headers });
      bb.on('field', (name, value) => {
        fields[name] = value;
      });
      bb.on('file', (_name, stream, info) => {
        filename = info.filename ?? '';
        mime = info.mimeType;
        const parts: Buffer[] = [];
        stream.on('data', (c: Buffer) => parts.push(c));
        stream.on('end', () => {
          file = Buffer.concat(parts);
        });
      });
      bb.on('close', resolve);
      bb.on('error', reject);
      req.pipe(bb);
    });
    fake.transcriptions.push({ fields, file, filename, mime });
    return send(res, 200, { text: fake.transcript });
  };

  /**
   * A streamed chat completion as OpenAI sends it: `text/event-stream` of
   * `chat.completion.chunk` objects (the role first, then content pieces, then each tool call's
   * name and its arguments in pieces), a last chunk with the finish reason, then `[DONE]`.
   */
  const streamChat = async (res: ServerResponse, body: Record<string, any>, id: string): Promise<void> => {
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(chunk({ role: 'assistant', content: '' }));
    const words = fake.reply(body).match(/\S+\s*/g) ?? [];
    const gap = fake.tokensPerSecond > 0 ? 1000 / fake.tokensPerSecond : 0;
    for (let i = 0; i < words.length; i++) {
      if (gap > 0) await new Promise((r) => setTimeout(r, gap));
      if (res.destroyed) return;
      fake.onChunk?.(i, body);
      res.write(chunk({ content: words[i] }));
    }
    const calls = fake.toolCalls(body);
    calls.forEach((call, index) => {
      res.write(chunk({ tool_calls: [{ index, id: `call_${seq}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
      const half = Math.ceil(call.arguments.length / 2);
      for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)])
        if (part) res.write(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    });
    res.write(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'));
    res.end('data: [DONE]\n\n');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { error: { message: String(err) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
