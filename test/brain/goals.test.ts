import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, type PointOfInterest } from '../../brain/index.js';
import { allOffExcept, bundle, find, follow, req, self } from './sim.js';

const poi: PointOfInterest[] = [
  { id: 'well', kind: 'water', pos: { x: 100, y: 8, z: 0 } },
  { id: 'far-well', kind: 'water', pos: { x: 400, y: 8, z: 0 } },
  { id: 'shop', kind: 'food', pos: { x: 0, y: 8, z: 80 } },
  { id: 'clinic', kind: 'medical', pos: { x: -60, y: 8, z: 0 } },
];
const goalsOnly = () => allOffExcept('global_goals', 'game_knowledge');

test('needs pick the goal and the goal drives a MoveTo to the nearest matching place', () => {
  const brain = new Brain(goalsOnly());
  const thirsty = brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { thirst: 90, hunger: 10 }), { poi }));
  assert.deepEqual(find(thirsty, 'MoveTo'), { kind: 'MoveTo', to: { x: 100, y: 8, z: 0 }, speed: 'jog' });
  assert.equal(brain.roster()[0]!.goal, 'find_water');
  const hungry = brain.tick(req(2, 0, self({ x: 0, y: 8, z: 0 }, { thirst: 10, hunger: 95 }), { poi }));
  assert.deepEqual(find(hungry, 'MoveTo')?.to, { x: 0, y: 8, z: 80 });
  const hurt = brain.tick(req(3, 0, self({ x: 0, y: 8, z: 0 }, { health: 25, blood: 2500 }), { poi }));
  assert.deepEqual(find(hurt, 'MoveTo')?.to, { x: -60, y: 8, z: 0 });
  assert.deepEqual(
    brain.roster().map((r) => r.goal),
    ['find_water', 'find_food', 'find_medical'],
  );
  assert.equal(brain.drainEvents().plan, 3);
});

test('arriving: the character idles at the place (drinking) instead of walking on', () => {
  const brain = new Brain(goalsOnly());
  let pos = { x: 0, y: 8, z: 0 };
  let last = brain.tick(req(1, 0, self(pos, { thirst: 90 }), { poi }));
  for (let t = 1; t < 60; t++) {
    pos = follow(pos, last, 1);
    last = brain.tick(req(1, t, self(pos, { thirst: 90 }), { poi }));
  }
  assert.deepEqual(last.intents, [{ kind: 'Idle', reason: 'drinking' }]);
});

test('a goal change counts plan; an unchanged goal does not', () => {
  const brain = new Brain(goalsOnly());
  brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { thirst: 90 }), { poi }));
  for (let t = 1; t < 60; t++) brain.tick(req(1, t, self({ x: 0, y: 8, z: 0 }, { thirst: 90 }), { poi }));
  assert.equal(brain.drainEvents().plan, 1);
  for (let t = 60; t < 120; t++) brain.tick(req(1, t, self({ x: 0, y: 8, z: 0 }, { thirst: 0, hunger: 95 }), { poi }));
  assert.equal(brain.drainEvents().plan, 1);
  assert.equal(brain.roster()[0]!.goal, 'find_food');
});

test('an urgent need overrides a patrol route; a mild one does not', () => {
  const brain = new Brain(goalsOnly());
  const route = [
    { x: 0, y: 8, z: 50 },
    { x: 0, y: 8, z: -50 },
  ];
  assert.deepEqual(find(brain.tick(req(1, 0, self(), { poi, route })), 'MoveTo')?.to, { x: 0, y: 8, z: 50 });
  assert.deepEqual(find(brain.tick(req(2, 0, self(undefined, { thirst: 95 }), { poi, route })), 'MoveTo')?.to, { x: 100, y: 8, z: 0 });
});

test('without game_knowledge the character knows no places and searches by roaming', () => {
  const brain = new Brain(allOffExcept('global_goals'));
  const r = brain.tick(req(1, 0, self({ x: 0, y: 8, z: 0 }, { thirst: 95 }), { poi }));
  const to = find(r, 'MoveTo')!.to;
  assert.equal(brain.roster()[0]!.goal, 'find_water');
  assert.notDeepEqual(to, { x: 100, y: 8, z: 0 });
  const d = Math.hypot(to.x, to.z);
  assert.ok(d >= 40 && d <= 120, `${d}`);
});

test('the game framing tilts goals: a looting game loots more than default survival', () => {
  const count = (b: ReturnType<typeof bundle>) => {
    const brain = new Brain(b);
    for (let agent = 1; agent <= 300; agent++) brain.tick(req(agent, 0, self(), { poi }));
    return brain.roster().filter((r) => r.goal === 'loot').length;
  };
  const survival = count(goalsOnly());
  const looting = count(allOffExcept('global_goals', 'game_knowledge'));
  assert.equal(looting, survival, 'same bundle, same choices');
  const framed = allOffExcept('global_goals', 'game_knowledge');
  framed.game = { name: 'Scrapyard', premise: 'Scavengers in a dead city', goal: 'Loot the most valuable gear and extract' };
  assert.ok(count(framed) > survival * 1.3, `${count(framed)} vs ${survival}`);
});

test('traits move goals through utility: careful characters guard, curious ones loot and roam', () => {
  const brain = new Brain(goalsOnly());
  const careful = { traits: { conscientiousness: 1, neuroticism: 0.6, openness: 0 } };
  const curious = { traits: { conscientiousness: 0, neuroticism: 0, openness: 1 } };
  let guards = 0;
  let explorers = 0;
  for (let agent = 1; agent <= 100; agent++) {
    brain.tick(req(agent, 0, self(), { poi }, careful));
    brain.tick(req(1000 + agent, 0, self(), { poi }, curious));
  }
  for (const r of brain.roster()) {
    if (r.agent < 1000 && r.goal === 'guard') guards++;
    if (r.agent > 1000 && (r.goal === 'loot' || r.goal === 'roam')) explorers++;
  }
  assert.ok(guards > 50 && explorers > 90, `${guards} ${explorers}`);
});
