import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './receiver.js';
import { testClock, webhookServer } from './setup.js';

test('a failed delivery attempt is logged in one line (endpoint, status or error, next retry) and counted by outcome', async () => {
  const rx = await startReceiver(() => ({ status: 500, body: 'no' }));
  const clock = testClock();
  const lines: { msg: string; fields: Record<string, unknown> }[] = [];
  const logger = { info() {}, error() {}, debug() {}, warn: (msg: string, fields: Record<string, unknown> = {}) => lines.push({ msg, fields }) };
  const { s, widgetId, addEndpoint } = await webhookServer({ now: clock.now, logger, webhooks: { dispatcher: { retryDelays: [60_000] } } });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    await s.webhooks.service.emit(widgetId, 'conversation.started', { conversation_id: 'ses_1' });
    await s.webhooks.dispatcher.runDue();
    const failed = lines.filter((l) => l.msg === 'webhooks: delivery attempt failed');
    assert.equal(failed.length, 1);
    const f = failed[0]!.fields;
    assert.equal(f.endpoint, ep.id);
    assert.match(String(f.delivery), /^dlv_/);
    assert.equal(f.status, 500);
    assert.equal(f.error, 'HTTP 500');
    assert.equal(f.attempt, 1);
    assert.equal(typeof f.nextRetry, 'string');
    assert.ok(Date.parse(String(f.nextRetry)) > clock.now());
    assert.deepEqual(s.webhooks.dispatcher.attempts, { succeeded: 0, retrying: 1, failed: 0 });

    // The last attempt: given up, no next retry.
    clock.advance(61_000 * 1.2);
    await s.webhooks.dispatcher.runDue();
    const last = lines.filter((l) => l.msg === 'webhooks: delivery attempt failed')[1]!.fields;
    assert.equal(last.attempt, 2);
    assert.equal(last.nextRetry, null);
    assert.deepEqual(s.webhooks.dispatcher.attempts, { succeeded: 0, retrying: 1, failed: 1 });
  } finally {
    await s.stop();
    await rx.close();
  }
});
