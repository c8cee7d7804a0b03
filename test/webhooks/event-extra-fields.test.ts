import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './receiver.js';
import { LEAD, webhookServer } from './setup.js';

/**
 * The data of conversation.started, conversation.ended and escalation.triggered is "not shown"
 * by the spec, yet any field beyond the documented ones was a 422. Those fields now pass
 * through (still scanned for personal data); lead.captured stays exactly its four fields.
 */
test('extra data fields reach the receiver for the three unspecified types; lead.captured stays exact', async () => {
  const rx = await startReceiver();
  const { s, post, addEndpoint } = await webhookServer();
  try {
    await addEndpoint({ url: rx.url, events: ['conversation.started', 'lead.captured'] });
    const data = { conversation_id: 'ses_1', visitor_id: 'vis_1', started_at: '2026-11-26T00:11:17.875Z', page: { path: '/pricing' } };
    const ok = await post('conversation.started', data);
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
    await s.webhooks.dispatcher.runDue();
    assert.deepEqual(JSON.parse(rx.received[0]!.body.toString()).data, data);
    const pii = await post('conversation.started', { conversation_id: 'ses_1', note: 'mail jane@example.com' });
    assert.equal(pii.status, 422);
    assert.equal(pii.body.error.details[0].path, 'data.note');
    const lead = await post('lead.captured', { ...LEAD, source: 'form' });
    assert.equal(lead.status, 422);
    assert.equal(lead.body.error.details[0].path, 'data.source');
  } finally {
    await s.stop();
    await rx.close();
  }
});
