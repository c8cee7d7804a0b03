import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlidingWindowLimiter, rateHeaders } from '../../src/video/ratelimit.js';

test('sliding window: no 60 s window ever admits more than the limit, across ring growth and wrap-around', () => {
  let now = 1_000_000;
  const limiter = new SlidingWindowLimiter({ limit: 100, windowMs: 60_000, now: () => now });
  const admitted: number[] = [];
  // Irregular traffic for five minutes, bursts included.
  for (let i = 0; i < 3000; i++) {
    now += i % 37 === 0 ? 4000 : i % 5;
    if (limiter.take('k').allowed) admitted.push(now);
  }
  for (let i = 0; i < admitted.length; i++) {
    const inWindow = admitted.filter((t) => t > admitted[i]! - 60_000 && t <= admitted[i]!).length;
    assert.ok(inWindow <= 100, `window ending ${admitted[i]} admitted ${inWindow}`);
  }
  assert.ok(admitted.length > 400);
});

test('sliding window: refusals are not counted; Retry-After says when a slot frees', () => {
  let now = 0;
  const limiter = new SlidingWindowLimiter({ limit: 3, windowMs: 60_000, now: () => now });
  for (let i = 0; i < 3; i++) assert.equal(limiter.take('k').allowed, true);
  now = 30_500;
  const refused = limiter.take('k');
  assert.equal(refused.allowed, false);
  assert.deepEqual(rateHeaders(refused), { 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60', 'retry-after': '30' });
  now = 60_000;
  assert.equal(limiter.take('k').allowed, true);
  assert.equal(limiter.take('other').remaining, 2);
});
