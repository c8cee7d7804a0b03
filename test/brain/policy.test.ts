import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Brain, POLICY_KEYS, type PolicyKey, type TickResponse } from '../../brain/index.js';
import { allOff, bundle, World } from './sim.js';

/**
 * Each policy key off removes its subsystem's intents and counters, checked over a busy world
 * where, with the key on, they do appear.
 */

function run(b: ReturnType<typeof bundle>, rounds = 600): { intents: Set<string>; reasons: Set<string>; events: Record<string, number>; brain: Brain } {
  const brain = new Brain(b);
  // Four hostiles: squads keep together now, and with three the out-of-ammo member's squad never meets one (no Flee).
  const world = new World(7, 12, { squads: true, hostiles: 4 });
  const intents = new Set<string>();
  const reasons = new Set<string>();
  const events: Record<string, number> = {};
  const collect = (r: TickResponse): void => {
    for (const i of r.intents) {
      intents.add(i.kind);
      if (i.kind === 'Idle') reasons.add(i.reason);
    }
  };
  for (let i = 0; i < rounds; i++) {
    world.step(brain, 2, collect);
    for (const [k, v] of Object.entries(brain.drainEvents())) events[k] = (events[k] ?? 0) + v;
  }
  return { intents, reasons, events, brain };
}

const busy = (policy: Partial<Record<PolicyKey, boolean>>) =>
  bundle(policy, (b) => {
    b.population.session_min = [15, 20];
    b.population.afk_proneness = { mean: 0.9, spread: 0.1 };
    b.population.break_proneness = { mean: 0.9, spread: 0.1 };
  });

test('all on: every subsystem shows up in a busy world', () => {
  const { intents, reasons, events } = run(busy({}));
  for (const k of ['MoveTo', 'Face', 'Engage', 'Flee', 'Investigate', 'Emote', 'Idle', 'Logoff']) assert.ok(intents.has(k), `${k} in ${[...intents]}`);
  assert.ok(reasons.has('afk') || reasons.has('break'), [...reasons].join());
  for (const k of ['spawn', 'snap', 'squad', 'heard', 'plan', 'afk', 'logoff', 'emote']) assert.ok((events[k] ?? 0) > 0, `${k} in ${JSON.stringify(events)}`);
});

test('human_factors off: no AFK, break, Logoff, nor afk/logoff counters', () => {
  const { intents, reasons, events } = run(busy({ human_factors: false }));
  assert.ok(!intents.has('Logoff'));
  assert.ok(!reasons.has('afk') && !reasons.has('break'));
  for (const k of ['afk', 'logoff']) assert.equal(events[k], undefined);
});

test("spawn is counted whatever the policy (it is no subsystem's event): every switch off still reports spawns", () => {
  for (const [name, b] of [
    ['human_factors off', busy({ human_factors: false })],
    ['every switch off', allOff()],
  ] as const) {
    const { events } = run(b, 20);
    assert.ok((events.spawn ?? 0) > 0, `spawn in ${JSON.stringify(events)} with ${name}`);
  }
});

test('emotes off: no Emote intents nor emote counter', () => {
  const { intents, events } = run(busy({ emotes: false }));
  assert.ok(!intents.has('Emote'));
  assert.equal(events.emote, undefined);
});

test('global_goals off: no plan counter, no goals on the roster', () => {
  const { events, brain } = run(busy({ global_goals: false }));
  assert.equal(events.plan, undefined);
  for (const row of brain.roster()) assert.equal(row.goal, 'none');
});

test('squads off: no squad counter', () => {
  const { events } = run(busy({ squads: false }));
  assert.equal(events.squad, undefined);
});

test('memory off: no heard counter, empty memory in persona', () => {
  const { events, brain } = run(busy({ memory: false }));
  assert.equal(events.heard, undefined);
  const p = brain.persona(1)!;
  assert.deepEqual(p.memory, { contacts: 0, last_contact: null, players_met: [], heard: [], recent_events: [] });
});

test('emotional_events off: emotions stay at rest and emotion-driven emotes never appear', () => {
  const { brain } = run(busy({ emotional_events: false }));
  const p = brain.persona(2)!;
  assert.deepEqual([p.emotion.fear, p.emotion.anger, p.emotion.calm], [0, 0, 0.5]);
});

test('flavor off: persona without themes or the global line', () => {
  const { brain } = run(busy({ flavor: false }), 5);
  const p = brain.persona(1)!;
  assert.deepEqual(p.themes, []);
  assert.equal(p.global, null);
});

test('every optional subsystem off: only reactive intents and counters', () => {
  const off = allOff();
  assert.deepEqual(Object.keys(off.policy).sort(), [...POLICY_KEYS].sort());
  const { intents, reasons, events } = run(off);
  for (const k of intents) assert.ok(['MoveTo', 'Face', 'Engage', 'Flee', 'Investigate', 'Idle'].includes(k), k);
  for (const r of reasons) assert.ok(['none', 'dead'].includes(r), r);
  for (const k of Object.keys(events)) assert.ok(['snap', 'block', 'spawn'].includes(k), k);
  assert.ok((events.snap ?? 0) > 0);
});
