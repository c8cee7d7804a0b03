/**
 * Deleting a conversation that is still open closes it first: `conversation.ended` (reason
 * `agent_closed`) is delivered, once, and the widget's stream hears `ended`. Before, a receiver
 * saw the conversation start and never end, and the widget's stream just stopped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from '../receiver.js';
import { openStream, widgetServer } from './setup.js';

test('deleting an open conversation delivers conversation.ended (agent_closed) once and tells the widget; deleting an ended one adds nothing', async () => {
  const rx = await startReceiver();
  const { s, token, widgetId, start, say } = await widgetServer();
  try {
    const ep = await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, {
      token,
      body: { url: rx.url, events: ['conversation.started', 'conversation.ended'] },
    });
    assert.equal(ep.status, 201);
    const open = await start();
    assert.equal((await say(open, 'hello')).status, 200);
    const events = await openStream(`${s.url}/v1/conversations/${open.conversation_id}/events`, open.token);
    const del = await s.call('DELETE', `/v1/widgets/${widgetId}/conversations/${open.conversation_id}`, { token });
    assert.equal(del.status, 204);
    const ended = await events.next((f) => f.event === 'ended');
    assert.deepEqual(ended.data, { reason: 'agent_closed' });
    await events.done;

    const closed = await start();
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/conversations/${closed.conversation_id}/close`, { token })).status, 200);
    assert.equal((await s.call('DELETE', `/v1/widgets/${widgetId}/conversations/${closed.conversation_id}`, { token })).status, 204);

    await s.webhooks.dispatcher.runDue();
    await rx.waitFor(4);
    const bodies = rx.received.map((r) => JSON.parse(r.body.toString()) as { event: string; data: { conversation_id: string; ended_reason?: string } });
    const of = (id: string) =>
      bodies.filter((b) => b.data.conversation_id === id).map((b) => `${b.event}${b.data.ended_reason ? ` ${b.data.ended_reason}` : ''}`);
    assert.deepEqual(of(open.conversation_id), ['conversation.started', 'conversation.ended agent_closed']);
    assert.deepEqual(of(closed.conversation_id), ['conversation.started', 'conversation.ended agent_closed']);
  } finally {
    await s.stop();
    await rx.close();
  }
});
