import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './receiver.js';
import { testClock, webhookServer } from './setup.js';
import { DELIVERY_CONCURRENCY_PER_ENDPOINT } from '../../src/webhooks/schedule.js';

test('the delivery log pages with a cursor and shows attempts; a failed delivery can be retried by hand', async () => {
  const rx = await startReceiver(() => ({ status: 500, body: 'x'.repeat(5000) }));
  const clock = testClock();
  const { s, token, widgetId, addEndpoint } = await webhookServer({ now: clock.now, webhooks: { dispatcher: { retryDelays: [] } } });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    await Promise.all([1, 2, 3].map((i) => s.webhooks.service.emit(widgetId, 'conversation.started', { conversation_id: `ses_${i}` })));
    await s.webhooks.dispatcher.runDue();
    const base = `/v1/widgets/${widgetId}/webhooks/${ep.id}/deliveries`;
    const p1 = await s.call('GET', `${base}?limit=2`, { token });
    assert.equal(p1.status, 200);
    assert.equal(p1.body.data.length, 2);
    assert.equal(typeof p1.body.next_cursor, 'string');
    const p2 = await s.call('GET', `${base}?limit=2&cursor=${p1.body.next_cursor}`, { token });
    assert.equal(p2.body.data.length, 1);
    assert.equal(p2.body.next_cursor, null);
    const all = [...p1.body.data, ...p2.body.data];
    assert.equal(new Set(all.map((d: any) => d.id)).size, 3);
    assert.ok(all.every((d: any) => d.status === 'failed' && d.attempts === 1 && d.last_status_code === 500));
    assert.equal((await s.call('GET', `${base}?cursor=nonsense`, { token })).status, 400);

    const one = await s.call('GET', `${base}/${all[0].id}`, { token });
    assert.equal(one.status, 200);
    assert.equal(one.body.attempt_log.length, 1);
    const a = one.body.attempt_log[0];
    assert.equal(a.status_code, 500);
    assert.equal(a.response_excerpt.length, 4096, 'the first 4 KB of the answer is kept');
    assert.equal(one.body.payload, JSON.stringify({ event: 'conversation.started', widget_id: widgetId, data: JSON.parse(one.body.payload).data }));
    assert.match(one.body.payload, /"conversation_id":"ses_[123]"/, 'the request body as sent');
    assert.equal(typeof a.duration_ms, 'number');
    assert.equal(a.started_at, new Date(clock.now()).toISOString());
    assert.equal(a.outcome, 'failed');
    assert.equal((await s.call('GET', `${base}/dlv_nope`, { token })).status, 404);

    rx.setResponder(() => ({ status: 200, body: 'thanks' }));
    const retry = await s.call('POST', `${base}/${all[0].id}/retry`, { token });
    assert.equal(retry.status, 202);
    assert.equal(retry.body.status, 'pending');
    await s.webhooks.dispatcher.runDue();
    const done = await s.call('GET', `${base}/${all[0].id}`, { token });
    assert.equal(done.body.status, 'succeeded');
    assert.equal(done.body.attempt_log.length, 2);
    assert.equal(done.body.attempt_log[1].response_excerpt, 'thanks');
    assert.equal((await s.call('GET', `${base}?status=failed`, { token })).body.data.length, 2);

    // recover {since}: only failures of events created at or after `since`.
    const rec = await s.call('POST', `/v1/widgets/${widgetId}/webhooks/${ep.id}/recover`, { token, body: { since: new Date(clock.now() + 1).toISOString() } });
    assert.equal(rec.body.requeued, 0);
    const rec2 = await s.call('POST', `/v1/widgets/${widgetId}/webhooks/${ep.id}/recover`, { token, body: { since: new Date(clock.now()).toISOString() } });
    assert.equal(rec2.body.requeued, 2);
    await s.webhooks.dispatcher.runDue();
    assert.equal((await s.call('GET', `${base}?status=succeeded`, { token })).body.data.length, 3);
    const bad = await s.call('POST', `/v1/widgets/${widgetId}/webhooks/${ep.id}/recover`, { token, body: { since: 'yesterday' } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.details[0].path, 'since');
  } finally {
    await s.stop();
    await rx.close();
  }
});

test("a delivery that succeeds at its first attempt shows that attempt in the log: status, the answer's first 4 KB and times", async () => {
  const rx = await startReceiver(() => ({ status: 201, body: 'y'.repeat(5000) }));
  const clock = testClock();
  const { s, token, widgetId, addEndpoint } = await webhookServer({ now: clock.now });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    await s.webhooks.service.emit(widgetId, 'conversation.started', { conversation_id: 'ses_once' });
    await s.webhooks.dispatcher.runDue();
    const base = `/v1/widgets/${widgetId}/webhooks/${ep.id}/deliveries`;
    const [d] = (await s.call('GET', base, { token })).body.data;
    assert.deepEqual([d.status, d.attempts, d.last_status_code, d.last_error], ['succeeded', 1, 201, null]);
    const one = await s.call('GET', `${base}/${d.id}`, { token });
    assert.equal(one.status, 200);
    assert.equal(one.body.attempt_log.length, 1);
    const a = one.body.attempt_log[0];
    assert.deepEqual(
      [a.status_code, a.response_excerpt, a.error, a.outcome, a.started_at, typeof a.duration_ms],
      [201, 'y'.repeat(4096), null, 'succeeded', new Date(clock.now()).toISOString(), 'number'],
    );
    assert.deepEqual(Object.keys(a).sort(), ['duration_ms', 'error', 'outcome', 'response_excerpt', 'started_at', 'status_code']);
    assert.match(one.body.payload, /"conversation_id":"ses_once"/);
    // Kept in the delivery's own row: no attempt row was written for it.
    assert.equal((s.db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get() as { n: number }).n, 0);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('one slow receiver holds at most DELIVERY_CONCURRENCY_PER_ENDPOINT (8) deliveries in flight and does not starve another endpoint', async () => {
  const slow = await startReceiver(() => ({ status: 200, hang: true }));
  const fast = await startReceiver();
  const { s, widgetId, addEndpoint } = await webhookServer();
  try {
    await addEndpoint({ url: slow.url, events: ['conversation.started'] });
    const quick = await addEndpoint({ url: fast.url, events: ['escalation.triggered'] });
    const svc = s.webhooks.service;
    await Promise.all(Array.from({ length: 20 }, (_, i) => svc.emit(widgetId, 'conversation.started', { conversation_id: `ses_s${i}` })));
    await slow.waitFor(DELIVERY_CONCURRENCY_PER_ENDPOINT);
    await Promise.all(Array.from({ length: 10 }, (_, i) => svc.emit(widgetId, 'escalation.triggered', { conversation_id: `ses_f${i}` })));
    await fast.waitFor(10);
    assert.equal(slow.received.length, DELIVERY_CONCURRENCY_PER_ENDPOINT, 'per-endpoint limit');
    const [slowEp] = (await svc.store.listEndpoints(widgetId as never)).data.filter((e) => e.id !== quick.id);
    const inflight = await svc.store.listDeliveries(slowEp!.id, { limit: 100, before: null, status: 'inflight' });
    assert.equal(inflight.data.length, DELIVERY_CONCURRENCY_PER_ENDPOINT);
    slow.setResponder(() => ({ status: 200 }));
    slow.releaseHanging();
    await slow.waitFor(20);
    await s.webhooks.dispatcher.runDue();
    assert.equal(new Set(slow.received.map((r) => r.headers['x-service-delivery'])).size, 20);
  } finally {
    await s.stop();
    await slow.close();
    await fast.close();
  }
});

test('retention: finished deliveries, their attempts and events older than 30 days are pruned; pending ones stay', async () => {
  const rx = await startReceiver();
  const clock = testClock();
  const { s, widgetId, addEndpoint } = await webhookServer({ now: clock.now });
  try {
    const ok = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    const down = await addEndpoint({ url: 'http://127.0.0.1:9/closed', events: ['conversation.started'] });
    await s.webhooks.service.emit(widgetId, 'conversation.started', { conversation_id: 'ses_old' });
    await s.webhooks.dispatcher.runDue();
    clock.advance(30 * 86_400_000 + 1);
    const pruned = await s.webhooks.prune();
    assert.deepEqual(pruned, { deliveries: 1, events: 0 }, 'the pending retry to the closed port keeps its event');
    assert.equal((await s.webhooks.service.store.listDeliveries(ok.id as never, { limit: 10, before: null })).data.length, 0);
    assert.equal((await s.webhooks.service.store.listDeliveries(down.id as never, { limit: 10, before: null })).data.length, 1);
    assert.equal((s.db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get() as { n: number }).n, 1);
  } finally {
    await s.stop();
    await rx.close();
  }
});
