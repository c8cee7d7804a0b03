import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, waitDone, addPhotos, assetBytes } from './helpers.js';

test('the same inputs give the same bytes: a branded tour with captions and music rendered twice', async () => {
  const s = await startVideoServer({ limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key, { area: 80, bathrooms: 1.5, description: 'Top floor. Lift.' });
    await addPhotos(s, key, pid, 2);
    const logo = testImage('png', '200x100');
    assert.equal(
      (await s.call('PUT', '/v1/branding', { token: key, body: { primary_color: '#224466', secondary_color: '#FFEE00', font: 'serif' } })).status,
      200,
    );
    const up = await fetch(`${s.url}/v1/branding/logo`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
      body: logo,
    });
    assert.equal(up.status, 200);
    const wav = join(s.dir, 'music.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=330:d=3', wav]);
    const music = await fetch(`${s.url}/v1/audio?filename=music.wav`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' },
      body: readFileSync(wav),
    });
    assert.equal(music.status, 201);
    const track = (await music.json()) as any;
    assert.ok(Math.abs(track.duration_s - 3) < 0.1);
    const hashes: string[] = [];
    for (let i = 0; i < 2; i++) {
      const v = await s.call('POST', '/v1/videos', {
        token: key,
        body: { property_id: pid, template: 'tour', format: '9:16', captions: true, music_id: track.id },
      });
      assert.equal(v.status, 202, JSON.stringify(v.body));
      const done = await waitDone(s, key, v.body.id);
      assert.equal(done.status, 'completed', done.error);
      hashes.push(
        createHash('sha256')
          .update(await assetBytes(s, key, done.video_asset_id))
          .digest('hex'),
      );
    }
    assert.equal(hashes[0], hashes[1]);
    // The music is in use by no unfinished video now: it can go.
    assert.equal((await s.call('DELETE', `/v1/audio/${track.id}`, { token: key })).status, 204);
  } finally {
    await s.stop();
  }
});
