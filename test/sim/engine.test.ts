import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSUME_RADIUS_M, Simulation } from '../../bench/sim/engine.js';
import { inProcessTransport } from '../../bench/sim/inprocess.js';
import type { Scenario } from '../../bench/sim/scenario.js';
import { scenarioBundle } from '../../bench/sim/run.js';

function quiet(over: Partial<Scenario>): Scenario {
  return { name: 'engine', duration_s: 20, tick_hz: 2, characters: [], ...over };
}

test('a character placed inside a wall starts just outside it (spawned inside walls)', async () => {
  const sc = quiet({
    world: { obstacles: [{ min: { x: -10, z: -2 }, max: { x: 10, z: 2 } }] },
    characters: [{ id: 1, brain: true, pos: { x: 0, y: 0, z: 1.5 } }],
  });
  const seen: string[] = [];
  await new Simulation(sc, inProcessTransport(scenarioBundle(sc)), (l) => seen.push(l.request)).run();
  const first = JSON.parse(seen[0]!).snapshot.self_state.pos;
  assert.ok(first.z > 2, `started at z=${first.z}`);
});

test('drinking at a water point lowers thirst (thirst that never falls)', async () => {
  const well = { x: 0, y: 0, z: 0 };
  const sc = quiet({
    duration_s: 5,
    world: { poi: [{ id: 'well', kind: 'water', pos: well }], thirst_per_s: 0.1 },
    characters: [
      { id: 1, brain: true, pos: { x: CONSUME_RADIUS_M - 1, y: 0, z: 0 }, thirst: 90 },
      { id: 2, brain: true, pos: { x: 200, y: 0, z: 0 }, thirst: 90 },
    ],
    bundle: { policy: { global_goals: false, human_factors: false } },
  });
  const thirst = new Map<number, number>();
  await new Simulation(sc, inProcessTransport(scenarioBundle(sc)), (l) => {
    const s = JSON.parse(l.request).snapshot;
    thirst.set(s.agent, s.self_state.thirst);
  }).run();
  assert.ok(thirst.get(1)! < 50, `thirst at the well ${thirst.get(1)}`);
  assert.ok(thirst.get(2)! > 90, `thirst away from it ${thirst.get(2)}`);
});
