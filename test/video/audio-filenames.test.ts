import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, startVideoServer } from './helpers.js';

/**
 * A track's name comes from `?filename=`, percent-encoded UTF-8. A byte that is not UTF-8
 * (`%FF`) decodes to U+FFFD, and the track was stored under a name holding it in place of what
 * was meant; it is 422 naming `filename`, as a photo's file name that is not UTF-8 is, and
 * nothing is stored. A UTF-8 name reads back as sent.
 */
test('an audio track named with a byte that is not UTF-8 is 422 naming filename and nothing is stored; a UTF-8 name reads back as sent', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const file = join(s.dir, 'tone.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1.5', file]);
    const wav = readFileSync(file);
    const upload = (query: string) =>
      fetch(`${s.url}/v1/audio?${query}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' }, body: wav });
    for (const name of ['%FF%FE.wav', 'caf%E9.wav', 'a%ED%A0%80.wav', '%EF%BF%BD.wav']) {
      const r = await upload(`filename=${name}`);
      assert.equal(r.status, 422, name);
      const body = (await r.json()) as { error: { code: string; details: { path: string; message: string }[] } };
      assert.equal(body.error.code, 'validation_failed');
      assert.deepEqual(
        body.error.details.map((d) => d.path),
        ['filename'],
      );
    }
    assert.deepEqual((await s.call('GET', '/v1/audio', { token: key })).body.data, []);
    const ok = await upload(`filename=${encodeURIComponent('Été 🎵.wav')}`);
    assert.equal(ok.status, 201);
    assert.equal(((await ok.json()) as { filename: string }).filename, 'Été 🎵.wav');
  } finally {
    await s.stop();
  }
});
