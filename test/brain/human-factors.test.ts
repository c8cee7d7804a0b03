import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain } from '../../brain/index.js';
import { allOffExcept, bundle, find, req, self } from './sim.js';

test('session_min [1, 1] logs off between 60 and 70 s of game time, once, then stays off', () => {
  const b = bundle({}, (x) => {
    x.population.session_min = [1, 1];
  });
  for (const agent of [1, 2, 3, 42, 1001]) {
    const brain = new Brain(b);
    let loggedOffAt: number | null = null;
    for (let t = 1000; t <= 1080; t += 0.5) {
      const r = brain.tick(req(agent, t, self(), {}, { traits: { afk_proneness: 0, break_proneness: 0 } }));
      if (find(r, 'Logoff') !== undefined) {
        loggedOffAt ??= t;
        assert.deepEqual(r.intents, [{ kind: 'Logoff' }]);
      } else assert.equal(loggedOffAt, null, 'Logoff is final');
    }
    assert.ok(loggedOffAt !== null && loggedOffAt - 1000 >= 60 && loggedOffAt - 1000 <= 70, `agent ${agent} logged off at +${loggedOffAt! - 1000} s`);
    const events = brain.drainEvents();
    assert.equal(events.logoff, 1);
    assert.equal(events.spawn, 1);
    assert.deepEqual(brain.roster()[0]!.state, 'logged_off');
  }
});

test('a session does not end in the middle of a fight', () => {
  const b = bundle({}, (x) => {
    x.population.session_min = [1, 1];
  });
  const brain = new Brain(b);
  brain.tick(req(1, 0, self()));
  const fight = brain.tick(req(1, 61, self(), { targets: [{ id: 9, kind: 'ai', pos: { x: 30, y: 8, z: 0 }, hostile: true, visible: true }] }));
  assert.equal(find(fight, 'Logoff'), undefined);
  assert.ok(find(brain.tick(req(1, 62, self())), 'Logoff'));
});

const afkProne = { traits: { afk_proneness: 1, break_proneness: 1 } };

function runLong(brain: Brain, agent: number): { afk: number; breaks: number } {
  let afk = 0;
  let breaks = 0;
  for (let t = 0; t < 4 * 3600; t += 2) {
    const r = brain.tick(req(agent, t, self(), {}, afkProne));
    const idle = find(r, 'Idle');
    if (idle?.reason === 'afk') afk++;
    if (idle?.reason === 'break') breaks++;
  }
  return { afk, breaks };
}

test('AFK spells and breaks happen at afk/break proneness, counted as afk', () => {
  const b = bundle({}, (x) => {
    x.population.session_min = [600, 600];
  });
  const brain = new Brain(b);
  const { afk, breaks } = runLong(brain, 3);
  assert.ok(afk > 0 && breaks > 0, `afk ticks ${afk}, break ticks ${breaks}`);
  const events = brain.drainEvents();
  assert.ok((events.afk ?? 0) >= 3, JSON.stringify(events));
});

test('human_factors off: never AFK, never a break, never Logoff, no afk/logoff counters over a long run (spawns are still counted)', () => {
  const b = bundle({ human_factors: false }, (x) => {
    x.population.session_min = [1, 1];
  });
  const brain = new Brain(b);
  const { afk, breaks } = runLong(brain, 3);
  assert.equal(afk + breaks, 0);
  // Right after the long run (an agent silent for more than an hour by its own clock is forgotten and would spawn again).
  const r = brain.tick(req(3, 4 * 3600, self()));
  assert.equal(find(r, 'Logoff'), undefined);
  const events = brain.drainEvents();
  assert.equal(events.afk, undefined);
  assert.equal(events.logoff, undefined);
  assert.equal(events.spawn, 1, 'a spawn is counted whatever the policy');
});

test('fatigue grows with activity and turns a jog into a walk; rest brings it back', () => {
  const b = allOffExcept('human_factors', 'global_goals');
  const brain = new Brain(b);
  const reckless = { traits: { conscientiousness: 0, neuroticism: 0, afk_proneness: 0, break_proneness: 0, fatigue_rate: 1 } };
  let pos = { x: 0, y: 8, z: 0 };
  const speeds: string[] = [];
  for (let t = 0; t < 600; t += 1) {
    // Thirsty far from water: a long jog.
    const r = brain.tick(req(1, t, self(pos, { thirst: 85 }), { poi: [{ id: 'w', kind: 'water', pos: { x: 5000, y: 8, z: 0 } }] }, reckless));
    const m = find(r, 'MoveTo');
    if (m) speeds.push(m.speed);
    pos = { x: pos.x + 1, y: 8, z: 0 };
  }
  assert.equal(speeds[0], 'jog');
  assert.equal(speeds.at(-1), 'walk', 'tired');
  const tired = brain.persona(1)!.fatigue;
  brain.setBundle(allOffExcept('human_factors'));
  for (let t = 600; t < 1200; t += 1) brain.tick(req(1, t, self(pos), {}, reckless));
  assert.ok(brain.persona(1)!.fatigue < tired, 'rested');
});

test('an AFK character ignores a hostile in sight but comes back when hit', () => {
  const b = bundle({ emotional_events: false }, (x) => {
    x.population.session_min = [600, 600];
  });
  const brain = new Brain(b);
  let t = 0;
  let away = false;
  for (; t < 20_000 && !away; t += 1) away = find(brain.tick(req(1, t, self(), {}, afkProne)), 'Idle')?.reason === 'afk';
  assert.ok(away, 'went AFK');
  const enemy = { targets: [{ id: 9, kind: 'player' as const, pos: { x: 30, y: 8, z: 0 }, hostile: true, visible: true }] };
  assert.equal(find(brain.tick(req(1, t, self(), enemy, afkProne)), 'Idle')?.reason, 'afk');
  const hit = brain.tick(req(1, t + 1, self(undefined, { health: 80 }), enemy, afkProne));
  assert.deepEqual(
    hit.intents.map((i) => i.kind),
    ['Face', 'Engage'],
  );
  assert.equal(find(brain.tick(req(1, t + 2, self(undefined, { health: 80 }), enemy, afkProne)), 'Engage')?.target, 9);
});
