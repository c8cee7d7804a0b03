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
