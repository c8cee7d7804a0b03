import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HashGate } from '../../src/identity/hash-gate.js';
import { HttpError } from '../../src/http/errors.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

test('hash gate: never more than `concurrency` at once; waiters run in order; past the queue a 429 before any work', async () => {
  const gate = new HashGate(2, 3);
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const releases: (() => void)[] = [];
  const job = (i: number) => () =>
    new Promise<number>((resolve) => {
      running++;
      most = Math.max(most, running);
      order.push(i);
      releases.push(() => {
        running--;
        resolve(i);
      });
    });
  const runs = [0, 1, 2, 3, 4].map((i) => gate.run(job(i)));
  assert.deepEqual(gate.load, { running: 2, waiting: 3 });
  let started = false;
  await assert.rejects(
    gate.run(async () => {
      started = true;
    }),
    (err: unknown) => err instanceof HttpError && err.code === 'rate_limited' && err.headers?.['retry-after'] === '1',
  );
  assert.equal(started, false);
  while (releases.length > 0) {
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4]);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.equal(most, 2);
  assert.deepEqual(gate.load, { running: 0, waiting: 0 });
});

test('hash gate: a failing hash frees its slot', async () => {
  const gate = new HashGate(1, 0);
  await assert.rejects(
    gate.run(async () => Promise.reject(new Error('boom'))),
    /boom/,
  );
  assert.equal(await gate.run(async () => 7), 7);
});

test('hash gate: the defaults are 2 at a time and a queue of 32', () => {
  assert.equal(DEFAULT_LIMITS.passwordHashConcurrency, 2);
  assert.equal(DEFAULT_LIMITS.passwordHashQueue, 32);
});
