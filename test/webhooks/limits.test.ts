import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';
import { testClock, webhookServer } from './setup.js';

const LOCAL = 'http://127.0.0.1:9/hook';

test('the documented defaults', () => {
  assert.equal(DEFAULT_LIMITS.endpointsPerWidget, 20);
  assert.deepEqual(DEFAULT_LIMITS.widgetKey, { limit: 600, windowMs: 60_000 });
});

// The issue: 200 endpoints on one victim URL turned 5 events into 1,000 POSTs.
test('a widget has at most 20 webhook endpoints: the 21st is 403 plan_limit naming the limit; deleting one frees a place', async () => {
  const { s, token, widgetId, addEndpoint } = await webhookServer();
  try {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await addEndpoint({ url: `${LOCAL}/${i}`, events: ['lead.captured'] })).id);
    const over = await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: `${LOCAL}/x`, events: ['lead.captured'] } });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /at most 20 webhook endpoints/);
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/webhooks`, { token })).body.length, 20);
    // Another widget has its own 20.
    const other = await s.call('POST', '/v1/widgets', { token, body: { name: 'other' } });
    assert.equal((await s.call('POST', `/v1/widgets/${other.body.id}/webhooks`, { token, body: { url: LOCAL, events: ['lead.captured'] } })).status, 201);
    assert.equal((await s.call('DELETE', `/v1/widgets/${widgetId}/webhooks/${ids[0]}`, { token })).status, 204);
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, { token, body: { url: `${LOCAL}/y`, events: ['lead.captured'] } })).status, 201);
  } finally {
    await s.stop();
  }
});

test('a widget key posts 600 events per minute, then 429 with Retry-After and X-RateLimit-*', async () => {
  const clock = testClock(Date.parse('2026-05-01T10:00:00Z'));
  const { s, widgetId, widgetKey } = await webhookServer({ now: clock.now });
  try {
    const post = (i: number) =>
      s.call('POST', `/v1/widgets/${widgetId}/events`, {
        token: widgetKey,
        body: { event: 'conversation.started', data: { conversation_id: `ses_${i}`, visitor_id: 'vis_1' } },
      });
    // In concurrent batches: the count, not the pace, is under test (the clock stands still).
    for (let batch = 0; batch < 12; batch++) {
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => post(batch * 50 + i)));
      assert.deepEqual(new Set(rs.map((r) => r.status)), new Set([202]));
    }
    const refused = await post(600);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /600 requests per minute per widget key/);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '600');
    assert.equal(refused.headers.get('retry-after'), '60');
    clock.advance(60_000);
    assert.equal((await post(601)).status, 202);
  } finally {
    await s.stop();
  }
});
