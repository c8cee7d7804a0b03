import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startReceiver } from './receiver.js';
import { LEAD, testClock, webhookServer } from './setup.js';
import { DELIVERY_CONCURRENCY_PER_ENDPOINT, retryDelay, seededRandom } from '../../src/webhooks/schedule.js';
import { verifyWebhook } from '../../src/public/webhooks.js';

test('a delivery reaches a real receiver with the body and headers of spec 002, verifiable three ways', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post, widgetId } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['lead.captured'] });
    assert.match(ep.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const accepted = await post('lead.captured', LEAD);
    assert.equal(accepted.status, 202);
    assert.equal(accepted.body.deliveries, 1);
    assert.match(accepted.body.id, /^evt_/);
    await rx.waitFor(1);
    const r = rx.received[0]!;
    assert.equal(r.body, JSON.stringify({ event: 'lead.captured', widget_id: widgetId, data: LEAD }));
    assert.equal(r.headers['content-type'], 'application/json');
    assert.match(String(r.headers['user-agent']), /^brainstem-webhooks\/\d+\.\d+\.\d+/);
    assert.equal(r.headers['x-service-event'], 'lead.captured');
    assert.match(String(r.headers['x-service-delivery']), /^dlv_/);
    assert.equal(r.headers['webhook-id'], r.headers['x-service-delivery']);
    assert.match(String(r.headers['x-service-timestamp']), /^\d{10}$/);
    // Independently, with node:crypto: hex HMAC of the raw body keyed with the secret as shown.
    const hex = createHmac('sha256', ep.secret).update(r.body).digest('hex');
    assert.equal(r.headers['x-service-signature'], `v1=${hex}`);
    const key = Buffer.from(ep.secret.slice('whsec_'.length), 'base64');
    const b64 = createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
    assert.equal(r.headers['webhook-signature'], `v1,${b64}`);
    // With the standardwebhooks package, as a receiver would.
    const payload = new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>);
    assert.deepEqual(payload, { event: 'lead.captured', widget_id: widgetId, data: LEAD });
    // With our own receiver tool.
    const v = verifyWebhook(r.body, r.headers as Record<string, string>, ep.secret);
    assert.equal(v.ok, true);
    const tampered = verifyWebhook(r.body.replace('true', 'false'), r.headers as Record<string, string>, ep.secret);
    assert.equal(tampered.ok, false);
    assert.equal(verifyWebhook(r.body, r.headers as Record<string, string>, 'whsec_' + Buffer.alloc(32, 1).toString('base64')).ok, false);
  } finally {
    await s.stop();
    await rx.close();
  }
});

const store = (s: { webhooks: { service: { store: any } } }) => s.webhooks.service.store;

test('retries follow 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h on an injected clock, then the delivery fails', async () => {
  const rx = await startReceiver(() => ({ status: 500, body: 'down' }));
  const clock = testClock();
  const { s, addEndpoint, post } = await webhookServer({ now: clock.now, webhooks: { dispatcher: { random: () => 0.5 } } });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    assert.equal((await post('conversation.started', { conversation_id: 'ses_1' })).status, 202);
    const d = s.webhooks.dispatcher;
    await rx.waitFor(1);
    await d.runDue();
    const [delivery] = (await store(s).listDeliveries(ep.id, { limit: 10, before: null })).data;
    const ids = new Set<string>();
    const delays = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
    for (const [i, delay] of delays.entries()) {
      const now = await store(s).getDelivery(ep.id, delivery.id);
      assert.equal(now.status, 'pending');
      assert.equal(now.attempts, i + 1);
      assert.equal(now.nextAttemptAt - clock.now(), delay, `delay after attempt ${i + 1}`);
      clock.advance(delay - 1);
      assert.equal(await d.runDue(), 0, 'nothing is due a millisecond early');
      clock.advance(1);
      assert.equal(await d.runDue(), 1);
    }
    const done = await store(s).getDelivery(ep.id, delivery.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.attempts, 8);
    assert.equal(done.attemptLog.length, 8);
    assert.ok(done.attemptLog.every((a: any) => a.statusCode === 500 && a.responseExcerpt === 'down'));
    assert.equal(rx.received.length, 8);
    for (const r of rx.received) ids.add(String(r.headers['x-service-delivery']));
    assert.deepEqual([...ids], [delivery.id], 'the delivery id is stable across retries');
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('jitter stays within ±10% of the schedule', () => {
  assert.equal(
    retryDelay(1, () => 0),
    4_500,
  );
  assert.equal(
    retryDelay(1, () => 0.999999),
    5_500,
  );
  assert.equal(
    retryDelay(7, () => 0.5),
    36_000_000,
  );
  assert.equal(
    retryDelay(8, () => 0.5),
    null,
  );
  const r = seededRandom(7);
  for (let i = 0; i < 1000; i++) {
    const v = retryDelay(2, r)!;
    assert.ok(v >= 270_000 && v <= 330_000);
  }
});

test('410 Gone disables the endpoint at once and fails its pending deliveries', async () => {
  const rx = await startReceiver(() => ({ status: 410 }));
  const clock = testClock();
  const { s, token, widgetId, addEndpoint, post } = await webhookServer({ now: clock.now });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    // Enqueued together (before the dispatcher wakes), so more deliveries than one endpoint may have in flight are pending when the 410 arrives.
    const count = DELIVERY_CONCURRENCY_PER_ENDPOINT + 4;
    await Promise.all(Array.from({ length: count }, (_, i) => s.webhooks.service.emit(widgetId, 'conversation.started', { conversation_id: `ses_${i}` })));
    await rx.waitFor(1);
    await s.webhooks.dispatcher.runDue();
    const view = await s.call('GET', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token });
    assert.equal(view.body.enabled, false);
    assert.equal(view.body.disabled_reason, 'gone');
    const list = await s.call('GET', `/v1/widgets/${widgetId}/webhooks/${ep.id}/deliveries?limit=100`, { token });
    assert.equal(list.body.data.length, count);
    assert.ok(list.body.data.every((x: any) => x.status === 'failed'));
    assert.ok(rx.received.length <= DELIVERY_CONCURRENCY_PER_ENDPOINT, 'at most the first in-flight batch was sent');
    assert.equal((await post('conversation.started', { conversation_id: 'ses_9' })).body.deliveries, 0);
    // Re-enabling by PATCH, then recovering what failed since the start.
    rx.setResponder(() => ({ status: 204 }));
    const on = await s.call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token, body: { enabled: true } });
    assert.equal(on.status, 200);
    assert.equal(on.body.enabled, true);
    assert.equal(on.body.disabled_reason, null);
    const rec = await s.call('POST', `/v1/widgets/${widgetId}/webhooks/${ep.id}/recover`, {
      token,
      body: { since: new Date(clock.now() - 60_000).toISOString() },
    });
    assert.equal(rec.status, 202);
    assert.equal(rec.body.requeued, count);
    await s.webhooks.dispatcher.runDue();
    const after = await s.call('GET', `/v1/widgets/${widgetId}/webhooks/${ep.id}/deliveries?status=succeeded&limit=100`, { token });
    assert.equal(after.body.data.length, count);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('an endpoint failing continuously for 24 hours is disabled; a success in between resets the streak', async () => {
  const rx = await startReceiver(() => ({ status: 500 }));
  const clock = testClock();
  const { s, widgetId, addEndpoint } = await webhookServer({ now: clock.now });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    const svc = s.webhooks.service;
    const d = s.webhooks.dispatcher;
    await svc.emit(widgetId, 'conversation.started', { conversation_id: 'ses_a' });
    await d.runDue();
    const failing = await store(s).getEndpoint(widgetId, ep.id);
    assert.equal(failing.failingSince, clock.now());
    clock.advance(20 * 3_600_000);
    rx.setResponder(() => ({ status: 200 }));
    await svc.emit(widgetId, 'conversation.started', { conversation_id: 'ses_b' });
    await d.runDue();
    assert.equal((await store(s).getEndpoint(widgetId, ep.id)).failingSince, null, 'a success clears the streak');
    rx.setResponder(() => ({ status: 500 }));
    await svc.emit(widgetId, 'conversation.started', { conversation_id: 'ses_c' });
    await d.runDue();
    const since = clock.now();
    clock.advance(24 * 3_600_000 - 1_000);
    await svc.emit(widgetId, 'conversation.started', { conversation_id: 'ses_d' });
    await d.runDue();
    assert.equal((await store(s).getEndpoint(widgetId, ep.id)).enabled, true, 'not yet 24 hours');
    clock.advance(1_000);
    await svc.emit(widgetId, 'conversation.started', { conversation_id: 'ses_e' });
    await d.runDue();
    const off = await store(s).getEndpoint(widgetId, ep.id);
    assert.equal(off.enabled, false);
    assert.equal(off.disabledReason, 'failing');
    assert.equal(off.failingSince, since);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('a 3xx is a failure and the redirect is not followed', async () => {
  const target = await startReceiver();
  const rx = await startReceiver(() => ({ status: 302, headers: { location: target.url } }));
  const clock = testClock();
  const { s, addEndpoint, post } = await webhookServer({ now: clock.now });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.ended'] });
    await post('conversation.started', { conversation_id: 'ses_1' });
    await post('conversation.ended', { conversation_id: 'ses_1', ended_reason: 'visitor_left', message_count: 3 });
    await rx.waitFor(1);
    await s.webhooks.dispatcher.runDue();
    const [dl] = (await store(s).listDeliveries(ep.id, { limit: 1, before: null })).data;
    assert.equal(dl.status, 'pending');
    assert.equal(dl.lastStatusCode, 302);
    assert.match(dl.lastError, /redirects are not followed/);
    assert.equal(target.received.length, 0);
  } finally {
    await s.stop();
    await rx.close();
    await target.close();
  }
});

test('no 2xx within the timeout is a failure; Retry-After on 429/503 is honoured within bounds', async () => {
  let mode: 'hang' | '429' | '503' = 'hang';
  const rx = await startReceiver(() =>
    mode === 'hang'
      ? { status: 200, hang: true }
      : mode === '429'
        ? { status: 429, headers: { 'retry-after': '600' } }
        : { status: 503, headers: { 'retry-after': '999999' } },
  );
  const clock = testClock();
  // Long enough that the 429 and 503 answers arrive in time on a loaded machine (at 150 ms one did not): only the hang times out.
  const { s, addEndpoint, post } = await webhookServer({ now: clock.now, webhooks: { dispatcher: { timeoutMs: 2000, random: () => 0.5 } } });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['escalation.triggered'] });
    await post('escalation.triggered', { conversation_id: 'ses_1', reason: 'asked for a human' });
    await rx.waitFor(1);
    await s.webhooks.dispatcher.runDue();
    let [dl] = (await store(s).listDeliveries(ep.id, { limit: 1, before: null })).data;
    assert.equal(dl.status, 'pending');
    assert.equal(dl.lastStatusCode, null);
    assert.match(dl.lastError, /timed out after 2000 ms/);
    mode = '429';
    clock.advance(5_000);
    assert.equal(await s.webhooks.dispatcher.runDue(), 1);
    [dl] = (await store(s).listDeliveries(ep.id, { limit: 1, before: null })).data;
    assert.equal(dl.lastStatusCode, 429);
    assert.equal(dl.nextAttemptAt - clock.now(), 600_000, 'Retry-After 600 s outweighs the 5 min step');
    mode = '503';
    clock.advance(600_000);
    assert.equal(await s.webhooks.dispatcher.runDue(), 1);
    [dl] = (await store(s).listDeliveries(ep.id, { limit: 1, before: null })).data;
    assert.equal(dl.lastStatusCode, 503);
    assert.equal(dl.nextAttemptAt - clock.now(), 3_600_000, 'Retry-After is capped at 1 h');
  } finally {
    await s.stop();
    await rx.close();
  }
});
