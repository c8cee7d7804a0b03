import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PAGE, widgetServer } from './setup.js';

/**
 * Each widget has its own rates of new conversations and of visitor messages (each one a model
 * call), whoever sends them and from wherever: the per-visitor and per-address rates do not
 * bound a crowd of addresses, so without these one widget's flood took the server's (shared)
 * model and database from every other widget. Past a rate the call is 429 and stores nothing;
 * another widget is not affected.
 */

test('new conversations per widget (widgetConversationsPerWidget): past the rate 429 with Retry-After and CORS, nothing stored, another widget still opens', async () => {
  const { s, token, widgetId, visitor, start } = await widgetServer({ limits: { widgetConversationsPerWidget: { limit: 2, windowMs: 60_000 } } });
  try {
    await start();
    await start('vis_other');
    const refused = await visitor('POST', `/v1/widgets/${widgetId}/conversations`, { body: { visitor_id: 'vis_third' } });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /per widget/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('access-control-allow-origin'), PAGE);
    const list = await s.call('GET', `/v1/widgets/${widgetId}/conversations`, { token });
    assert.equal(list.body.data.length, 2, 'the refused conversation was not stored');

    const other = await s.call('POST', '/v1/widgets', { token, body: { name: 'Other' } });
    await s.call('PATCH', `/v1/widgets/${other.body.id}`, { token, body: { allowed_origins: [PAGE] } });
    assert.equal((await visitor('POST', `/v1/widgets/${other.body.id}/conversations`, { body: {} })).status, 201);
  } finally {
    await s.stop();
  }
});

test('visitor messages per widget (widgetMessagesPerWidget), across its conversations: past the rate 429, the message not stored', async () => {
  const { s, visitor, start, say } = await widgetServer({ limits: { widgetMessagesPerWidget: { limit: 2, windowMs: 60_000 } } });
  try {
    const a = await start();
    const b = await start('vis_b');
    assert.equal((await say(a, 'hello')).status, 200);
    assert.equal((await say(b, 'hello')).status, 200);
    const refused = await say(b, 'again');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /per widget/);
    assert.equal(refused.headers.get('access-control-allow-origin'), PAGE);
    const transcript = await visitor('GET', `/v1/conversations/${b.conversation_id}/messages?after=0`, { token: b.token });
    assert.deepEqual(
      transcript.body.messages.filter((m: { role: string }) => m.role === 'visitor').map((m: { text: string }) => m.text),
      ['hello'],
    );
  } finally {
    await s.stop();
  }
});
