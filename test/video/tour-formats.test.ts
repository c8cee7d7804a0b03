import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, waitDone, addPhotos } from './helpers.js';

test('formats at once: one 202 listing a video per format (one batch), each rendered at its size with its poster and callback', async () => {
  const s = await startVideoServer({ limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key, { description: 'Bright and quiet. Near the park.', area: 64, bathrooms: 1 });
    await addPhotos(s, key, pid, 2);
    // With a music track: one sound for every format (a filter's output is split between them).
    const wav = join(s.dir, 'music.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=330:d=2', wav]);
    const music = await fetch(`${s.url}/v1/audio`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' },
      body: readFileSync(wav),
    });
    assert.equal(music.status, 201);
    const musicId = ((await music.json()) as { id: number }).id;
    const r = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', formats: ['16:9', '9:16', '1:1'], captions: true, music_id: musicId },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.data.length, 3);
    assert.ok(r.body.data.every((v: any) => v.batch_id === r.body.data[0].id && v.captions === true && v.status === 'queued'));
    const sizes: Record<string, [number, number]> = { '16:9': [1920, 1080], '9:16': [1080, 1920], '1:1': [1080, 1080] };
    for (const v of r.body.data) {
      const done = await waitDone(s, key, v.id);
      assert.equal(done.status, 'completed', done.error);
      const asset = await s.call('GET', `/v1/assets/${done.video_asset_id}`, { token: key });
      assert.deepEqual([asset.body.width, asset.body.height], sizes[v.format]);
      assert.ok(done.poster_asset_id);
    }
  } finally {
    await s.stop();
  }
});
