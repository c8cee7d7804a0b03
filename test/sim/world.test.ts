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

test('movement stops short of walls and never passes through', () => {
  let pos = p(0, 0);
  for (let i = 0; i < 100; i++) pos = stepToward(pos, p(20, 0), 1, [wall]);
  assert.ok(pos.x < 10, `ended at ${pos.x}`);
  assert.deepEqual(stepToward(p(0, 0), p(3, 4), 10, []), p(3, 4));
  assert.deepEqual(stepToward(p(0, 0), p(30, 40), 5, []), p(3, 4));
});

test('yaw is 0 toward +z and grows clockwise', () => {
  assert.equal(yawTo(p(0, 0), p(0, 10)), 0);
  assert.equal(yawTo(p(0, 0), p(10, 0)), 90);
  assert.equal(yawTo(p(0, 0), p(0, -10)), 180);
  assert.equal(yawTo(p(0, 0), p(-10, 0)), 270);
});
