import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './receiver.js';
import { testClock, webhookServer } from './setup.js';
import { verifyWebhook } from '../../src/public/webhooks.js';

test('the breaker: a receiver failing for 24 h is disabled; the tenant hears it (endpoint.disabled at its operational endpoint, the disabled-endpoints list)', async () => {
  const failing = await startReceiver(() => ({ status: 500 }));
  const ops = await startReceiver();
  const clock = testClock();
  const { s, token, email, widgetId, addEndpoint } = await webhookServer({ now: clock.now, webhooks: { dispatcher: { retryDelays: [3_600_000] } } });
  try {
    const bad = await addEndpoint({ url: failing.url, events: ['conversation.started'] });
    const opsEp = await addEndpoint({ url: ops.url, events: ['conversation.ended'] });
    assert.deepEqual((await s.call('GET', '/v1/webhooks/operational-endpoint', { token })).body.endpoint_id, null);
    const set = await s.call('PUT', '/v1/webhooks/operational-endpoint', { token, body: { endpoint_id: opsEp.id } });
    assert.equal(set.status, 200);
    assert.equal(set.body.endpoint_id, opsEp.id);
    assert.equal((await s.call('PUT', '/v1/webhooks/operational-endpoint', { token, body: { endpoint_id: 'ep_nope' } })).status, 404);
    assert.equal((await s.call('PUT', '/v1/webhooks/operational-endpoint', { token, body: {} })).status, 422);

    const emit = (i: number) => s.webhooks.service.emit(widgetId, 'conversation.started', { conversation_id: `ses_b${i}` });
    await emit(0);
    await s.webhooks.dispatcher.runDue();
    for (let h = 1; h <= 24; h++) {
      clock.advance(3_600_000);
      await emit(h);
      await s.webhooks.dispatcher.runDue();
    }
    const ep = (await s.webhooks.service.store.getEndpoint(widgetId as never, bad.id))!;
    assert.equal(ep.enabled, false);
    assert.equal(ep.disabledReason, 'failing');
    await ops.waitFor(1);
    const told = ops.received[0]!;
    assert.equal(told.headers['x-service-event'], 'endpoint.disabled');
    assert.equal(verifyWebhook(told.body, told.headers, opsEp.secret, { now: clock.now }).ok, true, 'signed like any delivery');
    const body = JSON.parse(told.body);
    assert.equal(body.data.endpoint_id, bad.id);
    assert.equal(body.data.reason, 'failing');
    assert.equal(body.data.url, failing.url);
    // A fresh session (the first one expired during the day).
    const login = await s.call('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } });
    const alerts = await s.call('GET', '/v1/webhooks/disabled-endpoints', { token: login.body.token });
    assert.equal(alerts.status, 200);
    assert.deepEqual(
      alerts.body.map((a: any) => [a.endpoint_id, a.reason, a.disabled_at]),
      [[bad.id, 'failing', new Date(ep.disabledAt!).toISOString()]],
    );
  } finally {
    await s.stop();
    await failing.close();
    await ops.close();
  }
});

test('replay: count the failed deliveries since a time, then queue them all in one call', async () => {
  const rx = await startReceiver(() => ({ status: 500, body: 'down' }));
  const clock = testClock();
  const { s, token, widgetId, addEndpoint, post } = await webhookServer({ now: clock.now, webhooks: { dispatcher: { retryDelays: [] } } });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    const since = new Date(clock.now()).toISOString();
    for (let i = 0; i < 3; i++) await post('conversation.started', { conversation_id: `ses_r${i}` });
    await s.webhooks.dispatcher.runDue();
    const base = `/v1/widgets/${widgetId}/webhooks/${ep.id}/recover`;
    const count = await s.call('GET', `${base}?since=${encodeURIComponent(since)}`, { token });
    assert.equal(count.status, 200);
    assert.deepEqual(count.body, { since, failed: 3 });
    assert.equal((await s.call('GET', `${base}?since=yesterday`, { token })).status, 422);
    // Date.parse would take each of these for some instant (2001 in local time, a year, March 2, local time).
    for (const loose of ['1', '2026', '2026-02-30T00:00:00Z', '2026-01-01T00:00:00', 'Tue, 01 Dec 2026 00:00:00 GMT'])
      assert.equal((await s.call('GET', `${base}?since=${encodeURIComponent(loose)}`, { token })).status, 422, loose);
    assert.equal((await s.call('POST', base, { token, body: { since: '1' } })).status, 422);
    assert.equal((await s.call('GET', base, { token })).status, 422);
    const later = new Date(clock.now() + 1).toISOString();
    assert.equal((await s.call('GET', `${base}?since=${encodeURIComponent(later)}`, { token })).body.failed, 0);
    rx.setResponder(() => ({ status: 200 }));
    const replay = await s.call('POST', base, { token, body: { since } });
    assert.deepEqual(replay.body, { requeued: 3 });
    await s.webhooks.dispatcher.runDue();
    assert.equal((await s.call('GET', `${base}?since=${encodeURIComponent(since)}`, { token })).body.failed, 0);
    const [d] = (await s.call('GET', `/v1/widgets/${widgetId}/webhooks/${ep.id}/deliveries?limit=1`, { token })).body.data;
    const detail = await s.call('GET', `/v1/widgets/${widgetId}/webhooks/${ep.id}/deliveries/${d.id}`, { token });
    assert.deepEqual(
      detail.body.attempt_log.map((a: any) => [a.status_code, a.response_excerpt]),
      [
        [500, 'down'],
        [200, ''],
      ],
    );
  } finally {
    await s.stop();
    await rx.close();
  }
});
