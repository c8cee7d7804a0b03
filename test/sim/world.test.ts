import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineOfSight, segmentHitsBox, stepToward, yawTo } from '../../bench/sim/world.js';

const wall = { min: { x: 10, z: -5 }, max: { x: 12, z: 5 } };
const p = (x: number, z: number) => ({ x, y: 0, z });

test('a wall blocks line of sight across it, not beside it', () => {
  assert.equal(segmentHitsBox(p(0, 0), p(20, 0), wall), true);
  assert.equal(lineOfSight(p(0, 0), p(20, 0), [wall]), false);
  assert.equal(lineOfSight(p(0, 10), p(20, 10), [wall]), true);
  assert.equal(lineOfSight(p(0, 0), p(9, 0), [wall]), true);
});

test('movement goes around solid walls, never through them, and through passable ones', () => {
  let pos = p(0, 0);
  let crossed = false;
  for (let i = 0; i < 200; i++) {
    const next = stepToward(pos, p(20, 0), 1, [wall]);
    if (segmentHitsBox(pos, next, wall)) crossed = true;
    pos = next;
  }
  assert.equal(crossed, false);
  assert.ok(Math.hypot(pos.x - 20, pos.z) < 1, `ended at ${pos.x},${pos.z}`);
  assert.deepEqual(stepToward(p(9, 0), p(13, 0), 4, [{ ...wall, passable: true }]), p(13, 0));
  assert.deepEqual(stepToward(p(0, 0), p(3, 4), 10, []), p(3, 4));
  assert.deepEqual(stepToward(p(0, 0), p(30, 40), 5, []), p(3, 4));
});

test('yaw is 0 toward +z and grows clockwise', () => {
  assert.equal(yawTo(p(0, 0), p(0, 10)), 0);
  assert.equal(yawTo(p(0, 0), p(10, 0)), 90);
  assert.equal(yawTo(p(0, 0), p(0, -10)), 180);
  assert.equal(yawTo(p(0, 0), p(-10, 0)), 270);
});
