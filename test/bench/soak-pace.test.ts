import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calmPace } from '../../bench/soak/run.js';
import { CALM } from '../../bench/soak/traffic.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

// Issue 14: the well-behaved client pulled config 10 times a second, over the server key's
// 120 a minute, so most of its pulls were 429s and the soak measured refusals.
test("issue 14: the soak's well-behaved client stays within every rate limit it is counted against, whatever --calm-rate", () => {
  for (const rate of [1, 30, 300, 1000]) {
    const perMinute = (route: string) =>
      calmPace(
        CALM.find((k) => k.route === route)!,
        rate,
      ) * 60;
    assert.ok(perMinute('GET /v1/config (calm)') <= DEFAULT_LIMITS.serverKey.limit / 2, `pulls at --calm-rate ${rate}`);
    assert.ok(perMinute('GET /v1/servers (calm)') <= DEFAULT_LIMITS.session.limit / 2, `reads at --calm-rate ${rate}`);
    assert.equal(perMinute('POST /tick (calm)'), (rate / CALM.length) * 60, 'ticks are not rate-limited: their share of the rate');
  }
});
