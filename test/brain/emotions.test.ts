import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { allOffExcept, bundle, find, hostile, req, self } from './sim.js';

const steady = { traits: { neuroticism: 0.5, agreeableness: 0.5, afk_proneness: 0, break_proneness: 0 } };

test('taking damage raises fear and anger, which decay by game time', () => {
  const brain = new Brain(allOffExcept('emotional_events'));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { health: 100 }), {}, steady));
  const calm = brain.persona(1)!.emotion;
  brain.tick(req(1, 1, self({ x: 0, y: 8, z: 0 }, { health: 70 }), {}, steady));
  const hurt = brain.persona(1)!.emotion;
  assert.ok(hurt.fear > calm.fear + 0.2 && hurt.anger > calm.anger + 0.2 && hurt.calm < calm.calm, JSON.stringify({ calm, hurt }));
  brain.tick(req(1, 31, self({ x: 0, y: 8, z: 0 }, { health: 70 }), {}, steady));
  const later = brain.persona(1)!.emotion;
  assert.ok(later.fear < hurt.fear && later.anger < hurt.anger, 'a half-life later');
  // Healing is not damage.
  brain.tick(req(1, 32, self({ x: 0, y: 8, z: 0 }, { health: 90 }), {}, steady));
  assert.ok(brain.persona(1)!.emotion.fear <= later.fear);
});

test('a friendly player nearby calms', () => {
  const brain = new Brain(allOffExcept('emotional_events'));
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { health: 60 }), {}, steady));
  brain.tick(req(1, 1, self({ x: 0, y: 8, z: 0 }, { health: 30 }), {}, steady));
  const shaken = brain.persona(1)!.emotion.calm;
  const friend = { id: 5, kind: 'player' as const, pos: { x: 4, y: 8, z: 0 }, hostile: false, visible: true };
  brain.tick(req(1, 6, self({ x: 0, y: 8, z: 0 }, { health: 30 }), { targets: [friend] }, steady));
  const alone = new Brain(allOffExcept('emotional_events'));
  alone.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { health: 60 }), {}, steady));
  alone.tick(req(1, 1, self({ x: 0, y: 8, z: 0 }, { health: 30 }), {}, steady));
  alone.tick(req(1, 6, self({ x: 0, y: 8, z: 0 }, { health: 30 }), {}, steady));
  assert.ok(brain.persona(1)!.emotion.calm > alone.persona(1)!.emotion.calm);
  assert.ok(shaken < 0.5);
});

test('fear shifts choices: a frightened character runs where a calm one fights', () => {
  const outnumbered = [hostile(7, { x: 40, y: 8, z: 0 }), hostile(8, { x: 45, y: 8, z: 0 })];
  // Nervous but gentle: afraid when hurt, not angry.
  const nervous = { traits: { neuroticism: 0.65, agreeableness: 0.9, extraversion: 0.5 } };
  const ticks = (b: ReturnType<typeof bundle>) => {
    const brain = new Brain(b);
    brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { health: 100 }), {}, nervous));
    return brain.tick(req(1, 1, self({ x: 0, y: 8, z: 0 }, { health: 62 }), { targets: outnumbered }, nervous)).intents[0]!.kind;
  };
  assert.equal(ticks(allOffExcept()), 'Face');
  assert.equal(ticks(allOffExcept('emotional_events')), 'Flee');
});

test('emotes are rate-limited and carry a name', () => {
  const brain = new Brain(allOffExcept('emotes'));
  const friend = { id: 5, kind: 'player' as const, pos: { x: 4, y: 8, z: 0 }, hostile: false, visible: true };
  const social = { traits: { extraversion: 1, agreeableness: 1 } };
  const times: number[] = [];
  for (let t = 0; t < 600; t++) {
    const r = brain.tick(req(1, t, self(), { targets: [friend] }, social));
    const e = find(r, 'Emote');
    if (e) {
      assert.equal(e.name, 'wave');
      assert.equal(r.intents.at(-1), e, 'lowest priority');
      times.push(t);
    }
  }
  assert.ok(times.length >= 5 && times.length <= 30, `${times.length} emotes`);
  for (let i = 1; i < times.length; i++) assert.ok(times[i]! - times[i - 1]! >= 20);
  assert.equal(brain.drainEvents().emote, times.length);
});
