import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import type { DialogueContext, SayIntent } from '../../src/dialogue/context.js';
import { PluginSupervisor } from '../../src/dialogue/supervisor.js';
import { DialogueTier, type DialogueBundle } from '../../src/dialogue/tier.js';
import { createDialogueTier } from '../../src/dialogue/create.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../bench/fake-openai.js';
import { until } from './helpers.js';

const BUNDLE: DialogueBundle = {
  ...DEFAULT_BUNDLE,
  game: { name: 'Dead Acres', premise: 'Farms overrun by the dead.', goal: 'Hold the farmhouse until the rescue.' },
  speech: {
    limits: { per_5min: 100, per_hour: 1000, per_day: 10_000, economy: 'Chatty' },
    phrase_cache: { variety_target: 200, max_reuse: 0, allow_player_names: false },
  },
};

function env(fake: FakeOpenAI, model = 'gpt-4o-mini'): NodeJS.ProcessEnv {
  return { ...process.env, SERVICE_LLM_BASE_URL: fake.baseUrl, SERVICE_LLM_MODEL: model, SERVICE_LLM_KEY: 'sk-test', SERVICE_TTS_ENGINE: 'off' };
}

function ctx(over: Partial<DialogueContext> = {}): DialogueContext {
  return {
    persona: {
      name: 'Mira',
      role: 'trader',
      traits: { extraversion: 0.9, neuroticism: 0.1 },
      themes: ['collects old maps'],
      goal: 'sell the last fuel can',
      emotion: { name: 'hopeful', intensity: 0.8 },
      memory: 'Alex paid fairly last week.',
    },
    players: [{ id: 3, name: 'Alex', distance_m: 6 }],
    heard: [],
    doing: 'minding the stall',
    event: null,
    ...over,
  };
}

/**
 * Ticks one agent every few ms until it says something. Game time moves at about real
 * speed (0.01 s per poll of ~5 ms), so that a line's age stays within the tier's lineTtlS.
 */
async function tickUntilSay(tier: DialogueTier, agent: number, t0: number, context: DialogueContext): Promise<{ say: SayIntent; t: number; nulls: number }> {
  let t = t0;
  let nulls = 0;
  let say: SayIntent | null = null;
  await until(() => {
    say = tier.onTick(agent, t, context);
    t += 0.01;
    if (!say) nulls++;
    return say !== null;
  });
  return { say: say!, t, nulls };
}

test('a line comes back as Say on a later tick, cleaned, with tokens and spend counted', async () => {
  const fake = await startFakeOpenAI({ latencyMs: 50 });
  fake.reply = () => '  "Mira: Fuel\'s not cheap, Alex. Twenty rounds."  \nsecond line ignored';
  const tier = createDialogueTier({ bundle: BUNDLE, env: env(fake) });
  try {
    const heard = ctx({ heard: [{ from: 3, text: 'how much for the fuel?', at_s: 10 }] });
    assert.equal(tier.onTick(17, 10, heard), null, 'the first tick only asks');
    const { say, nulls } = await tickUntilSay(tier, 17, 11, heard);
    assert.ok(nulls >= 1);
    assert.equal(say.kind, 'Say');
    assert.equal(say.text, "Fuel's not cheap, Alex. Twenty rounds.");
    assert.equal(say.channel, 'proximity');
    assert.equal(say.audio_url, undefined);
    assert.equal(fake.chats.length, 1);
    const prompt = (fake.chats[0]!.messages as Array<{ content: string }>).map((m) => m.content).join('\n');
    for (const part of [
      'Dead Acres',
      'Farms overrun by the dead.',
      'Hold the farmhouse',
      'Mira',
      'trader',
      'high extraversion',
      'low neuroticism',
      'collects old maps',
      'power went out',
      'sell the last fuel can',
      'very hopeful',
      'Alex paid fairly',
      'Alex (6 m)',
      'how much for the fuel?',
      'minding the stall',
    ]) {
      assert.ok(prompt.includes(part), `the prompt carries "${part}"`);
    }
    assert.equal(fake.chats[0]!.model, 'gpt-4o-mini');
    const c = tier.drainCounters();
    assert.equal(c.spoke, 1);
    assert.equal(c.heard, 1);
    assert.equal(c.llmPromptTokens, 120);
    assert.equal(c.llmCompletionTokens, 12);
    assert.equal(c.llmTokens, 132);
    assert.ok(Math.abs(c.spendUsd - (120 * 0.15 + 12 * 0.6) / 1e6) < 1e-12, `spend ${c.spendUsd}`);
    // The split telemetry's economy carries: all of it the model's.
    assert.equal(c.llmUsd, c.spendUsd);
    assert.equal(c.ttsUsd, 0);
  } finally {
    await tier.close();
    await fake.close();
  }
});

test('the default survival framing is used when the bundle has no game; long lines are capped', async () => {
  const fake = await startFakeOpenAI();
  fake.reply = () => 'word '.repeat(100);
  const tier = createDialogueTier({ bundle: { ...BUNDLE, game: null }, env: env(fake, 'local-model'), maxChars: 40 });
  try {
    tier.onTick(1, 0, ctx());
    const { say } = await tickUntilSay(tier, 1, 1, ctx());
    assert.ok(say.text.length <= 40, say.text);
    assert.ok(say.text.endsWith('…'));
    assert.match((fake.chats[0]!.messages as Array<{ content: string }>)[0]!.content, /"Survival"/);
    assert.equal(tier.drainCounters().spendUsd, 0, 'an unlisted model costs the table default (0)');
  } finally {
    await tier.close();
    await fake.close();
  }
});

test('SERVICE_LLM_PRICES overrides the price table', async () => {
  const fake = await startFakeOpenAI();
  const tier = createDialogueTier({
    bundle: BUNDLE,
    env: { ...env(fake, 'house-model'), SERVICE_LLM_PRICES: '{"models":{"house-model":{"input":1000000,"output":0}}}' },
  });
  try {
    tier.onTick(1, 0, ctx());
    await tickUntilSay(tier, 1, 1, ctx());
    assert.equal(tier.drainCounters().spendUsd, 120);
  } finally {
    await tier.close();
    await fake.close();
  }
});

test('429 with Retry-After and 500 leave characters silent and stop the asking until the back-off passes', async () => {
  const fake = await startFakeOpenAI();
  let now = 1_000_000;
  const tier = createDialogueTier({ bundle: BUNDLE, env: env(fake), now: () => now });
  try {
    fake.failNext(429, 1, { 'retry-after': '1' });
    tier.onTick(1, 0, ctx());
    await until(() => tier.drainCounters().llmErrors === 1);
    const status = tier.status();
    assert.equal(status.modelAvailable, false);
    assert.ok(status.retryInMs > 500 && status.retryInMs <= 1000, `retry in ${status.retryInMs} ms (Retry-After: 1)`);
    for (let t = 1; t < 200; t++) assert.equal(tier.onTick(1 + (t % 5), t, ctx()), null);
    assert.equal(fake.hits('chat'), 1, 'nothing asked while backing off');

    // The plugin keeps its own back-off on the wall clock: once both have passed, lines flow again.
    await new Promise((r) => setTimeout(r, 1050));
    now += 1050;
    fake.failNext(500, 1, { 'retry-after-ms': '150' });
    tier.onTick(9, 300, ctx());
    await until(() => tier.drainCounters().llmErrors === 1);
    assert.equal(fake.hits('chat'), 2);
    assert.equal(tier.status().modelAvailable, false);
    now += 200;
    await new Promise((r) => setTimeout(r, 200));
    const { say } = await tickUntilSay(tier, 9, 301, ctx({ heard: [{ from: 3, text: 'hello?', at_s: 301 }] }));
    assert.equal(say.text, 'Stay close, it is not safe here.');
  } finally {
    await tier.close();
    await fake.close();
  }
});

test('a dialogue plugin SIGKILLed mid-request is restarted, and onTick neither throws nor waits', async () => {
  const fake = await startFakeOpenAI({ latencyMs: 400 });
  const supervisor = new PluginSupervisor({ name: 'dialogue', env: env(fake), backoffMs: 50 });
  let now = 0;
  const tier = new DialogueTier({ bundle: BUNDLE, lines: { line: (p) => supervisor.request('line', p) }, now: () => now, unavailableMs: 100 });
  try {
    tier.onTick(1, 0, ctx());
    await until(() => fake.hits('chat') === 1);
    process.kill(supervisor.pid!, 'SIGKILL');
    let t = 1;
    // Ticks keep coming while the child is dead and restarting; each returns at once.
    await until(() => {
      assert.equal(tier.onTick(1, t++, ctx()), null);
      return tier.status().modelAvailable === false;
    });
    assert.equal(tier.drainCounters().llmErrors, 1);
    await until(() => supervisor.status.state === 'ready' || supervisor.status.state === 'idle');
    now += 1000;
    const { say } = await tickUntilSay(tier, 1, t, ctx({ heard: [{ from: 3, text: 'you there?', at_s: t }] }));
    assert.equal(say.text, 'Stay close, it is not safe here.');
    assert.equal(supervisor.status.restarts, 1);
  } finally {
    await tier.close();
    await supervisor.close();
    await fake.close();
  }
});
