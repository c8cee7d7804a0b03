import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import { HEARD_AHEAD_S, type Economy } from '../../brain/types.js';
import type { LineParams, LineResult } from '../../plugins/protocol.js';
import type { DialogueContext, LineSource } from '../../src/dialogue/context.js';
import { SpeechLimiter } from '../../src/dialogue/limits.js';
import { AgentSpeech } from '../../src/dialogue/agent-speech.js';
import { DialogueTier, type DialogueBundle } from '../../src/dialogue/tier.js';
import { turn } from './helpers.js';

/** An in-process model that answers at once; records what it was asked. */
function instantModel(text: (p: LineParams, n: number) => string = (_p, n) => `line number ${n}`): LineSource & { asked: LineParams[] } {
  const asked: LineParams[] = [];
  return {
    asked,
    line: async (p): Promise<LineResult> => {
      asked.push(p);
      return { text: text(p, asked.length), model: 'm', usage: { prompt_tokens: 10, completion_tokens: 2 }, cost_usd: 0.001 };
    },
  };
}

function bundle(economy: Economy, limits: Partial<DialogueBundle['speech']['limits']> = {}, extra: Partial<DialogueBundle> = {}): DialogueBundle {
  return {
    ...DEFAULT_BUNDLE,
    speech: { limits: { ...DEFAULT_BUNDLE.speech.limits, economy, ...limits }, phrase_cache: { ...DEFAULT_BUNDLE.speech.phrase_cache } },
    ...extra,
  };
}

function context(over: Partial<DialogueContext> = {}): DialogueContext {
  return {
    persona: {
      name: 'Mira',
      role: 'survivor',
      traits: { extraversion: 0.8 },
      themes: ['misses their family'],
      goal: 'find water',
      emotion: { name: 'wary', intensity: 0.5 },
      memory: '',
    },
    players: [{ id: 3, name: 'Alex', distance_m: 8 }],
    heard: [],
    doing: 'patrolling',
    event: null,
    ...over,
  };
}

test('the limiter slides its 5-minute, hour and day windows on game time', () => {
  const l = new SpeechLimiter({ per_5min: 2, per_hour: 3, per_day: 4 });
  l.record(1, 0);
  l.record(1, 10);
  assert.equal(l.allows(1, 299), false, 'two in the first 5 minutes');
  assert.equal(l.allows(1, 300.5), true, 'the first line left the 5-minute window');
  l.record(1, 301);
  assert.equal(l.allows(1, 1000), false, 'three in the hour');
  assert.equal(l.allows(1, 3600.5), true);
  l.record(1, 3601);
  assert.equal(l.allows(1, 80_000), false, 'four in the day');
  assert.deepEqual(l.counts(1, 80_000), [0, 0, 4]);
  assert.equal(l.allows(1, 86_400 + 10.5), true, 'the day window slid past the first two');
  assert.equal(l.allows(2, 0), true, 'agents are counted apart');
  l.record(1, 5);
  assert.deepEqual(l.counts(1, 5), [1, 1, 1], 'a clock that went backwards starts over');
  assert.equal(new SpeechLimiter({ per_5min: 0, per_hour: 5, per_day: 5 }).allows(1, 0), false);
});

/**
 * Drives one agent through a simulated day: a player always near, and a heard line every
 * `heardEveryS`. Returns the game times at which it spoke.
 */
async function simulateDay(tier: DialogueTier, stepS: number, heardEveryS: number): Promise<number[]> {
  const spoke: number[] = [];
  const ctx = context();
  const heard: DialogueContext['heard'][number][] = [];
  for (let t = 0; t < 86_400; t += stepS) {
    if (heardEveryS > 0 && t % heardEveryS === 0) heard.splice(0, 1, { from: 3, name: 'Alex', text: `hey ${t}`, at_s: t });
    ctx.heard = heard;
    const say = tier.onTick(7, t, ctx);
    if (say) spoke.push(t);
    await turn();
  }
  return spoke;
}

function maxInWindow(times: number[], windowS: number): number {
  let best = 0;
  let start = 0;
  for (let i = 0; i < times.length; i++) {
    while (times[i]! - times[start]! >= windowS) start++;
    best = Math.max(best, i - start + 1);
  }
  return best;
}

test('over a simulated day the limits hold in every window, and replies come within them', async () => {
  const model = instantModel();
  const tier = new DialogueTier({ bundle: bundle('Normal'), lines: model, random: () => 0.99 });
  const spoke = await simulateDay(tier, 5, 120);
  assert.ok(spoke.length > 0);
  assert.ok(maxInWindow(spoke, 300) <= 3, `per_5min: ${maxInWindow(spoke, 300)}`);
  assert.ok(maxInWindow(spoke, 3600) <= 20, `per_hour: ${maxInWindow(spoke, 3600)}`);
  assert.ok(spoke.length <= 120, `per_day: ${spoke.length}`);
  assert.equal(spoke.length, 120, 'with speech to answer every 2 minutes the day budget is used');
  const c = tier.drainCounters();
  assert.equal(c.spoke, 120);
  assert.equal(c.heard, 86_400 / 120);
  assert.ok(model.asked.some((p) => p.situation.kind === 'reply' && p.situation.heard[0]?.text.startsWith('hey')));
  assert.equal(tier.drainCounters().spoke, 0, 'drained counters start again from zero');
});

test('Silent never speaks, not even to answer, and never asks the model', async () => {
  const model = instantModel();
  const tier = new DialogueTier({ bundle: bundle('Silent'), lines: model });
  const spoke = await simulateDay(tier, 30, 60);
  assert.deepEqual(spoke, []);
  assert.equal(model.asked.length, 0);
  assert.equal(tier.drainCounters().heard, 86_400 / 60, 'heard speech is still counted');
});

test('policy.llm_dialogue off, or no model configured, means never speaking', async () => {
  const model = instantModel();
  const off = new DialogueTier({ bundle: bundle('Chatty', {}, { policy: { llm_dialogue: false } }), lines: model });
  assert.deepEqual(await simulateDay(off, 60, 60), []);
  assert.equal(model.asked.length, 0);
  const none = new DialogueTier({ bundle: bundle('Chatty'), lines: null });
  assert.deepEqual(await simulateDay(none, 60, 60), []);
});

test('the economy sets how often a character volunteers: Chatty > Normal > Frugal', async () => {
  const generous = { per_5min: 1000, per_hour: 10_000, per_day: 100_000 };
  const counts: Record<string, number> = {};
  for (const economy of ['Frugal', 'Normal', 'Chatty'] as const) {
    const tier = new DialogueTier({ bundle: bundle(economy, generous), lines: instantModel(), random: () => 0.99 });
    counts[economy] = (await simulateDay(tier, 5, 0)).length;
  }
  assert.ok(counts.Chatty! > counts.Normal! && counts.Normal! > counts.Frugal!, JSON.stringify(counts));
  // Frugal volunteers at most once per 240 s of game time.
  assert.ok(counts.Frugal! <= 86_400 / 240 + 1, JSON.stringify(counts));
});

test('a character alone says nothing unprompted, but answers what it hears', async () => {
  const model = instantModel(() => 'Who goes there?');
  const tier = new DialogueTier({ bundle: bundle('Chatty'), lines: model });
  const alone = context({ players: [{ id: 3, name: 'Alex', distance_m: 500 }] });
  for (let t = 0; t < 600; t += 10) assert.equal(tier.onTick(1, t, alone), null);
  assert.equal(model.asked.length, 0);
  alone.heard = [{ from: 3, text: 'anyone here?', at_s: 600 }];
  assert.equal(tier.onTick(1, 600, alone), null, 'the line is asked for, not awaited');
  await turn();
  const say = tier.onTick(1, 601, alone);
  assert.deepEqual({ kind: say?.kind, text: say?.text, channel: say?.channel }, { kind: 'Say', text: 'Who goes there?', channel: 'proximity' });
  assert.match(say!.line_id, /^l_[a-z0-9]+$/);
  assert.equal(model.asked[0]!.situation.heard[0]!.from, 'Alex', 'a heard speaker is named from the players list');
  assert.equal(tier.onTick(1, 602, alone), null, 'the same heard line is answered once');
});

test('at most one request per agent is outstanding, and a line too late is dropped', async () => {
  let release: (r: LineResult) => void = () => {};
  let calls = 0;
  const slow: LineSource = {
    line: () => {
      calls++;
      return new Promise<LineResult>((resolve) => {
        release = resolve;
      });
    },
  };
  const tier = new DialogueTier({ bundle: bundle('Chatty'), lines: slow, lineTtlS: 20 });
  const ctx = context({ event: { kind: 'shot_at' } });
  for (let t = 0; t < 50; t++) assert.equal(tier.onTick(1, t, ctx), null);
  assert.equal(calls, 1);
  release({ text: 'Too late now', model: 'm', usage: { prompt_tokens: 1, completion_tokens: 1 }, cost_usd: 0 });
  await turn();
  assert.equal(tier.onTick(1, 50, ctx), null, 'asked at 0, arrived after 50 s of game time');
  const c = tier.drainCounters();
  assert.equal(c.dropped, 1);
  assert.equal(c.spoke, 0);
  assert.equal(calls, 2, 'the next request starts once the slot is free');
});

test('a notable event gets a remark even with no player near', async () => {
  const model = instantModel(() => 'Get down!');
  const tier = new DialogueTier({ bundle: bundle('Frugal'), lines: model });
  const ctx = context({ players: [], event: { kind: 'shot_at', detail: 'shots from the tree line' } });
  tier.onTick(1, 0, ctx);
  await turn();
  assert.equal(tier.onTick(1, 1, context({ players: [] }))?.text, 'Get down!');
  assert.equal(model.asked[0]!.situation.event, 'shot_at: shots from the tree line');
});

test('onTick never throws, even on a malformed context', () => {
  const tier = new DialogueTier({ bundle: bundle('Chatty'), lines: instantModel() });
  assert.equal(tier.onTick(1, 0, { persona: null } as unknown as DialogueContext), null);
});

test('a heard line stamped after its tick (another clock) is not taken, and does not silence the lines after it', () => {
  const st = new AgentSpeech(1);
  assert.equal(st.takeHeard(100, [{ from: 3, text: 'stamped in milliseconds', at_s: 100_000 }]), 0);
  assert.equal(st.takeHeard(100.5, [{ from: 3, text: 'a moment after the tick is fine', at_s: 100.5 + HEARD_AHEAD_S }]), 1);
  assert.equal(st.takeHeard(102, [{ from: 3, text: 'still heard', at_s: 101.9 }]), 1);
  assert.deepEqual(
    st.owed?.map((h) => h.text),
    ['a moment after the tick is fine', 'still heard'],
  );
});

test("a character's own line fed back as heard speech (a mod echoing Say through chat) is not answered", () => {
  const st = new AgentSpeech(7);
  assert.equal(st.takeHeard(10, [{ from: 7, text: 'my own words', at_s: 9.9 }]), 0);
  assert.equal(st.takeHeard(11, [{ from: 3, text: 'a player', at_s: 10.9 }]), 1);
  assert.deepEqual(
    st.owed?.map((h) => h.from),
    [3],
  );
});

test("a line from the character's own id is a player's when a player of that id is in sight (ids that overlap)", () => {
  const st = new AgentSpeech(7);
  assert.equal(st.takeHeard(10, [{ from: 7, text: 'player seven here', at_s: 9.9 }], [{ id: 7, name: 'Seven', distance_m: 4 }]), 1);
});
