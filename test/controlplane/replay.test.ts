import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayGuard } from '../../src/controlplane/replay.js';

test('ReplayGuard: a signature is refused the second time; seconds outside the window are forgotten', () => {
  const g = new ReplayGuard(300, 100);
  assert.equal(g.remember(1000, 1, 1000), true);
  assert.equal(g.remember(1000, 1, 1000), false);
  assert.equal(g.remember(1001, 1, 1000), true, 'same slot, another second: another signature');
  assert.equal(g.remembered, 2);
  // A new second 301 s later drops the buckets that the timestamp check already rejects.
  assert.equal(g.remember(1301, 9, 1301), true);
  assert.equal(g.remembered, 2);
});

test('ReplayGuard: past its bound it forgets the oldest second first', () => {
  const g = new ReplayGuard(300, 3);
  g.remember(10, 1, 10);
  g.remember(11, 1, 10);
  g.remember(11, 2, 10);
  g.remember(12, 1, 10);
  assert.equal(g.remembered, 3);
  assert.equal(g.remember(10, 1, 10), true, 'second 10 was forgotten');
  assert.equal(g.remember(12, 1, 10), false);
});

test('ReplayGuard: many signatures in one second (the table grows) are each remembered exactly once', () => {
  const g = new ReplayGuard(300, 1_000_000);
  const slots = Array.from({ length: 5000 }, (_, i) => (i * 2654435761) % 2 ** 52);
  assert.ok(slots.every((s) => g.remember(7, s, 7)));
  assert.ok(slots.every((s) => !g.remember(7, s, 7)));
  assert.equal(g.remembered, 5000);
  assert.equal(slots[0], 0, 'slot 0 is a value like any other');
  assert.equal(g.remember(7, 2 ** 52 - 1, 7), true, 'the largest slot fits');
  assert.equal(g.remember(7, 2 ** 52 - 1, 7), false);
});
