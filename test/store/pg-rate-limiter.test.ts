import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PgRateLimiter } from '../../src/store/pg-rate-limiter.js';
import { openPool } from '../../src/store/postgres.js';
import { freshDatabase } from '../helpers/postgres.js';

const rate = { limit: 10, windowMs: 60_000 };

test("three replicas share one limit: after a sync each counts the others' hits", async () => {
  const url = await freshDatabase();
  const pools = [openPool(url), openPool(url), openPool(url)];
  let now = Date.parse('2026-04-01T10:00:00Z');
  const clock = () => now;
  // syncMs very long: the test syncs by hand, so nothing depends on timing.
  const limiters = await Promise.all(pools.map((p, i) => PgRateLimiter.open(p, { replicaId: `r${i}`, now: clock, syncMs: 3_600_000 })));
  try {
    for (let i = 0; i < 9; i++) assert.equal(limiters[i % 3]!.hit('session:a', rate, now).allowed, true);
    // Two rounds: the first writes every replica's hits, the second reads them all.
    for (const l of limiters) await l.sync();
    for (const l of limiters) await l.sync();
    const tenth = limiters[0]!.hit('session:a', rate, now);
    assert.deepEqual([tenth.allowed, tenth.limit, tenth.remaining], [true, 10, 0]);
    await limiters[0]!.sync();
    await limiters[1]!.sync();
    const refused = limiters[1]!.hit('session:a', rate, now);
    assert.equal(refused.allowed, false);
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= rate.windowMs);
    assert.equal(limiters[2]!.peek('session:a', rate, now).allowed, true, 'not synced yet: its view lags by one sync');
    // Another key has its own budget.
    assert.equal(limiters[1]!.hit('session:b', rate, now).allowed, true);
    // Once the window has passed, the others' counts no longer bind.
    now += rate.windowMs + 1;
    assert.equal(limiters[1]!.hit('session:a', rate, now).allowed, true);
  } finally {
    for (const l of limiters) await l.close();
    await Promise.all(pools.map((p) => p.end()));
  }
});

test('a replica alone on the database limits exactly like the in-memory limiter', async () => {
  const pool = openPool(await freshDatabase());
  const now = Date.parse('2026-04-01T10:00:00Z');
  const limiter = await PgRateLimiter.open(pool, { now: () => now, syncMs: 3_600_000 });
  try {
    const results = Array.from({ length: 12 }, () => limiter.hit('k', rate, now).allowed);
    assert.deepEqual(results, [...Array(10).fill(true), false, false]);
    await limiter.sync();
    assert.equal(limiter.hit('k', rate, now).allowed, false);
  } finally {
    await limiter.close();
    await pool.end();
  }
});

test("the room a replica leaves itself follows each read of the others' counts and the rate asked for", async () => {
  const url = await freshDatabase();
  const pools = [openPool(url), openPool(url)];
  const now = Date.parse('2026-04-01T10:00:00Z');
  const [a, b] = await Promise.all(pools.map((p, i) => PgRateLimiter.open(p, { replicaId: `r${i}`, now: () => now, syncMs: 3_600_000 })));
  try {
    const synced = async () => {
      for (const l of [b!, a!]) await l.sync();
      await a!.sync();
    };
    // The key is one this replica has hit (only those are read): one of its own.
    assert.equal(a!.hit('k', rate, now).allowed, true);
    for (let i = 0; i < 4; i++) b!.hit('k', rate, now);
    await synced();
    assert.deepEqual([a!.peek('k', rate, now).limit, a!.peek('k', rate, now).remaining], [10, 5]);
    for (let i = 0; i < 2; i++) b!.hit('k', rate, now);
    await synced();
    assert.equal(a!.peek('k', rate, now).remaining, 3, 'the others counted 6 now');
    // The same key asked at a lower rate: the room is that rate less the others' 6.
    const lower = a!.hit('k', { limit: 8, windowMs: rate.windowMs }, now);
    assert.deepEqual([lower.allowed, lower.limit, lower.remaining], [true, 8, 0]);
    const first = a!.hit('k', rate, now);
    const second = a!.hit('k', rate, now);
    assert.notEqual(first, second, 'each decision is its own object');
    assert.deepEqual([first.remaining, second.remaining], [1, 0]);
    assert.equal(a!.hit('k', rate, now).allowed, false);
  } finally {
    for (const l of [a!, b!]) await l.close();
    await Promise.all(pools.map((p) => p.end()));
  }
});
