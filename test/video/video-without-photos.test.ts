import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planTour } from '../../src/video/tour.js';
import { apiKey, createProperty, ffprobe, startVideoServer, waitForVideo } from './helpers.js';

/**
 * `POST /v1/videos` for an existing property without photos was a 422 ("upload some first"):
 * the spec asks only for an existing property. Such a video is now the title card alone.
 */

test('a property without photos gets a title-card video: 202 queued, then a completed H.264 MP4 and a JPEG poster', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '9:16' } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.status, 'queued');
    assert.deepEqual(r.body.photo_ids, []);
    const v = await waitForVideo(s, key, r.body.id);
    assert.equal(v.status, 'completed', JSON.stringify(v));
    assert.equal(v.progress, 1);
    const file = await fetch(`${s.url}/v1/assets/${v.video_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'video/mp4');
    const path = join(s.dir, 'title-only.mp4');
    writeFileSync(path, Buffer.from(await file.arrayBuffer()));
    const probe = ffprobe(path);
    assert.equal(probe.codec, 'h264');
    assert.deepEqual([probe.width, probe.height], [1080, 1920]);
    const poster = await fetch(`${s.url}/v1/assets/${v.poster_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(poster.headers.get('content-type'), 'image/jpeg');
    const jpeg = Buffer.from(await poster.arrayBuffer());
    assert.deepEqual([...jpeg.subarray(0, 2)], [0xff, 0xd8]);
  } finally {
    await s.stop();
  }
});

test('the plan of a tour without photos is the title card alone, poster inside it', () => {
  for (const xfade of [true, false]) {
    const plan = planTour({ photos: [], format: '1:1', title: { kind: 'image', path: 't.ppm' }, output: 'o.mp4', timings: { titleS: 3, photoS: 3, fadeS: 0.5, fps: 25 }, xfade, preset: 'ultrafast' });
    assert.equal(plan.durationS, 3);
    assert.equal(plan.posterAtS, 1.5);
    assert.match(plan.args[plan.args.indexOf('-filter_complex') + 1]!, /\[vout\]/);
  }
});
