import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rateHeaders } from '../../src/http/ratelimit.js';
import { MemoryRateLimiter, describeRate, type Rate } from '../../src/ratelimit/limiter.js';

const PER_MINUTE: Rate = { limit: 100, windowMs: 60_000 };

test('sliding window: no 60 s window ever admits more than the limit, across ring growth and wrap-around', () => {
  let now = 1_000_000;
  const limiter = new MemoryRateLimiter();
  const admitted: number[] = [];
  // Irregular traffic for five minutes, bursts included.
  for (let i = 0; i < 3000; i++) {
    now += i % 37 === 0 ? 4000 : i % 5;
    if (limiter.hit('k', PER_MINUTE, now).allowed) admitted.push(now);
  }
  for (let i = 0; i < admitted.length; i++) {
    const inWindow = admitted.filter((t) => t > admitted[i]! - 60_000 && t <= admitted[i]!).length;
    assert.ok(inWindow <= 100, `window ending ${admitted[i]} admitted ${inWindow}`);
  }
  assert.ok(admitted.length > 400);
});

test('sliding window: refusals are not counted; Retry-After says when a slot frees', () => {
  const limiter = new MemoryRateLimiter();
  const rate = { limit: 3, windowMs: 60_000 };
  for (let i = 0; i < 3; i++) assert.equal(limiter.hit('k', rate, 0).allowed, true);
  const refused = limiter.hit('k', rate, 30_500);
  assert.equal(refused.allowed, false);
  assert.deepEqual(rateHeaders(refused), { 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60', 'retry-after': '30' });
  assert.equal(limiter.hit('k', rate, 60_000).allowed, true);
  assert.equal(limiter.hit('other', rate, 60_000).remaining, 2);
});

test('peek tells the verdict of the next hit and counts nothing', () => {
  const limiter = new MemoryRateLimiter();
  const rate = { limit: 2, windowMs: 1000 };
  assert.deepEqual(limiter.peek('k', rate, 5), { allowed: true, limit: 2, remaining: 2, resetAt: 5, retryAfterMs: 0 });
  limiter.hit('k', rate, 10);
  assert.equal(limiter.peek('k', rate, 20).remaining, 1);
  assert.equal(limiter.peek('k', rate, 20).remaining, 1);
  limiter.hit('k', rate, 20);
  const full = limiter.peek('k', rate, 30);
  assert.equal(full.allowed, false);
  assert.equal(full.retryAfterMs, 980);
  assert.equal(limiter.hit('k', rate, 1010).allowed, true);
});

test('keys of different classes keep their own windows; idle keys are forgotten', () => {
  const limiter = new MemoryRateLimiter();
  limiter.hit('telemetry:1', { limit: 2, windowMs: 1000 }, 0);
  limiter.hit('session:a', { limit: 600, windowMs: 60_000 }, 0);
  assert.equal(limiter.size, 2);
  // Sweeps run at most once a minute: before it, nothing is forgotten.
  limiter.hit('session:b', { limit: 600, windowMs: 60_000 }, 59_999);
  assert.equal(limiter.size, 3);
  // At the next sweep every key idle for its own window goes; the one just hit stays.
  limiter.hit('session:c', { limit: 600, windowMs: 60_000 }, 119_000);
  assert.equal(limiter.size, 2);
});

test('a limit lowered below what a key has counted refuses until enough requests leave the window', () => {
  const limiter = new MemoryRateLimiter();
  for (let t = 0; t < 5; t++) limiter.hit('k', { limit: 10, windowMs: 100 }, t);
  const d = limiter.hit('k', { limit: 2, windowMs: 100 }, 50);
  assert.equal(d.allowed, false);
  // Another is admitted once only one counted request remains: when the one of t = 3 leaves.
  assert.equal(d.resetAt, 103);
  assert.equal(limiter.hit('k', { limit: 2, windowMs: 100 }, 103).allowed, true);
});

test('a rate reads as the messages say it', () => {
  assert.equal(describeRate({ limit: 100, windowMs: 60_000 }), '100 requests per minute');
  assert.equal(describeRate({ limit: 10, windowMs: 15 * 60_000 }, 'failed logins'), '10 failed logins per 15 minutes');
  assert.equal(describeRate({ limit: 2, windowMs: 1000 }, 'reports'), '2 reports per second');
  assert.equal(describeRate({ limit: 5, windowMs: 1500 }), '5 requests per 1500 ms');
});
