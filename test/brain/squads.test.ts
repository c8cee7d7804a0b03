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

test('members keep together: a straggler regroups toward its leader, the one destination of the squad', () => {
  const brain = new Brain(allOffExcept('squads', 'global_goals'));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(2, 0, self({ x: 10, y: 8, z: 0 }), { squad: 'alpha' }));
  const r = brain.tick(req(3, 0, self({ x: 300, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.deepEqual(find(r, 'MoveTo'), { kind: 'MoveTo', to: { x: 0, y: 8, z: 0 }, speed: 'jog' });
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

test('with human_factors a straggler far from its leader sprints back, and jogs the last stretch', () => {
  const brain = new Brain(bundle({ emotes: false }));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(2, 0, self({ x: 5, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.equal(find(brain.tick(req(3, 0, self({ x: 200, y: 8, z: 0 }), { squad: 'alpha' })), 'MoveTo')?.speed, 'sprint');
  assert.equal(find(brain.tick(req(3, 1, self({ x: 30, y: 8, z: 0 }), { squad: 'alpha' })), 'MoveTo')?.speed, 'jog');
});

test('a leader left behind keeps its route for 10 s, then turns back to its squad', () => {
  const brain = new Brain(allOffExcept('squads', 'global_goals'));
  const route = [
    { x: 0, y: 8, z: 0 },
    { x: 0, y: 8, z: 200 },
  ];
  const members = (t: number) => {
    brain.tick(req(2, t, self({ x: 0, y: 8, z: -100 }), { squad: 'alpha', targets: [hostile(9, { x: 0, y: 8, z: -150 })] }));
    brain.tick(req(3, t, self({ x: 3, y: 8, z: -100 }), { squad: 'alpha', targets: [hostile(9, { x: 0, y: 8, z: -150 })] }));
  };
  // A coward leader: it does not go searching for its squad's contact.
  const leader = (t: number) => brain.tick(req(1, t, self({ x: 0, y: 8, z: 50 }), { squad: 'alpha', route }, { coward: true }));
  members(0);
  for (let t = 0; t < 10; t++) {
    leader(t);
    members(t);
    assert.equal(brain.roster().find((r) => r.agent === 1)!.state, 'patrolling', `t=${t}`);
  }
  const back = leader(10);
  assert.deepEqual(find(back, 'MoveTo'), { kind: 'MoveTo', to: { x: 1.5, y: 8, z: -100 }, speed: 'jog' });
  assert.equal(brain.roster().find((r) => r.agent === 1)!.state, 'regrouping');
  // Back with a squad that is still fighting, it stands by instead of walking off again.
  members(11);
  const by = brain.tick(req(1, 12, self({ x: 1, y: 8, z: -95 }), { squad: 'alpha', route }, { coward: true }));
  assert.deepEqual(by.intents, [{ kind: 'Idle', reason: 'with_squad' }]);
});

test('a leader that has gone silent hands the squad to the next member', () => {
  const brain = new Brain(allOffExcept('squads', 'global_goals'));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(2, 0, self({ x: 100, y: 8, z: 0 }), { squad: 'alpha' }));
  brain.tick(req(3, 0, self({ x: 300, y: 8, z: 0 }), { squad: 'alpha' }));
  // Agent 1 stops ticking (dead or gone, as far as the brain can tell): 3 now keeps with 2.
  brain.tick(req(2, 10, self({ x: 100, y: 8, z: 0 }), { squad: 'alpha' }));
  const r = brain.tick(req(3, 10, self({ x: 300, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.deepEqual(find(r, 'MoveTo'), { kind: 'MoveTo', to: { x: 100, y: 8, z: 0 }, speed: 'jog' });
  // Back, it leads again.
  brain.tick(req(1, 11, self({ x: 0, y: 8, z: 0 }), { squad: 'alpha' }));
  assert.deepEqual(find(brain.tick(req(3, 11, self({ x: 300, y: 8, z: 0 }), { squad: 'alpha' })), 'MoveTo')?.to, { x: 0, y: 8, z: 0 });
});

test('a squad flees along one bearing: members running from the same threat do not scatter', () => {
  const unarmed = { has_weapon: false };
  const threat = hostile(9, { x: 0, y: 8, z: 30 });
  const heading = (brain: Brain, agent: number, pos: { x: number; y: number; z: number }, squad?: string) => {
    const r = brain.tick(req(agent, 1, self(pos, unarmed), { targets: [threat], ...(squad ? { squad } : {}) }));
    assert.equal(kinds(r)[0], 'Flee');
    const to = find(r, 'MoveTo')!.to;
    return Math.atan2(to.x - pos.x, to.z - pos.z);
  };
  const a = { x: -10, y: 8, z: 0 };
  const b = { x: 10, y: 8, z: 0 };
  // Each walked up from 5 m back, so neither starts its flight "blocked".
  const before = (p: { x: number; y: number; z: number }) => self({ x: p.x, y: 8, z: p.z + 5 }, unarmed);
  const alone = new Brain(bundle({ emotes: false }));
  alone.tick(req(1, 0, before(a)));
  alone.tick(req(2, 0, before(b)));
  // Alone, each runs straight away from the threat: the two bearings part by about 37 degrees.
  assert.ok(Math.abs(heading(alone, 1, a) - heading(alone, 2, b)) > 0.6);
  // In one squad the second takes the first's way out.
  const brain = new Brain(bundle({ emotes: false }));
  brain.tick(req(1, 0, before(a), { squad: 'alpha' }));
  brain.tick(req(2, 0, before(b), { squad: 'alpha' }));
  assert.ok(Math.abs(heading(brain, 1, a, 'alpha') - heading(brain, 2, b, 'alpha')) < 1e-9);
  // A lone member of a squad keeps its own bearing: nobody to flee with.
  const solo = new Brain(bundle({ emotes: false }));
  solo.tick(req(1, 0, before(a), { squad: 'solo' }));
  assert.equal(heading(solo, 1, a, 'solo'), heading(alone, 1, a));
});
