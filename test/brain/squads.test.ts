import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { allOffExcept, bundle, find, hostile, kinds, req, self } from './sim.js';

const enemy = hostile(9, { x: 100, y: 8, z: 0 });

test("one member's sighting becomes the others' lost contact to investigate", () => {
  const brain = new Brain(allOffExcept('squads'));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(2, 0, self({ x: 5, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(3, 0, self({ x: 5, y: 8, z: 5 }), { squad: 'bravo' }));
  brain.drainEvents();
  const spotter = brain.tick(req(1, 1, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha', targets: [enemy] }));
  assert.deepEqual(kinds(spotter).slice(0, 2), ['Face', 'Engage']);
  const mate = brain.tick(req(2, 1, self({ x: 5, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.deepEqual(mate.intents.slice(0, 2), [
    { kind: 'Investigate', at: { x: 100, y: 8, z: 0 } },
    { kind: 'MoveTo', to: { x: 100, y: 8, z: 0 }, speed: 'walk' },
  ]);
  assert.equal(mate.posture, 'crouched');
  const stranger = brain.tick(req(3, 1, self({ x: 5, y: 8, z: 5 }), { squad: 'bravo' }));
  assert.equal(find(stranger, 'Investigate'), undefined, 'other squads do not hear of it');
  assert.deepEqual(brain.drainEvents(), { snap: 1, squad: 1 });
});

test('without the squads policy, sightings stay private', () => {
  const brain = new Brain(allOffExcept());
  brain.tick(req(1, 0, self(), { squad: 'alpha', targets: [enemy] }));
  const mate = brain.tick(req(2, 0, self({ x: 5, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.equal(find(mate, 'Investigate'), undefined);
  assert.equal(brain.drainEvents().squad, undefined);
});

test('a squad does not all flee at once', () => {
  const timid = { traits: { neuroticism: 0.6, agreeableness: 0.6, extraversion: 0 } };
  const threats = [
    hostile(7, { x: 30, y: 8, z: 0 }),
    hostile(8, { x: 32, y: 8, z: 2 }),
    hostile(9, { x: 34, y: 8, z: -2 }),
    hostile(10, { x: 36, y: 8, z: 0 }),
  ];
  const tick = (brain: Brain, agent: number, squad?: string) =>
    brain.tick(req(agent, 1, self({ x: agent, y: 8, z: 0 }, { health: 40 }), { targets: threats, ...(squad ? { squad } : {}) }, timid));
  // Outnumbered and hurt, each of these would run on its own...
  const alone = new Brain(allOffExcept('squads'));
  for (const agent of [1, 2, 3, 4]) assert.equal(tick(alone, agent).intents[0]!.kind, 'Flee');
  // ...but in a squad of four at most half run; the rest hold and fight.
  const brain = new Brain(allOffExcept('squads'));
  for (const agent of [1, 2, 3, 4]) brain.tick(req(agent, 0, self({ x: agent, y: 8, z: 0 }), { squad: 'alpha' }, timid));
  const firsts = [1, 2, 3, 4].map((agent) => tick(brain, agent, 'alpha').intents[0]!.kind);
  assert.deepEqual(firsts, ['Flee', 'Flee', 'Face', 'Face']);
  assert.equal(brain.drainEvents().block, 2);
});

test('members keep loosely together: a straggler regroups toward the others', () => {
  const brain = new Brain(allOffExcept('squads', 'global_goals'));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(2, 0, self({ x: 10, y: 8, z: 0 }), { squad: 'alpha' }));
  const r = brain.tick(req(3, 0, self({ x: 300, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.deepEqual(find(r, 'MoveTo'), { kind: 'MoveTo', to: { x: 5, y: 8, z: 0 }, speed: 'jog' });
  assert.equal(brain.roster().find((s) => s.agent === 3)!.state, 'regrouping');
  assert.equal(brain.roster().find((s) => s.agent === 3)!.goal, 'regroup');
});

test('a dead squadmate frightens the others', () => {
  const brain = new Brain(bundle({ human_factors: false }));
  brain.tick(req(1, 0, self(), { squad: 'alpha' }));
  brain.tick(req(2, 0, self({ x: 3, y: 8, z: 0 }), { squad: 'alpha' }));
  const before = brain.persona(2)!.emotion.fear;
  const dead = brain.tick(req(1, 1, self({ x: 0, y: 8, z: 0 }, { health: 0 }), { squad: 'alpha' }));
  assert.deepEqual(dead.intents, [{ kind: 'Idle', reason: 'dead' }]);
  brain.tick(req(2, 1, self({ x: 3, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.ok(brain.persona(2)!.emotion.fear > before + 0.1);
  // The dead keep being reported for a while: mourned once, not on every tick.
  for (let t = 2; t < 6; t++) {
    brain.tick(req(1, t, self({ x: 0, y: 8, z: 0 }, { health: 0 }), { squad: 'alpha' }));
    brain.tick(req(2, t, self({ x: 3, y: 8, z: 0 }), { squad: 'alpha' }));
  }
  assert.equal(brain.persona(2)!.memory.recent_events.filter((e) => e.kind === 'lost_squadmate').length, 1);
});
