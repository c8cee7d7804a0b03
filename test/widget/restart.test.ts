import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startEmbedded, type Embedded } from '../../src/embedded/start.js';
import { tempDir } from '../helpers/paths.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { startReceiver } from '../webhooks/receiver.js';
import { openStream, parseFrames } from '../webhooks/conversations/setup.js';

const ORIGIN = 'https://shop.example';

async function call(base: string, method: string, path: string, token: string | null, body?: unknown) {
  const headers: Record<string, string> = { origin: ORIGIN };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, text, body: (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : null };
}

test('the server restarts mid-conversation: the widget reconnects to its conversation, nothing is lost, no event is doubled', async () => {
  const dir = tempDir();
  const rx = await startReceiver();
  const options = { port: 0, db: join(dir.path, 'b.db'), adminToken: ADMIN_TOKEN, allowPrivateWebhooks: true };
  let s: Embedded = await startEmbedded(options);
  try {
    const tenant = await call(s.url, 'POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'r', plan: 'pro' });
    await call(s.url, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, ADMIN_TOKEN, { email: 'r@r.test', password: 'correct horse battery' });
    const { token } = (await call(s.url, 'POST', '/v1/auth/login', null, { email: 'r@r.test', password: 'correct horse battery' })).body;
    const widget = (await call(s.url, 'POST', '/v1/widgets', token, { name: 'w' })).body;
    await call(s.url, 'PATCH', `/v1/widgets/${widget.id}`, token, { allowed_origins: [ORIGIN], agent: { knowledge: 'Returns are free within 30 days.' } });
    await call(s.url, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, {
      url: rx.url,
      events: ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'],
    });
    const c = (await call(s.url, 'POST', `/v1/widgets/${widget.id}/conversations`, null, {})).body;
    const first = await call(s.url, 'POST', `/v1/conversations/${c.conversation_id}/messages`, c.token, { text: 'Are returns free?' });
    const reply = parseFrames(first.text).at(-1)!.data.message;
    assert.match(reply.text, /free within 30 days/);
    await call(s.url, 'POST', `/v1/conversations/${c.conversation_id}/lead`, c.token, { email: 'ann@example.com' });
    const events = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events`, c.token);
    await events.next((f) => f.event === 'state');
    await rx.waitFor(2);

    // Restart: the open stream ends with the old process; the new one knows the conversation.
    await s.close();
    await events.done;
    s = await startEmbedded(options);
    const transcript = await call(s.url, 'GET', `/v1/conversations/${c.conversation_id}/messages?after=0`, c.token);
    assert.deepEqual(
      transcript.body.messages.map((m: { role: string }) => m.role),
      ['visitor', 'agent'],
    );
    assert.equal(transcript.body.conversation.status, 'open');
    // A reconnecting stream asks for what came after the last message it saw.
    const again = await openStream(`${s.url}/v1/conversations/${c.conversation_id}/events?after=${reply.seq}`, c.token);
    await again.next((f) => f.event === 'state');
    assert.ok(!again.frames.some((f) => f.event === 'message'), 'nothing replayed twice');
    const second = await call(s.url, 'POST', `/v1/conversations/${c.conversation_id}/messages`, c.token, { text: 'I want to talk to a person' });
    assert.ok(parseFrames(second.text).some((f) => f.event === 'escalated'));
    await call(s.url, 'POST', `/v1/conversations/${c.conversation_id}/end`, c.token);
    await again.next((f) => f.event === 'ended');
    again.close();
    // The lead again after the restart changes nothing: the conversation ended.
    assert.equal((await call(s.url, 'POST', `/v1/conversations/${c.conversation_id}/lead`, c.token, { email: 'ann@example.com' })).status, 409);

    await rx.waitFor(4);
    await s.webhooks.dispatcher.runDue();
    const kinds = rx.received.map((r) => JSON.parse(r.body).event);
    assert.deepEqual(kinds, ['conversation.started', 'lead.captured', 'escalation.triggered', 'conversation.ended']);
  } finally {
    await s.close();
    await rx.close();
    dir.dispose();
  }
});
