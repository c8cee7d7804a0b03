import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Snapshot, TickResponse } from '../../brain/index.js';
import { FigureCounter } from '../../bench/sim/figures.js';

function snap(agent: number, t: number): Snapshot {
  return {
    agent,
    time_s: t,
    self_state: { pos: { x: agent * 100, y: 0, z: 0 }, heading_deg: 0, health: 100, blood: 5000, hunger: 0, thirst: 0, has_weapon: false, ammo: 0 },
    targets: [{ id: 900, kind: 'player', pos: { x: agent * 100, y: 0, z: 30 }, hostile: true, visible: true }],
  } as Snapshot;
}

test('the spread of flight lengths leaves out flights the end of the run cut short; the median keeps them', () => {
  const f = new FigureCounter(2);
  // Characters 1-5 flee for 5, 6, 7, 8 and 9 s; 6-8 take flight together and are still running when the run ends at 20 s.
  const ends = new Map([
    [1, 5],
    [2, 6],
    [3, 7],
    [4, 8],
    [5, 9],
  ]);
  for (let t = 0; t < 20; t += 0.5) {
    for (let id = 1; id <= 8; id++) {
      const fleeing = t < (ends.get(id) ?? Infinity);
      const reply: TickResponse = {
        agent: id as TickResponse['agent'],
        posture: 'standing',
        intents: fleeing ? [{ kind: 'Flee', from: 900 }] : [{ kind: 'Idle', reason: 'none' }],
      };
      f.add(t, snap(id, t), reply, JSON.stringify(reply));
    }
  }
  const out = f.finish();
  assert.equal(out.flights, 8);
  // Whole flights: five, one length each. Counted whole, the three cut at 20 s would be 3 of 8 in one bin.
  assert.equal(out.flight_modal_share, 0.2);
  assert.equal(out.median_flight_s, 8.5);
});
