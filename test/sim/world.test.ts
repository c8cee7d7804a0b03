import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CORNER_MARGIN_M, lineOfSight, outsideWalls, segmentHitsBox, stepToward, yawTo } from '../../bench/sim/world.js';
import { crowdScenario } from '../../bench/sim/crowd.js';

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

test('a destination inside a wall is reached at the nearest point outside it (the character no longer stands still)', () => {
  let pos = p(0, 2);
  for (let i = 0; i < 50; i++) pos = stepToward(pos, p(10.4, 1), 1, [wall]);
  assert.ok(Math.abs(pos.x - (10 - CORNER_MARGIN_M)) < 1e-9 && Math.abs(pos.z - 1) < 1e-9, `ended at ${pos.x},${pos.z}`);
  assert.deepEqual(outsideWalls(p(11.8, 0), [wall]), p(12 + CORNER_MARGIN_M, 0));
  assert.deepEqual(outsideWalls(p(11.8, 0), [{ ...wall, passable: true }]), p(11.8, 0));
});

test('a character standing on a wall corner keeps going around it (paths stuck on corners)', () => {
  // Start exactly on the path node at the wall's corner, the spot where walkers used to freeze.
  let pos = p(10 - CORNER_MARGIN_M, -5 - CORNER_MARGIN_M);
  for (let i = 0; i < 60; i++) pos = stepToward(pos, p(20, 0), 0.7, [wall]);
  assert.ok(Math.hypot(pos.x - 20, pos.z) < 1e-6, `ended at ${pos.x},${pos.z}`);
});

test('the crowd scenario puts no character or waypoint inside a wall', () => {
  const sc = crowdScenario();
  const walls = sc.world!.obstacles!;
  for (const c of sc.characters) {
    for (const q of [c.pos, ...(c.route ?? [])]) assert.deepEqual(outsideWalls(q, walls), q, `character ${c.id} at ${q.x},${q.z}`);
  }
});
