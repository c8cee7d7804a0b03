import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import type { LineResult } from '../../plugins/protocol.js';
import type { DialogueContext, LineSource, NearbyPlayer, SayIntent } from '../../src/dialogue/context.js';
import { DialogueTier, type DialogueBundle } from '../../src/dialogue/tier.js';
import { seededRandom } from '../../src/random.js';
import { turn } from './helpers.js';

/**
 * The tier answers ticks of agent ids 0..2^22-1 that can change nothing from one byte per
 * character, without its per-character record; other ids (negative, fractional, huge) always
 * take the full path. Driving the same script through both kinds of id must give the same
 * lines, counters and status, tick by tick.
 */

const BUNDLE: DialogueBundle = {
  ...DEFAULT_BUNDLE,
  speech: {
    limits: { per_5min: 4, per_hour: 30, per_day: 200, economy: 'Chatty' },
    phrase_cache: { variety_target: 6, max_reuse: 3, allow_player_names: false },
  },
};

function model(): LineSource {
  let n = 0;
  return {
    line: async (p): Promise<LineResult> => {
      n++;
      if (n % 7 === 0) throw new Error('model hiccup');
      return { text: `${p.situation.kind} line ${n % 5}`, model: 'm', usage: { prompt_tokens: 3, completion_tokens: 2 }, cost_usd: 0 };
    },
  };
}

function tierFor(): DialogueTier {
  let clock = 0;
  return new DialogueTier({ bundle: BUNDLE, lines: model(), random: seededRandom(11), now: () => (clock += 50), unavailableMs: 200 });
}

interface Step {
  agent: number;
  time: number;
  ctx: DialogueContext;
  hear: string | null;
  forget: boolean;
  yieldAfter: boolean;
}

/** A seeded script of ticks for a few characters: players wander in and out of range, fights start and stop, speech and events now and then. */
function script(seed: number, steps: number): Step[] {
  const rand = seededRandom(seed);
  const out: Step[] = [];
  const times = [0, 0, 0, 0];
  for (let i = 0; i < steps; i++) {
    const agent = Math.floor(rand() * 4);
    times[agent]! += rand() < 0.1 ? 120 : 1 + Math.floor(rand() * 20);
    const time = times[agent]!;
    const players: NearbyPlayer[] = [];
    const count = rand() < 0.5 ? 0 : Math.floor(rand() * 3);
    for (let k = 0; k < count; k++) players.push({ id: 100 + Math.floor(rand() * 4), name: 'Alex', distance_m: Math.round(rand() * 400) / 10 });
    const r = rand();
    out.push({
      agent,
      time,
      ctx: {
        persona: {
          name: `A${agent}`,
          role: 'survivor',
          traits: {},
          themes: [],
          goal: rand() < 0.5 ? 'find water' : '',
          emotion: { name: 'wary', intensity: rand() },
          memory: '',
        },
        players,
        heard: r < 0.1 ? [{ from: 100, text: 'hey there Alex', at_s: time - (rand() < 0.5 ? 0 : 40) }] : [],
        doing: 'patrolling',
        event: r > 0.97 ? { kind: 'shot_at' } : null,
        combat: rand() < 0.4 ? { kind: rand() < 0.5 ? 'fighting' : 'fleeing' } : null,
      },
      hear: rand() < 0.03 ? 'over here' : null,
      forget: rand() < 0.01,
      yieldAfter: rand() < 0.3,
    });
  }
  return out;
}

async function run(
  steps: readonly Step[],
  idOf: (agent: number) => number,
): Promise<{ says: Array<Pick<SayIntent, 'text' | 'line_id'> | null>; counters: unknown; agents: number[] }> {
  const tier = tierFor();
  const says: Array<Pick<SayIntent, 'text' | 'line_id'> | null> = [];
  const agents: number[] = [];
  for (const s of steps) {
    if (s.hear !== null) tier.hear(idOf(s.agent), s.hear);
    const say = tier.onTick(idOf(s.agent), s.time, s.ctx);
    says.push(say && { text: say.text, line_id: say.line_id });
    if (s.forget) tier.forget(idOf(s.agent));
    agents.push(tier.status().agents);
    if (s.yieldAfter) await turn();
  }
  return { says, counters: tier.drainCounters(), agents };
}

for (const seed of [1, 2, 3]) {
  test(`quiet ticks answered from the flag byte match the full path exactly (script ${seed})`, async () => {
    const steps = script(seed, 3000);
    const dense = await run(steps, (a) => a + 1);
    for (const sparse of [(a: number) => -(a + 1), (a: number) => a + 0.5, (a: number) => 2 ** 40 + a]) {
      const other = await run(steps, sparse);
      assert.deepEqual(other.says, dense.says);
      assert.deepEqual(other.counters, dense.counters);
      assert.deepEqual(other.agents, dense.agents);
    }
    assert.ok(dense.says.filter((s) => s !== null).length > 20, 'the script makes characters speak');
  });
}

test('a line that arrives while its character is quiet is delivered on its next tick; entering a fight is remarked once', async () => {
  // random near 1: while the model is up, the phrase cache is never preferred over it.
  const tier = new DialogueTier({
    bundle: BUNDLE,
    random: () => 0.999,
    lines: {
      line: async (p) => ({
        text: `about ${p.situation.event || p.situation.kind}`,
        model: 'm',
        usage: { prompt_tokens: 1, completion_tokens: 1 },
        cost_usd: 0,
      }),
    },
  });
  const quiet: DialogueContext = {
    persona: { name: 'Mira', role: 'guard', traits: {}, themes: [], goal: '', emotion: null, memory: '' },
    players: [],
    heard: [],
    doing: '',
    event: null,
  };
  const fighting = { ...quiet, combat: { kind: 'fighting' } };
  assert.equal(tier.onTick(7, 0, fighting), null, 'entering the fight asks for a remark');
  await turn();
  assert.equal(tier.onTick(7, 1, fighting)?.text, 'about fighting', 'staying in the fight still delivers the ready line');
  assert.equal(tier.onTick(7, 2, fighting), null);
  await turn();
  assert.equal(tier.onTick(7, 3, fighting), null, 'staying in it is no new event');
  assert.equal(tier.onTick(7, 4, quiet), null, 'leaving it says nothing');
  assert.equal(tier.onTick(7, 5, fighting), null, 'entering again asks again');
  await turn();
  assert.equal(tier.onTick(7, 6, quiet)?.text, 'about fighting', 'delivered on a quiet tick');
  tier.hear(7, 'anyone?');
  assert.equal(tier.onTick(7, 7, quiet), null, 'voice-in text makes a quiet tick ask for a reply');
  await turn();
  assert.equal(tier.onTick(7, 8, quiet)?.text, 'about reply');
  assert.equal(tier.status().agents, 1);
  tier.forget(7);
  assert.equal(tier.status().agents, 0);
  assert.equal(tier.onTick(7, 9, fighting), null, 'a forgotten character starts afresh: entering a fight is an event again');
  await turn();
  assert.equal(tier.onTick(7, 10, quiet)?.text, 'about fighting');
});
