import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import type { VoiceParam } from '../../plugins/protocol.js';
import { HttpServer } from '../../src/http/server.js';
import type { DialogueContext, SayIntent } from '../../src/dialogue/context.js';
import { createDialogueTier } from '../../src/dialogue/create.js';
import { PluginSupervisor } from '../../src/dialogue/supervisor.js';
import type { DialogueBundle, DialogueTier } from '../../src/dialogue/tier.js';
import { voiceFor } from '../../src/dialogue/voice.js';
import { mountVoiceRoutes } from '../../src/dialogue/voice-routes.js';
import { startFakeOpenAI, tinyWav } from '../../bench/fake-openai.js';
import { tempDir } from '../helpers/paths.js';
import { until } from './helpers.js';

/** Reads a WAV's header: format and data length, checked independently of the plugin's own parser. */
function wavInfo(buf: Buffer): { channels: number; rate: number; bits: number; dataBytes: number; seconds: number } {
  assert.equal(buf.toString('latin1', 0, 4), 'RIFF');
  assert.equal(buf.toString('latin1', 8, 12), 'WAVE');
  let off = 12;
  let fmt: { channels: number; rate: number; bits: number; byteRate: number } | null = null;
  while (off + 8 <= buf.length) {
    const id = buf.toString('latin1', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    if (id === 'fmt ')
      fmt = { channels: buf.readUInt16LE(off + 10), rate: buf.readUInt32LE(off + 12), byteRate: buf.readUInt32LE(off + 16), bits: buf.readUInt16LE(off + 22) };
    if (id === 'data') {
      assert.ok(fmt, 'fmt chunk before data');
      const dataBytes = Math.min(size, buf.length - off - 8);
      return { channels: fmt.channels, rate: fmt.rate, bits: fmt.bits, dataBytes, seconds: dataBytes / fmt.byteRate };
    }
    off += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

const VOICE: VoiceParam = { pitch: 40, speed: 160, variant: 'f2', named: 'nova' };

async function synthesizeWith(
  engine: string,
  envExtra: NodeJS.ProcessEnv = {},
): Promise<{ result: { file: string; bytes: number; duration_s: number; characters: number; engine: string }; wav: Buffer }> {
  const dir = tempDir();
  const s = new PluginSupervisor({ name: 'voice-out', env: { ...process.env, SERVICE_TTS_ENGINE: engine, ...envExtra }, requestTimeoutMs: 30_000 });
  try {
    const result = await s.request('synthesize', { text: 'Stay where you are, stranger.', file: 'l_test1.wav', dir: dir.path, voice: VOICE });
    return { result, wav: readFileSync(join(dir.path, result.file)) };
  } finally {
    await s.close();
    dir.dispose();
  }
}

test('espeak-ng (WASM package) writes a valid WAV with a non-zero duration', async () => {
  const { result, wav } = await synthesizeWith('espeak-wasm');
  assert.equal(result.engine, 'espeak-wasm');
  const info = wavInfo(wav);
  assert.equal(info.channels, 1);
  assert.equal(info.bits, 16);
  assert.ok(info.dataBytes > 1000, `data bytes ${info.dataBytes}`);
  assert.ok(info.seconds > 0.5 && info.seconds < 10, `seconds ${info.seconds}`);
  assert.equal(result.characters, 'Stay where you are, stranger.'.length);
  assert.ok(Math.abs(result.duration_s - info.seconds) < 0.01);
});

const hasBinary = spawnSync('espeak-ng', ['--version']).status === 0;
test('espeak-ng (Debian binary) writes a valid WAV', { skip: hasBinary ? false : 'espeak-ng binary not installed' }, async () => {
  const { result, wav } = await synthesizeWith('espeak');
  assert.equal(result.engine, 'espeak');
  const info = wavInfo(wav);
  assert.ok(info.dataBytes > 1000 && info.seconds > 0.5, JSON.stringify(info));
});

test('an OpenAI-compatible /audio/speech is used when configured, with the character voice', async () => {
  const fake = await startFakeOpenAI();
  try {
    const { result, wav } = await synthesizeWith('auto', { SERVICE_TTS_BASE_URL: fake.baseUrl, SERVICE_TTS_MODEL: 'tts-test' });
    assert.equal(result.engine, 'openai');
    assert.deepEqual(wav, tinyWav());
    assert.equal(fake.speeches[0]!.voice, 'nova');
    assert.equal(fake.speeches[0]!.model, 'tts-test');
    assert.equal(fake.speeches[0]!.input, 'Stay where you are, stranger.');
    assert.equal(fake.speeches[0]!.response_format, 'wav');
  } finally {
    await fake.close();
  }
});

test('voices differ between characters and follow traits', () => {
  const a = voiceFor('Mira', { extraversion: 0.9 });
  const b = voiceFor('Mira', { extraversion: 0.1 });
  assert.ok(a.pitch > b.pitch && a.speed > b.speed, 'extraversion raises pitch and speed');
  assert.deepEqual(voiceFor('Mira', { extraversion: 0.9 }), a, 'stable for the same character');
  const variants = new Set(['Ana', 'Bo', 'Cy', 'Dee', 'Eli', 'Fay', 'Gus', 'Hal'].map((n) => voiceFor(n, {}).variant));
  assert.ok(variants.size >= 4, `variants ${[...variants].join(',')}`);
});

const BUNDLE: DialogueBundle = {
  ...DEFAULT_BUNDLE,
  speech: {
    limits: { per_5min: 100, per_hour: 1000, per_day: 10_000, economy: 'Chatty' },
    phrase_cache: { variety_target: 10, max_reuse: 0, allow_player_names: false },
  },
};

function ctx(heard: DialogueContext['heard'] = []): DialogueContext {
  return {
    persona: { name: 'Bo', role: 'guard', traits: {}, themes: [], goal: '', emotion: null, memory: '' },
    players: [],
    heard,
    doing: 'standing guard',
    event: null,
  };
}

async function sidecar(tier: DialogueTier): Promise<{ base: string; server: HttpServer }> {
  const server = new HttpServer();
  mountVoiceRoutes(server, tier);
  const port = await server.listen('127.0.0.1', 0);
  return { base: `http://127.0.0.1:${port}`, server };
}

test('voice in: POST /voice/:agent → 202, transcribed by the plugin, answered on a later tick with audio served at audio_url', async () => {
  const fake = await startFakeOpenAI();
  fake.transcript = ' is anyone guarding the gate? ';
  fake.reply = () => 'I am. Keep your hands visible.';
  const dir = tempDir();
  const tier = createDialogueTier({
    bundle: BUNDLE,
    audioDir: dir.path,
    env: {
      ...process.env,
      SERVICE_LLM_BASE_URL: fake.baseUrl,
      SERVICE_LLM_MODEL: 'm',
      SERVICE_STT_BASE_URL: fake.baseUrl,
      SERVICE_TTS_ENGINE: 'espeak-wasm',
      SERVICE_TTS_PRICE_PER_MCHAR: '15',
    },
  });
  const { base, server } = await sidecar(tier);
  try {
    const clip = tinyWav(8000);
    const res = await fetch(`${base}/voice/42`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: clip });
    assert.equal(res.status, 202);
    assert.deepEqual(await res.json(), { accepted: true, agent: 42, bytes: clip.length });
    await until(() => fake.transcriptions.length === 1);
    const sent = fake.transcriptions[0]!;
    assert.equal(sent.fields.model, 'whisper-1');
    assert.deepEqual(sent.file, clip);
    assert.equal(sent.mime, 'audio/wav');
    await until(() => tier.drainCounters().transcriptions === 1);
    assert.equal(
      existsSync(join(dir.path, 'incoming'))
        ? spawnSync('ls', [join(dir.path, 'incoming')])
            .stdout.toString()
            .trim()
        : '',
      '',
      'the clip file is deleted',
    );

    let say: SayIntent | null = null;
    let t = 100;
    await until(() => (say = tier.onTick(42, (t += 0.01), ctx())) !== null, 20_000);
    const got = say as unknown as SayIntent;
    assert.equal(got.text, 'I am. Keep your hands visible.');
    const prompt = (fake.chats[0]!.messages as Array<{ content: string }>)[1]!.content;
    assert.match(prompt, /someone: "is anyone guarding the gate\?"/);
    assert.match(got.audio_url ?? '', /^\/audio\/l_[a-z0-9]+\.wav$/);
    const audio = await fetch(base + got.audio_url);
    assert.equal(audio.status, 200);
    assert.equal(audio.headers.get('content-type'), 'audio/wav');
    const info = wavInfo(Buffer.from(await audio.arrayBuffer()));
    assert.ok(info.seconds > 0.5);
    const c = tier.drainCounters();
    assert.equal(c.ttsCharacters, got.text.length);
    assert.equal(c.heard, 1);
    assert.ok(Math.abs(c.spendUsd - (got.text.length * 15) / 1e6) < 1e-12, 'the TTS price applies; the model is unpriced');
    assert.equal(c.ttsUsd, c.spendUsd);
    assert.equal(c.llmUsd, 0);
  } finally {
    await server.close();
    await tier.close();
    await fake.close();
    dir.dispose();
  }
});

test('voice routes refuse what they must: types, sizes, ids, unknown files and path traversal', async () => {
  const dir = tempDir();
  const tier = createDialogueTier({ bundle: BUNDLE, audioDir: dir.path, env: { SERVICE_STT_BASE_URL: 'http://127.0.0.1:9/v1', SERVICE_TTS_ENGINE: 'off' } });
  const { base, server } = await sidecar(tier);
  try {
    const cases: Array<[string, RequestInit, number, string]> = [
      ['/voice/1', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' }, 415, 'unsupported_media_type'],
      ['/voice/1', { method: 'POST', body: tinyWav() }, 415, 'unsupported_media_type'],
      ['/voice/1', { method: 'POST', headers: { 'content-type': 'audio/ogg' }, body: Buffer.alloc(0) }, 400, 'bad_request'],
      ['/voice/x1', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() }, 404, 'not_found'],
      // Past 2^53 - 1 an id would round to another agent's (…993 was taken as …992); a leading zero or a plus names no agent either.
      ['/voice/9007199254740993', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() }, 404, 'not_found'],
      ['/voice/9999999999999999', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() }, 404, 'not_found'],
      ['/voice/07', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() }, 404, 'not_found'],
      ['/voice/-0', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() }, 404, 'not_found'],
      ['/voice/1', { method: 'POST', headers: { 'content-type': 'audio/webm' }, body: Buffer.alloc(10 * 1024 * 1024 + 1) }, 413, 'payload_too_large'],
      ['/audio/nope.wav', {}, 404, 'not_found'],
      ['/audio/..%2F..%2Fetc%2Fpasswd', {}, 404, 'not_found'],
      ['/audio/%2E%2E%2Fsecret.wav', {}, 404, 'not_found'],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await fetch(base + path, init);
      assert.equal(res.status, status, `${init.method ?? 'GET'} ${path}`);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, code, path);
    }
    const ok = await fetch(`${base}/voice/7`, { method: 'POST', headers: { 'content-type': 'audio/webm; codecs=opus' }, body: Buffer.from('webm') });
    assert.equal(ok.status, 202, 'parameters of the content type are ignored');
    for (const agent of ['9007199254740991', '-9007199254740991', '-3']) {
      const edge = await fetch(`${base}/voice/${agent}`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() });
      assert.equal(edge.status, 202, agent);
      assert.equal(((await edge.json()) as { agent: number }).agent, Number(agent));
    }
    // A refused type is quoted cut, as every echoed value is (it was echoed whole, up to the request head's size).
    const long = await fetch(`${base}/voice/1`, { method: 'POST', headers: { 'content-type': `audio/${'x'.repeat(20_000)}` }, body: tinyWav() });
    assert.equal(long.status, 415);
    assert.ok(((await long.json()) as { error: { message: string } }).error.message.length < 300);
  } finally {
    await server.close();
    await tier.close();
    dir.dispose();
  }
});

test('voice in is 503 when not configured', async () => {
  const dir = tempDir();
  const tier = createDialogueTier({ bundle: BUNDLE, audioDir: dir.path, env: { SERVICE_TTS_ENGINE: 'off' } });
  const { base, server } = await sidecar(tier);
  try {
    const res = await fetch(`${base}/voice/1`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav() });
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unavailable');
  } finally {
    await server.close();
    await tier.close();
    dir.dispose();
  }
});
