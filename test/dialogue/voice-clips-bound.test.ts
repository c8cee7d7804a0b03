import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import type { TranscribeParams, TranscribeResult } from '../../plugins/protocol.js';
import { HttpServer } from '../../src/http/server.js';
import { DialogueTier } from '../../src/dialogue/tier.js';
import { MAX_VOICE_CLIPS } from '../../src/dialogue/voice-files.js';
import { mountVoiceRoutes } from '../../src/dialogue/voice-routes.js';
import { tinyWav } from '../../bench/fake-openai.js';
import { tempDir } from '../helpers/paths.js';
import { until } from './helpers.js';

/**
 * POST /voice/:agent answered 202 to every clip, wrote it to disk and only then asked the
 * transcriber, whose queue (32) refuses what does not fit: past it a clip was accepted and
 * dropped, and nothing bounded the clips being written at once (each up to 10 MiB on disk). At
 * most MAX_VOICE_CLIPS are now between acceptance and the end of their transcription; another
 * is 503 with Retry-After, and a place comes back when a transcription ends.
 */
test('voice in accepts at most MAX_VOICE_CLIPS clips at once (503 with Retry-After past it); every accepted clip is transcribed', async () => {
  assert.equal(MAX_VOICE_CLIPS, 16);
  const dir = tempDir();
  const waiting: Array<() => void> = [];
  const heard: string[] = [];
  const tier = new DialogueTier({
    bundle: DEFAULT_BUNDLE,
    lines: null,
    audioDir: dir.path,
    voiceIn: {
      transcribe: (p: TranscribeParams): Promise<TranscribeResult> =>
        new Promise((resolve) =>
          waiting.push(() => {
            heard.push(p.path);
            resolve({ text: 'hello' });
          }),
        ),
    },
  });
  const server = new HttpServer();
  mountVoiceRoutes(server, tier);
  const port = await server.listen('127.0.0.1', 0);
  const send = () => fetch(`http://127.0.0.1:${port}/voice/5`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: tinyWav(800) });
  try {
    for (let i = 0; i < MAX_VOICE_CLIPS; i++) assert.equal((await send()).status, 202, `clip ${i + 1}`);
    const refused = await send();
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'unavailable');
    assert.match(body.error.message, /voice clips/);
    await until(() => waiting.length === MAX_VOICE_CLIPS);
    assert.ok(readdirSync(join(dir.path, 'incoming')).length <= MAX_VOICE_CLIPS);
    waiting.shift()!();
    await until(() => heard.length === 1 && readdirSync(join(dir.path, 'incoming')).length === MAX_VOICE_CLIPS - 1);
    assert.equal((await send()).status, 202, 'a place came back');
    assert.equal((await send()).status, 503);
    await until(() => waiting.length === MAX_VOICE_CLIPS);
    while (waiting.length > 0) waiting.shift()!();
    await until(() => heard.length === MAX_VOICE_CLIPS + 1, 10_000);
    assert.equal(tier.drainCounters().transcriptions, MAX_VOICE_CLIPS + 1, 'every accepted clip was transcribed');
    await until(() => readdirSync(join(dir.path, 'incoming')).length === 0);
  } finally {
    await server.close();
    await tier.close();
    dir.dispose();
  }
});
