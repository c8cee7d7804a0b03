import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, waitForVideo } from './helpers.js';

/** Mean volume of a file's audio in dB (ffmpeg's volumedetect); silence is -91 dB. */
function meanVolume(file: string): number {
  const err = execFileSync('sh', ['-c', `ffmpeg -hide_banner -i '${file}' -af volumedetect -f null - 2>&1`], { encoding: 'utf8' });
  return Number(/mean_volume: (-?[\d.]+) dB/.exec(err)?.[1] ?? NaN);
}

test('a voice-over read by the TTS add-on (espeak-ng WebAssembly, offline) is heard; silence stays the default', async () => {
  process.env.SERVICE_TTS_ENGINE = 'espeak-wasm';
  const s = await startVideoServer({ limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key, { area: 64, description: 'Bright flat near the river.' });
    await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: testImage('jpg', '320x240').toString('base64') }] } });
    const volumes: number[] = [];
    for (const voiceover of [true, false]) {
      const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1', voiceover } });
      assert.equal(v.status, 202, JSON.stringify(v.body));
      const done = await waitForVideo(s, key, v.body.id, 120_000);
      assert.equal(done.status, 'completed', done.error);
      const res = await fetch(`${s.url}/v1/assets/${done.video_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
      const file = join(s.dir, `v-${voiceover}.mp4`);
      writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      volumes.push(meanVolume(file));
    }
    assert.ok(volumes[0]! > -50, `voice-over mean volume ${volumes[0]} dB`);
    assert.ok(volumes[1]! < -80, `default mean volume ${volumes[1]} dB`);
  } finally {
    delete process.env.SERVICE_TTS_ENGINE;
    await s.stop();
  }
});
