import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './receiver.js';
import { webhookServer } from './setup.js';

// Regression: posting conversation.started twice for one session delivered it twice.
test('conversation.started is delivered once per conversation_id per widget; a repeat is 202 duplicate:true with no delivery', async () => {
  const rx = await startReceiver();
  const { s, token, addEndpoint, post } = await webhookServer();
  try {
    await addEndpoint({ url: rx.url, events: ['conversation.started', 'conversation.ended'] });
    const first = await post('conversation.started', { conversation_id: 'ses_1', visitor_id: 'vis_1' });
    assert.equal(first.status, 202);
    assert.equal(first.body.deliveries, 1);
    assert.equal(first.body.duplicate, undefined);
    const again = await post('conversation.started', { conversation_id: 'ses_1', visitor_id: 'vis_2' });
    assert.equal(again.status, 202);
    assert.deepEqual(again.body, { id: first.body.id, deliveries: 0, duplicate: true });
    // Another conversation, and other event types of the same one, are not affected.
    assert.equal((await post('conversation.started', { conversation_id: 'ses_2' })).body.deliveries, 1);
    const ended = await post('conversation.ended', { conversation_id: 'ses_1' });
    assert.equal(ended.body.deliveries, 1);
    // conversation.ended likewise once, and only for a conversation that started.
    assert.deepEqual((await post('conversation.ended', { conversation_id: 'ses_1' })).body, { id: ended.body.id, deliveries: 0, duplicate: true });
    const unstarted = await post('conversation.ended', { conversation_id: 'ses_never' });
    assert.equal(unstarted.status, 409);
    assert.equal(unstarted.body.error.code, 'conflict');
    // Another widget of the tenant has its own conversations.
    const other = await s.call('POST', '/v1/widgets', { token, body: { name: 'second' } });
    await s.call('POST', `/v1/widgets/${other.body.id}/webhooks`, { token, body: { url: rx.url, events: ['conversation.started'] } });
    const elsewhere = await s.call('POST', `/v1/widgets/${other.body.id}/events`, {
      token,
      body: { event: 'conversation.started', data: { conversation_id: 'ses_1' } },
    });
    assert.equal(elsewhere.body.deliveries, 1);
    await rx.waitFor(4);
    const started = rx.received.filter((r) => JSON.parse(r.body).event === 'conversation.started');
    assert.deepEqual(started.map((r) => [JSON.parse(r.body).widget_id === other.body.id, JSON.parse(r.body).data.conversation_id]).sort(), [
      [false, 'ses_1'],
      [false, 'ses_2'],
      [true, 'ses_1'],
    ]);
  } finally {
    await s.stop();
    await rx.close();
  }
});
