import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { allOff, allOffExcept, find, hostile, req, self } from './sim.js';

// Traits act through utility scores, not only the coward threshold.

test('brave vs timid: outnumbered and hurt, the timid run and the brave hold', () => {
  const brain = new Brain(allOff());
  const pack = [hostile(1, { x: 30, y: 8, z: 0 }), hostile(2, { x: 32, y: 8, z: 0 }), hostile(3, { x: 34, y: 8, z: 0 })];
  const brave = { traits: { neuroticism: 0.1, extraversion: 0.9, agreeableness: 0.4 } };
  const timid = { traits: { neuroticism: 0.6, extraversion: 0.1, agreeableness: 0.6 } };
  assert.equal(brain.tick(req(1, 0, self(undefined, { health: 50 }), { targets: pack }, brave)).intents[0]!.kind, 'Face');
  assert.equal(brain.tick(req(2, 0, self(undefined, { health: 50 }), { targets: pack }, timid)).intents[0]!.kind, 'Flee');
  // One hostile at full health: even the timid fight (BRAIN.md's row).
  assert.equal(brain.tick(req(3, 0, self(), { targets: [pack[0]!] }, timid)).intents[0]!.kind, 'Face');
});

test('careful vs reckless: the careful walk to their goals, the reckless jog', () => {
  const brain = new Brain(allOffExcept('global_goals'));
  const r1 = brain.tick(req(1, 0, self(), {}, { traits: { conscientiousness: 1, neuroticism: 0.5 } }));
  const r2 = brain.tick(req(2, 0, self(), {}, { traits: { conscientiousness: 0, neuroticism: 0 } }));
  assert.equal(find(r1, 'MoveTo')?.speed, 'walk');
  assert.equal(find(r2, 'MoveTo')?.speed, 'jog');
});

test('social vs loner: a social member regroups at a distance where a loner stays out', () => {
  const brain = new Brain(allOffExcept('squads'));
  const social = { traits: { extraversion: 1, agreeableness: 1 } };
  const loner = { traits: { extraversion: 0, agreeableness: 0 } };
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'a' }));
  brain.tick(req(2, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'b' }));
  const s = brain.tick(req(3, 0, self({ x: 35, y: 8, z: 0 }), { squad: 'a' }, social));
  const l = brain.tick(req(4, 0, self({ x: 35, y: 8, z: 0 }), { squad: 'b' }, loner));
  assert.equal(find(s, 'MoveTo')?.speed, 'jog');
  assert.deepEqual(l.intents, [{ kind: 'Idle', reason: 'none' }]);
});
