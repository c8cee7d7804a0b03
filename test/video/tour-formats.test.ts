import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage } from './helpers.js';
import type { TestServer } from '../helpers/embedded.js';

async function waitDone(s: TestServer, key: string, id: number): Promise<any> {
  for (;;) {
    const r = await s.call('GET', `/v1/videos/${id}`, { token: key });
    if (!['queued', 'rendering'].includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function addPhotos(s: TestServer, key: string, pid: number, n: number, rooms: (string | null)[] = []): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i += 20) {
    const photos = Array.from({ length: Math.min(20, n - i) }, (_, j) => ({
      filename: `p${i + j}.jpg`,
      data_base64: testImage('jpg', '320x240').toString('base64'),
      ...(rooms[i + j] !== undefined ? { room: rooms[i + j] } : {}),
    }));
    const r = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids.push(...r.body.data.map((p: any) => p.id));
  }
  return ids;
}

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
