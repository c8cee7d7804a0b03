import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import { AgentSpeech, MAX_SEEN_PLAYERS } from '../../src/dialogue/agent-speech.js';
import type { DialogueContext, LineSource, NearbyPlayer } from '../../src/dialogue/context.js';
import { situationOf } from '../../src/dialogue/situation.js';
import { DialogueTier, MAX_SPEECH_AGENTS, type DialogueBundle } from '../../src/dialogue/tier.js';
import { turn } from './helpers.js';

/**
 * Agent ids and player ids are the mod's to choose. A sidecar fed ever new ids (a buggy mod, a
 * hostile client with the token) kept the dialogue tier's speech state for every character
 * ever heard or near a player, for as long as the process lived (about 1.7 KB each, with no
 * eviction: the brain evicts beyond 10,000 agents, the tier never did), and a character shown
 * ever new players remembered every one.
 */

const BUNDLE: DialogueBundle = {
  ...DEFAULT_BUNDLE,
  speech: {
    limits: { per_5min: 1, per_hour: 30, per_day: 200, economy: 'Chatty' },
    phrase_cache: { variety_target: 6, max_reuse: 3, allow_player_names: false },
  },
};

const lines: LineSource = {
  line: async (p) => ({ text: `a ${p.situation.kind}`, model: 'm', usage: { prompt_tokens: 1, completion_tokens: 1 }, cost_usd: 0 }),
};

function talk(time: number, player: number): DialogueContext {
  return {
    persona: { name: 'Mira', role: 'guard', traits: {}, themes: [], goal: '', emotion: null, memory: '' },
    players: [{ id: player, name: 'Alex', distance_m: 3 }],
    heard: [{ from: player, text: 'hello there', at_s: time }],
    doing: '',
    event: null,
  };
}

test('the tier keeps speech state for at most maxAgents characters; one ticked all along keeps its own', async () => {
  const max = 200;
  const tier = new DialogueTier({ bundle: BUNDLE, lines, random: () => 0.999, maxAgents: max });
  const regular = 7;
  assert.equal(tier.onTick(regular, 0, talk(0, 1)), null, 'the regular is greeted: a line is asked for');
  await turn();
  assert.equal(tier.onTick(regular, 1, talk(1, 1))?.text, 'a reply', 'and said');
  // Ids of every kind the tier keeps: dense, negative, fractional and past the dense range.
  const kinds = [(i: number) => 1000 + i, (i: number) => -1 - i, (i: number) => i + 0.5, (i: number) => 2 ** 40 + i];
  let most = 0;
  for (let i = 0; i < 5000; i++) {
    tier.onTick(kinds[i % 4]!(i), 2, talk(2, 1_000_000 + i));
    if (i % 40 === 0) tier.onTick(regular, 2, talk(2, 1));
    most = Math.max(most, tier.status().agents);
    if (i % 500 === 0) await turn();
  }
  assert.ok(most <= max, `at most ${max} characters held, got ${most}`);
  await turn();
  assert.equal(tier.onTick(regular, 3, talk(3, 1)), null, 'the regular still has its spoken line counted: per_5min 1 holds');
  await turn();
  assert.equal(tier.onTick(regular, 4, talk(4, 1)), null);
  tier.forget(regular);
  assert.ok(tier.status().agents < max);
});

test('a character forgotten by the sweep starts afresh, and the default bound is documented as 50,000', async () => {
  assert.equal(MAX_SPEECH_AGENTS, 50_000);
  const tier = new DialogueTier({ bundle: BUNDLE, lines, random: () => 0.999, maxAgents: 8 });
  assert.equal(tier.onTick(1, 0, talk(0, 1)), null);
  await turn();
  assert.equal(tier.onTick(1, 1, talk(1, 1))?.text, 'a reply');
  // Two sweeps without a tick of agent 1: the first clears its mark, the second forgets it.
  for (let i = 0; i < 40; i++) tier.onTick(100 + i, 1, talk(1, 2));
  assert.ok(tier.status().agents <= 8);
  assert.equal(tier.onTick(1, 2, talk(2, 1)), null, 'a line is asked for again: its windows went with it');
  await turn();
  assert.equal(tier.onTick(1, 3, talk(3, 1))?.text, 'a reply');
  assert.throws(() => new DialogueTier({ bundle: BUNDLE, lines, maxAgents: 0 }), /maxAgents must be a positive number/);
});

test('a character remembers at most MAX_SEEN_PLAYERS players met; those gone past the greet-again time go first', () => {
  const rules = { rangeM: 20, lineTtlS: 30, greetAgainS: 600, volunteerIntervalS: 0 };
  const st = new AgentSpeech(1);
  const near = (id: number): NearbyPlayer[] => [{ id, name: 'P', distance_m: 1 }];
  assert.equal(situationOf(st, 0, near(1), null, rules), 'greet');
  for (let i = 0; i < 10_000; i++) {
    situationOf(st, 1000 + i, near(100 + i), null, rules);
    assert.ok(st.seen!.size <= MAX_SEEN_PLAYERS);
  }
  const st2 = new AgentSpeech(2);
  situationOf(st2, 0, near(1), null, rules);
  for (let i = 0; i < MAX_SEEN_PLAYERS - 1; i++) situationOf(st2, 700, near(100 + i), null, rules);
  assert.equal(st2.seen!.size, MAX_SEEN_PLAYERS);
  situationOf(st2, 701, near(5000), null, rules);
  assert.equal(st2.seen!.has(1), false, 'player 1, gone since 0, is dropped first');
  assert.equal(st2.seen!.has(100), true, 'a player met at 700 is kept');
  assert.equal(situationOf(st2, 702, near(100), null, rules), 'idle', 'and not greeted again');
});
