import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BUNDLE, type ConfigBundle } from '../../brain/index.js';
import type { ConfigSource } from '../../src/sidecar/config/config-source.js';
import type { Sidecar } from '../../src/sidecar/service.js';
import { dialogueFrom, stateFileFrom } from '../../src/cli/commands/sidecar.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../bench/fake-openai.js';
import { tempDir } from '../helpers/paths.js';
import { post, startTest } from './helpers.js';

interface Intent {
  kind: string;
  [k: string]: unknown;
}
interface TickReply {
  agent: number;
  intents: Intent[];
}

function env(fake: { baseUrl: string }): NodeJS.ProcessEnv {
  return { ...process.env, SERVICE_LLM_BASE_URL: fake.baseUrl, SERVICE_LLM_MODEL: 'fake-model', SERVICE_LLM_KEY: 'sk-test', SERVICE_TTS_ENGINE: 'off' };
}

/** A calm character with an unarmed, friendly player 6 m away who just spoke to it. */
function meeting(agent: number, time: number, heard = false): Record<string, unknown> {
  return {
    snapshot: {
      agent,
      time_s: time,
      self_state: { pos: { x: 100, y: 0, z: 100 }, heading_deg: 0, health: 100, blood: 5000, hunger: 10, thirst: 10, has_weapon: true, ammo: 30 },
      targets: [{ id: 900, kind: 'player', pos: { x: 106, y: 0, z: 100 }, hostile: false, visible: true, name: 'Alex' }],
      ...(heard ? { heard: [{ from: 900, text: 'Got any water?', at_s: 100 }] } : {}),
    },
    profile: { name: 'Mira', role: 'trader' },
  };
}

class FixedSource implements ConfigSource {
  constructor(private readonly bundle: ConfigBundle) {}
  async start(): Promise<ConfigBundle> {
    return this.bundle;
  }
  async stop(): Promise<void> {}
  status() {
    return { version: this.bundle.version, source: 'defaults' as const, location: null, lastError: null, lastErrorSince: null };
  }
}

async function tick(s: Sidecar, body: Record<string, unknown>): Promise<TickReply> {
  const res = await post(s.url, body);
  assert.equal(res.status, 200, res.bytes.toString());
  return res.json() as TickReply;
}

/** Ticks one agent, game time advancing 0.2 s per tick, until a Say comes back (bounded). */
async function tickUntilSay(s: Sidecar, agent: number, from: number, heard = false): Promise<{ reply: TickReply; ticks: number }> {
  const end = Date.now() + 15_000;
  for (let i = 0; Date.now() < end; i++) {
    const reply = await tick(s, meeting(agent, from + i * 0.2, heard));
    if (reply.intents.some((x) => x.kind === 'Say')) return { reply, ticks: i + 1 };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no Say within the budget');
}

function assertScalars(intents: Intent[]): void {
  for (const intent of intents) {
    for (const v of Object.values(intent)) {
      const ok = ['string', 'number', 'boolean'].includes(typeof v) || (typeof v === 'object' && v !== null && Object.keys(v).join() === 'x,y,z');
      assert.ok(ok, `intent fields are scalars or {x,y,z}: ${JSON.stringify(intent)}`);
    }
  }
}

async function withFake<T>(fn: (fake: FakeOpenAI) => Promise<T>, latencyMs = 0): Promise<T> {
  const fake = await startFakeOpenAI({ latencyMs });
  try {
    return await fn(fake);
  } finally {
    await fake.close();
  }
}

for (const workers of [0, 1]) {
  test(`a player in range gets a Say with a line_id on a later tick (${workers ? 'workers' : 'inline'}); telemetry counts it`, () =>
    withFake(async (fake) => {
      fake.reply = () => 'Evening, Alex. Water is scarce, friend.';
      const s = await startTest({ workers, dialogue: { env: env(fake) } });
      try {
        const { reply, ticks } = await tickUntilSay(s, 7, 100, true);
        assert.ok(ticks > 1, 'the line comes on a later tick than the one that asked');
        const say = reply.intents.at(-1)!;
        assert.equal(say.kind, 'Say', "the Say comes after the brain's own intents");
        assert.equal(say.text, 'Evening, Alex. Water is scarce, friend.');
        assert.equal(say.channel, 'proximity');
        assert.match(String(say.line_id), /^l_[a-z0-9]+$/);
        assert.ok(reply.intents.length > 1);
        assertScalars(reply.intents);
        // The prompt carries the brain's persona: the profile name, the heard line and the player.
        const prompt = JSON.stringify(fake.chats[0]);
        assert.match(prompt, /Mira/);
        assert.match(prompt, /Got any water\?/);
        assert.match(prompt, /Alex/);
        const t = await s.drainTelemetry();
        assert.equal(t.linesSpoken, 1);
        assert.equal(t.events.spoke, 1);
        assert.equal(t.events.heard, 1);
        assert.equal(t.llmTokens, 132);
        assert.equal(t.dialogue?.llmRequests, 1);
        assert.ok(t.agents >= 1);
        assert.equal((await s.drainTelemetry()).linesSpoken, 0, 'drained counters start over');
      } finally {
        await s.close();
      }
    }));
}

test('ticks never wait on the model: a model answering in 2 s leaves ticks answered meanwhile', () =>
  withFake(async (fake) => {
    const s = await startTest({ dialogue: { env: env(fake) } });
    try {
      let time = 100;
      await tick(s, meeting(7, time, true));
      // The plugin process starts on the first request; wait (bounded) until the model has it.
      const end = Date.now() + 10_000;
      while (fake.hits('chat') === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      assert.equal(fake.hits('chat'), 1);
      const before = s.ticks.counters.ok;
      for (let i = 1; i <= 20; i++) {
        const r = await tick(s, meeting(7, (time += 0.2), true));
        assert.ok(!r.intents.some((x) => x.kind === 'Say'));
      }
      // The model holds the request and has not answered it: these 20 ticks were answered without it.
      assert.equal(fake.chats.length, 0);
      assert.equal(s.ticks.counters.ok - before, 20);
    } finally {
      await s.close();
    }
  }, 2000));

test('policy.llm_dialogue false: never a Say, the model is never asked', () =>
  withFake(async (fake) => {
    const bundle: ConfigBundle = { ...DEFAULT_BUNDLE, policy: { ...DEFAULT_BUNDLE.policy, llm_dialogue: false } };
    const s = await startTest({ source: new FixedSource(bundle), dialogue: { env: env(fake) } });
    try {
      for (let i = 0; i < 30; i++) {
        const r = await tick(s, meeting(7, 100 + i, true));
        assert.ok(!r.intents.some((x) => x.kind === 'Say'));
      }
      assert.equal(fake.hits('chat'), 0);
      assert.equal(s.dialogue?.status().enabled, false);
    } finally {
      await s.close();
    }
  }));

test('model down: characters stay reactive and silent, every tick answers 200', async () => {
  const fake = await startFakeOpenAI();
  await fake.close();
  const s = await startTest({ dialogue: { env: env(fake) } });
  try {
    const end = Date.now() + 15_000;
    let i = 0;
    // Until the plugin has failed at least once and the tier backs off.
    while ((s.dialogue?.status().modelAvailable ?? false) && Date.now() < end) {
      const r = await tick(s, meeting(7, 100 + i++ * 0.2, true));
      assert.ok(!r.intents.some((x) => x.kind === 'Say'));
      assert.ok(r.intents.length > 0, 'the brain still answers');
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(s.dialogue?.status().modelAvailable, false);
    for (let j = 0; j < 10; j++) {
      const r = await tick(s, meeting(8 + j, 200));
      assert.ok(!r.intents.some((x) => x.kind === 'Say'));
    }
    assert.equal(s.ticks.counters.failed, 0);
    assert.ok((await s.drainTelemetry()).dialogue!.llmErrors >= 1);
  } finally {
    await s.close();
  }
});

test('voice routes sit behind the same bearer gate as /tick', () =>
  withFake(async (fake) => {
    const s = await startTest({ token: 'secret', dialogue: { env: env(fake) } });
    try {
      const anon = await fetch(`${s.url}/audio/l_abc.wav`);
      assert.equal(anon.status, 401);
      assert.equal(anon.headers.get('www-authenticate'), 'Bearer');
      const authed = await fetch(`${s.url}/audio/l_abc.wav`, { headers: { authorization: 'Bearer secret' } });
      assert.equal(authed.status, 404);
      assert.equal(((await authed.json()) as { error: { code: string } }).error.code, 'not_found');
      const voice = await fetch(`${s.url}/voice/7`, { method: 'POST', headers: { authorization: 'Bearer secret', 'content-type': 'audio/wav' }, body: 'RIFF' });
      assert.equal(voice.status, 503, 'voice in is not configured');
    } finally {
      await s.close();
    }
  }));

test('voice out configured: the Say carries audio_url, served by the sidecar as audio/wav', () =>
  withFake(async (fake) => {
    const audio = tempDir('brainstem-audio-');
    const voiceEnv = { ...env(fake), SERVICE_TTS_ENGINE: 'openai', SERVICE_TTS_BASE_URL: fake.baseUrl };
    const s = await startTest({ dialogue: { env: voiceEnv, audioDir: audio.path } });
    try {
      const { reply } = await tickUntilSay(s, 7, 100, true);
      const say = reply.intents.at(-1)!;
      assert.match(String(say.audio_url), /^\/audio\/l_[a-z0-9]+\.wav$/);
      // Under load the game clock of the loop may pass a cooldown and ask for a second line before
      // this one is read back, so the check is on this line's speech, not on a count of one.
      assert.ok(
        fake.speeches.some((x) => x.input === say.text),
        'the Say was spoken by the TTS engine',
      );
      const res = await fetch(`${s.url}${String(say.audio_url)}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'audio/wav');
      assert.equal(
        Buffer.from(await res.arrayBuffer())
          .subarray(0, 4)
          .toString('latin1'),
        'RIFF',
      );
      const spoken = fake.speeches.reduce((n, x) => n + String(x.input).length, 0);
      assert.equal((await s.drainTelemetry()).ttsCharacters, spoken);
    } finally {
      await s.close();
      audio.dispose();
    }
  }));

test('the CLI reads the dialogue tier from SERVICE_LLM_*; voice out only when speech is configured', () => {
  const base = { SERVICE_LLM_BASE_URL: 'http://127.0.0.1:9/v1', SERVICE_LLM_MODEL: 'm' };
  assert.equal(dialogueFrom({}, {}), null);
  assert.equal(dialogueFrom({}, { SERVICE_LLM_BASE_URL: 'http://x/v1' }), null);
  const plain = dialogueFrom({}, base)!;
  assert.equal(plain.env?.SERVICE_TTS_ENGINE, 'off');
  assert.equal(plain.audioDir, undefined);
  const voiced = dialogueFrom({ audioDir: '/tmp/a' }, { ...base, SERVICE_TTS_ENGINE: 'espeak' })!;
  assert.equal(voiced.env?.SERVICE_TTS_ENGINE, 'espeak');
  assert.equal(voiced.audioDir, '/tmp/a');
  // Never inside the bundle directory: under the working directory, or the control plane's state directory.
  assert.equal(stateFileFrom({ bundle: '/srv/b' }, '/home/op'), '/home/op/.brainstem/brain-state.json');
  assert.equal(stateFileFrom({}, '/home/op'), '/home/op/.brainstem/brain-state.json');
  assert.equal(stateFileFrom({}, '/home/op', '/home/op/.brainstem/sidecar-7'), '/home/op/.brainstem/sidecar-7/brain-state.json');
  assert.equal(stateFileFrom({ bundle: '/srv/b', state: '' }, '/home/op'), null);
  assert.equal(stateFileFrom({ state: 'mem.json' }, '/home/op'), '/home/op/mem.json');
});
