import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { freshDatabase } from '../../helpers/postgres.js';

/**
 * A widget's model server is the tenant's, so its reply may hold anything JSON can: a NUL, a
 * lone surrogate, an emoji split across two chunks. PostgreSQL refused the NUL and the reply
 * the visitor had just watched stream in was never stored (the transcript lost it, `done`
 * carried `message: null`); a lone surrogate was streamed as sent and stored as U+FFFD. Such
 * text is made storable as it arrives: what streams is what is stored, on both databases.
 */
async function model(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: unknown) =>
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
      );
    chunk({ content: 'Hel\u0000lo \ud800 a' });
    // 😀 split across two chunks, as a server cutting by UTF-16 units would send it.
    chunk({ content: ' \ud83d' });
    chunk({ content: '\ude00 end\udfff' });
    chunk({
      tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'escalate_to_human', arguments: JSON.stringify({ reason: 'a\u0000b \ud800' }) } }],
    });
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`a model reply holding a NUL, lone surrogates and a split emoji is stored as it was streamed (${backend})`, async () => {
    const fake = await model();
    const s = await startTestServer({
      allowPrivateWebhooks: true,
      ...(backend === 'postgres' ? { database: { kind: 'postgres', url: await freshDatabase() } } : {}),
    });
    try {
      const { token } = await tenantSession(s, 'enterprise');
      const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } })).body;
      const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1`;
      assert.equal((await s.call('PATCH', `/v1/widgets/${widget.id}`, { token, body: { agent: { base_url: base, api_key: 'k', model: 'm' } } })).status, 200);
      const c = (await s.call('POST', `/v1/widgets/${widget.id}/conversations`, { body: {} })).body;
      const res = await fetch(`${s.url}/v1/conversations/${c.conversation_id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
        body: '{"text": "hello"}',
      });
      const events = (await res.text())
        .split('\n\n')
        .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)?.[1] }))
        .filter((e) => e.event !== undefined);
      const streamed = events
        .filter((e) => e.event === 'delta')
        .map((e) => (JSON.parse(e.data!) as { text: string }).text)
        .join('');
      assert.equal(streamed, 'Hello \ufffd a 😀 end\ufffd');
      const done = JSON.parse(events.find((e) => e.event === 'done')!.data!) as { message: { text: string } | null };
      assert.equal(done.message?.text, streamed);
      assert.deepEqual(JSON.parse(events.find((e) => e.event === 'escalated')!.data!), { reason: 'ab \ufffd' });
      const transcript = await s.call('GET', `/v1/conversations/${c.conversation_id}/messages?after=1`, { token: c.token });
      assert.deepEqual(
        transcript.body.messages.map((m: { text: string }) => m.text),
        [streamed],
      );
    } finally {
      await s.stop();
      fake.close();
    }
  });
}
