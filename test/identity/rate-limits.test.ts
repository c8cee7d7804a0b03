import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

test('the documented defaults', () => {
  assert.deepEqual(DEFAULT_LIMITS.session, { limit: 600, windowMs: 60_000 });
  assert.deepEqual(DEFAULT_LIMITS.apiKey, { limit: 100, windowMs: 60_000 });
  assert.deepEqual(DEFAULT_LIMITS.tenantApiKeys, { limit: 300, windowMs: 60_000 });
  assert.deepEqual(DEFAULT_LIMITS.loginFailuresPerEmail, { limit: 10, windowMs: 15 * 60_000 });
  assert.deepEqual(DEFAULT_LIMITS.loginAttemptsPerAddress, { limit: 60, windowMs: 60_000 });
  assert.equal(DEFAULT_LIMITS.liveApiKeys, 20);
});

test('a session makes 600 requests per minute, then 429 with Retry-After and X-RateLimit-*; another session has its own budget', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const a = await tenantSession(s, 'pro');
    const b = await tenantSession(s, 'pro');
    // In concurrent batches: the count, not the pace, is under test (the clock stands still).
    for (let batch = 0; batch < 12; batch++) {
      const rs = await Promise.all(Array.from({ length: 50 }, () => s.call('GET', '/v1/auth/me', { token: a.token })));
      assert.deepEqual(new Set(rs.map((r) => r.status)), new Set([200]));
    }
    const refused = await s.call('GET', '/v1/servers', { token: a.token });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /600 requests per minute per session/);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '600');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal((await s.call('GET', '/v1/auth/me', { token: b.token })).status, 200);
    now += 60_000;
    assert.equal((await s.call('GET', '/v1/auth/me', { token: a.token })).status, 200);
  } finally {
    await s.stop();
  }
});

// The issue: the per-key 100/min limit was bypassed by minting more keys.
test('API keys: 300 requests per minute per tenant across all its keys, whatever the number of keys', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s, 'agency');
    const keys: string[] = [];
    for (let i = 0; i < 4; i++) keys.push((await s.call('POST', '/v1/api-keys', { token, body: { name: `k${i}` } })).body.key);
    for (let batch = 0; batch < 6; batch++) {
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => s.call('GET', '/v1/properties', { token: keys[i % 4] })));
      for (const r of rs) {
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('x-ratelimit-limit'), '100');
      }
    }
    const refused = await s.call('GET', '/v1/properties', { token: keys[3] });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /300 requests per minute per tenant, across all its API keys/);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '300');
    assert.equal(refused.headers.get('retry-after'), '60');
    // A fresh key buys nothing.
    const fifth = (await s.call('POST', '/v1/api-keys', { token, body: { name: 'k5' } })).body.key;
    assert.equal((await s.call('GET', '/v1/properties', { token: fifth })).status, 429);
    // Another tenant is not affected.
    const other = await tenantSession(s, 'agency');
    const otherKey = (await s.call('POST', '/v1/api-keys', { token: other.token, body: { name: 'x' } })).body.key;
    assert.equal((await s.call('GET', '/v1/properties', { token: otherKey })).status, 200);
    now += 60_000;
    assert.equal((await s.call('GET', '/v1/properties', { token: keys[0] })).status, 200);
  } finally {
    await s.stop();
  }
});

test('live API keys: at most 20 per tenant (403 plan_limit naming the limit); a revoked key frees a place', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await s.call('POST', '/v1/api-keys', { token, body: { name: `k${i}` } });
      assert.equal(r.status, 201);
      ids.push(r.body.id);
    }
    const over = await s.call('POST', '/v1/api-keys', { token, body: { name: 'one too many' } });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /at most 20 live API keys/);
    assert.equal((await s.call('GET', '/v1/api-keys', { token })).body.length, 20);
    assert.equal((await s.call('DELETE', `/v1/api-keys/${ids[0]}`, { token })).status, 204);
    assert.equal((await s.call('POST', '/v1/api-keys', { token, body: { name: 'replacement' } })).status, 201);
  } finally {
    await s.stop();
  }
});
