import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';

const RATE_HEADERS = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

// The issue: 200 wrong passwords in 17 s, no lockout.
test('login: 10 failed attempts per e-mail per 15 minutes, then 429 even for the right password, until the window passes', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { email } = await tenantSession(s, 'pro', 'victim@example.com');
    for (let i = 1; i <= 10; i++) {
      now += 1000;
      const r = await s.call('POST', '/v1/auth/login', { body: { email, password: `guess number ${i}` } });
      assert.equal(r.status, 401, `attempt ${i}`);
    }
    now += 1000;
    const locked = await s.call('POST', '/v1/auth/login', { body: { email: email.toUpperCase(), password: 'correct horse battery' } });
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error.code, 'rate_limited');
    assert.match(locked.body.error.message, /10 failed logins per 15 minutes per e-mail address/);
    for (const h of RATE_HEADERS) assert.ok(locked.headers.get(h), h);
    assert.equal(locked.headers.get('x-ratelimit-limit'), '10');
    // The first failure (at +1 s) leaves the window 15 minutes later.
    assert.equal(locked.headers.get('retry-after'), String(15 * 60 - 10));
    // Another e-mail is not affected.
    const other = await tenantSession(s, 'pro', 'bystander@example.com');
    assert.ok(other.token);
    now += 15 * 60_000;
    const ok = await s.call('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } });
    assert.equal(ok.status, 200);
  } finally {
    await s.stop();
  }
});

test('login: 60 attempts per client address per minute, whatever the e-mail', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    // Malformed attempts count too (and cost no hashing, which keeps this test quick).
    for (let i = 1; i <= 58; i++) {
      const r = await s.call('POST', '/v1/auth/login', { body: { email: `nobody${i}@example.com` } });
      assert.equal(r.status, 422, `attempt ${i}`);
    }
    for (let i = 59; i <= 60; i++) {
      const r = await s.call('POST', '/v1/auth/login', { body: { email: `nobody${i}@example.com`, password: 'whatever it is' } });
      assert.equal(r.status, 401, `attempt ${i}`);
    }
    const refused = await s.call('POST', '/v1/auth/login', { body: { email: 'someone@example.com', password: 'whatever it is' } });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.match(refused.body.error.message, /60 login attempts per minute per client address/);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '60');
    assert.equal(refused.headers.get('retry-after'), '60');
    // Refused before the body is read.
    const malformed = await s.call('POST', '/v1/auth/login', { body: '{' });
    assert.equal(malformed.status, 429);
    now += 60_000;
    assert.equal((await s.call('POST', '/v1/auth/login', { body: { email: 'someone@example.com', password: 'whatever it is' } })).status, 401);
  } finally {
    await s.stop();
  }
});

// The issue: 64 connections flooding /v1/auth/login starved libuv's thread pool (scrypt runs
// there), and an asset download waited 22–40 s behind them.
test('login flood: at most 2 password hashes run at once; past the bounded queue the rest are 429 at once', async () => {
  const s = await startTestServer({ limits: { passwordHashQueue: 4, loginAttemptsPerAddress: { limit: 1000, windowMs: 60_000 } } });
  try {
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) => s.call('POST', '/v1/auth/login', { body: { email: `flood${i}@example.com`, password: 'not the password' } })),
    );
    const statuses = flood.map((r) => r.status);
    const refused = flood.filter((r) => r.status === 429);
    assert.ok(refused.length > 0, `some of the flood must be refused: ${statuses.join(',')}`);
    for (const r of refused) {
      assert.equal(r.body.error.code, 'rate_limited');
      assert.equal(r.headers.get('retry-after'), '1');
    }
    assert.ok(
      statuses.every((c) => c === 401 || c === 429),
      statuses.join(','),
    );
    assert.ok(statuses.filter((c) => c === 401).length >= 6, 'two running and four queued are answered');
    // The server is not stuck: the queue drained.
    const t = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: { name: 'after', plan: 'pro' } });
    assert.equal(t.status, 201);
  } finally {
    await s.stop();
  }
});
