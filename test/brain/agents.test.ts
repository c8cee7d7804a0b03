import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { bundle, hostile, kinds, req, self } from './sim.js';

test('state is bounded by maxAgents: the least recently ticked agent is evicted', () => {
  const brain = new Brain(bundle(), { maxAgents: 3 });
  for (const agent of [1, 2, 3]) brain.tick(req(agent, 0, self()));
  brain.tick(req(1, 1, self()));
  brain.tick(req(4, 1, self()));
  assert.equal(brain.agentCount, 3);
  assert.deepEqual(
    brain.roster().map((r) => r.agent),
    [1, 3, 4],
  );
  assert.equal(brain.persona(2), null);
  brain.drainEvents();
  // An evicted agent coming back starts afresh (a new spawn).
  brain.tick(req(2, 2, self()));
  assert.equal(brain.drainEvents().spawn, 1);
});

test('an agent is forgotten by its own clock only: other agents ticking far ahead do not drop it', () => {
  // Human factors on: a fresh agent counts a spawn.
  const brain = new Brain(bundle(), { staleAfterS: 100 });
  brain.tick(req(1, 0, self()));
  for (let t = 0; t < 3000; t++) brain.tick(req(2, t * 0.1, self()));
  assert.deepEqual(
    brain.roster().map((r) => r.agent),
    [1, 2],
  );
  brain.drainEvents();
  // 90 s after its own last tick: remembered, whatever the others' clocks say.
  brain.tick(req(1, 90, self()));
  assert.equal(brain.drainEvents().spawn, undefined);
  // More than 100 s after its own last tick: it starts afresh.
  brain.tick(req(1, 190.5, self()));
  assert.equal(brain.drainEvents().spawn, 1);
  // Exactly staleAfterS later is not more than it.
  brain.tick(req(1, 290.5, self()));
  assert.equal(brain.drainEvents().spawn, undefined);
});

test('a game clock that goes back a minute or more is a new clock: the agent starts afresh instead of keeping the old deadlines', () => {
  const brain = new Brain(bundle());
  // Out of ammo with a hostile close: the agent flees and remembers it for a while.
  for (let t = 36_000; t < 36_010; t++) brain.tick(req(501, t, self({ x: 0, y: 8, z: 0 }, { ammo: 0 }), { targets: [hostile(3, { x: 5, y: 8, z: 0 })] }));
  brain.drainEvents();
  // The game server restarts; its clock starts again near 0 and nobody is around.
  const after = [];
  for (let t = 0; t < 200; t++) after.push(kinds(brain.tick(req(501, t, self({ x: 0, y: 8, z: 0 }, { ammo: 0 })))));
  assert.equal(brain.drainEvents().spawn, 1);
  assert.ok(
    after.every((k) => !k.includes('Flee')),
    'no flight from a threat of the old clock',
  );
  // A step back of less than a minute is one clock's ticks out of order: remembered.
  brain.tick(req(501, 150, self()));
  brain.tick(req(501, 100, self()));
  assert.equal(brain.drainEvents().spawn, undefined);
});

test('squad state follows eviction: an evicted member no longer pulls the squad', () => {
  const brain = new Brain(bundle({ human_factors: false, global_goals: false }), { maxAgents: 2 });
  brain.tick(req(1, 0, self({ x: 500, y: 8, z: 0 }), { squad: 'a' }));
  brain.tick(req(2, 0, self({ x: 0, y: 8, z: 0 }), { squad: 'a' }));
  assert.equal(brain.tick(req(2, 1, self({ x: 0, y: 8, z: 0 }), { squad: 'a' })).intents[0]!.kind, 'MoveTo');
  brain.tick(req(3, 1, self()));
  brain.tick(req(2, 2, self({ x: 0, y: 8, z: 0 }), { squad: 'a' }));
  assert.equal(brain.persona(1), null);
  assert.deepEqual(brain.tick(req(2, 3, self({ x: 0, y: 8, z: 0 }), { squad: 'a' })).intents, [{ kind: 'Idle', reason: 'none' }]);
});

test('options are validated with messages that name the fix', () => {
  assert.throws(() => new Brain(bundle(), { maxAgents: 0 }), /maxAgents must be a positive integer/);
  assert.throws(() => new Brain(bundle(), { staleAfterS: -1 }), /staleAfterS must be a positive/);
  assert.throws(() => new Brain(bundle(), { maxagents: 5 } as never), /unknown Brain option "maxagents" \(did you mean "maxAgents"\?\)/);
});

test('importing more agents than maxAgents keeps the most recently ticked', () => {
  const big = new Brain(bundle());
  for (const [agent, t] of [
    [1, 50],
    [2, 10],
    [3, 30],
    [4, 40],
  ] as const)
    big.tick(req(agent, t, self()));
  const small = new Brain(bundle(), { maxAgents: 2 });
  small.importState(JSON.parse(JSON.stringify(big.exportState())));
  assert.deepEqual(
    small.roster().map((r) => r.agent),
    [1, 4],
  );
});

test('persona and roster are copies: changing them changes nothing inside', () => {
  const brain = new Brain(bundle());
  brain.tick(req(1, 0, self()));
  const p = brain.persona(1)!;
  p.traits.neuroticism = 1;
  p.themes.push('x');
  brain.roster()[0]!.name = 'changed';
  assert.notEqual(brain.persona(1)!.traits.neuroticism, 1);
  assert.ok(!brain.persona(1)!.themes.includes('x'));
  assert.notEqual(brain.roster()[0]!.name, 'changed');
});
