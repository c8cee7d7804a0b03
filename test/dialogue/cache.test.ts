import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import type { LineParams, LineResult } from '../../plugins/protocol.js';
import type { DialogueContext, LineSource } from '../../src/dialogue/context.js';
import { PhraseCache, situationSignature, stripNames } from '../../src/dialogue/phrase-cache.js';
import { DialogueTier, type DialogueBundle } from '../../src/dialogue/tier.js';
import { turn } from './helpers.js';

function model(text: (p: LineParams) => string): LineSource & { asked: number } {
  const m = {
    asked: 0,
    line: async (p: LineParams): Promise<LineResult> => {
      m.asked++;
      return { text: text(p), model: 'm', usage: { prompt_tokens: 1, completion_tokens: 1 }, cost_usd: 0 };
    },
  };
  return m;
}

function bundle(cache: Partial<DialogueBundle['speech']['phrase_cache']>): DialogueBundle {
  return {
    ...DEFAULT_BUNDLE,
    speech: { limits: { ...DEFAULT_BUNDLE.speech.limits, economy: 'Frugal' }, phrase_cache: { ...DEFAULT_BUNDLE.speech.phrase_cache, ...cache } },
  };
}

/** A guard greeting a newly arrived player; every agent here is in the same situation. */
function greeting(player: string): DialogueContext {
  return {
    persona: { name: 'Guard', role: 'guard', traits: {}, themes: [], goal: 'hold the gate', emotion: null, memory: '' },
    players: [{ id: 100, name: player, distance_m: 5 }],
    heard: [],
    doing: 'standing watch',
    event: null,
  };
}

/** Greets with a fresh agent id; returns the Say text (cache hits come back on the same tick). */
async function greet(tier: DialogueTier, agent: number, player: string): Promise<string | undefined> {
  const now = tier.onTick(agent, 0, greeting(player));
  if (now) return now.text;
  await turn();
  return tier.onTick(agent, 1, greeting(player))?.text;
}

test('like situations reuse cached lines up to max_reuse, with player names stripped', async () => {
  const m = model((p) => `Halt, ${p.situation.players[0]!.name}! State your business.`);
  // random() = 0: the cache is always preferred when it has a usable line.
  const tier = new DialogueTier({ bundle: bundle({ max_reuse: 2, allow_player_names: false }), lines: m, random: () => 0 });
  assert.equal(await greet(tier, 1, 'Alex'), 'Halt, Alex! State your business.', 'the live line keeps the name');
  assert.equal(await greet(tier, 2, 'Sam'), 'Halt, friend! State your business.', 'the cached line does not carry Alex to Sam');
  assert.equal(await greet(tier, 3, 'Kim'), 'Halt, friend! State your business.');
  assert.equal(m.asked, 1);
  assert.equal(await greet(tier, 4, 'Lee'), 'Halt, Lee! State your business.', 'after max_reuse uses the model is asked again');
  assert.equal(m.asked, 2);
  const c = tier.drainCounters();
  assert.equal(c.cacheHits, 2);
  assert.equal(c.spoke, 4);
});

test('allow_player_names keeps names in cached lines; policy.phrase_cache off never reuses', async () => {
  const named = new DialogueTier({ bundle: bundle({ allow_player_names: true }), lines: model(() => 'Morning, Alex.'), random: () => 0 });
  await greet(named, 1, 'Alex');
  assert.equal(await greet(named, 2, 'Sam'), 'Morning, Alex.');
  const m = model(() => 'Morning.');
  const off = new DialogueTier({ bundle: { ...bundle({}), policy: { phrase_cache: false } }, lines: m, random: () => 0 });
  await greet(off, 1, 'Alex');
  await greet(off, 2, 'Sam');
  assert.equal(m.asked, 2);
  assert.equal(off.drainCounters().cacheHits, 0);
});

test('when the model is down the cache still serves what it has', async () => {
  let fail = false;
  const flaky: LineSource = {
    line: async () => {
      if (fail) throw new Error('down');
      return { text: 'Keep moving.', model: 'm', usage: { prompt_tokens: 1, completion_tokens: 1 }, cost_usd: 0 };
    },
  };
  let now = 0;
  // random() = 0.999: with the model up, the cache is never preferred.
  const tier = new DialogueTier({ bundle: bundle({ max_reuse: 5 }), lines: flaky, random: () => 0.999, now: () => now });
  assert.equal(await greet(tier, 1, 'Alex'), 'Keep moving.');
  fail = true;
  assert.equal(await greet(tier, 2, 'Sam'), undefined, 'the model fails: silence, and the tier notes it is unavailable');
  assert.equal(tier.status().modelAvailable, false);
  assert.equal(await greet(tier, 3, 'Kim'), 'Keep moving.', 'served from the cache while the model backs off');
  now += 10_000;
  assert.equal(tier.status().modelAvailable, true, 'the back-off passed');
});

test('the cache holds at most variety_target lines and evicts the least recently used situation', () => {
  const cache = new PhraseCache({ variety_target: 3, max_reuse: 10, allow_player_names: false }, () => 0);
  cache.add('a', 'one', []);
  cache.add('a', 'two', []);
  cache.add('b', 'three', []);
  assert.equal(cache.lines, 3);
  cache.add('c', 'four', []);
  assert.equal(cache.lines, 2, 'the two lines of "a" went with it');
  assert.equal(cache.take('a', ''), null);
  assert.equal(cache.take('c', ''), 'four');
  cache.add('b', 'three', []);
  assert.equal(cache.lines, 2, 'a line already held is not added twice');
  assert.equal(cache.take('b', 'three'), 'three', 'the line to avoid is served when it is the only one');
});

test('signatures bucket emotion; name stripping matches whole words in any case', () => {
  assert.equal(situationSignature('guard', 'g', 'greet', '', { name: 'afraid', intensity: 0.9 }), 'guard|g|greet||afraid:high');
  assert.equal(
    situationSignature('guard', 'g', 'greet', '', { name: 'afraid', intensity: 0.8 }),
    situationSignature('guard', 'g', 'greet', '', { name: 'afraid', intensity: 0.7 }),
  );
  assert.equal(stripNames('ALEX! Alexander, alex.', ['Alex']), 'friend! Alexander, friend.');
  assert.equal(stripNames('Hi Zoë (Zoë)', ['Zoë', 'x']), 'Hi friend (friend)');
});

test('the economy sets how strongly the cache is preferred: Frugal reuses more than Chatty', async () => {
  const hits: Record<string, number> = {};
  for (const economy of ['Frugal', 'Chatty'] as const) {
    let n = 0;
    const b = bundle({ max_reuse: 1000, variety_target: 1000 });
    b.speech.limits.economy = economy;
    const tier = new DialogueTier({ bundle: b, lines: model(() => `greeting ${++n}`) });
    for (let agent = 1; agent <= 200; agent++) await greet(tier, agent, 'Alex');
    const c = tier.drainCounters();
    assert.equal(c.spoke, 200);
    hits[economy] = c.cacheHits;
  }
  assert.ok(hits.Frugal! > hits.Chatty! * 2, JSON.stringify(hits));
});
