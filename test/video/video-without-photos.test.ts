/**
 * Regression: `POST /v1/videos` with the spec's own example body answered 422 for a property
 * that had no photos yet, a rule the API's contract does not have. Such a property now gets a
 * tour of its title card alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planTour, DEFAULT_TIMINGS, SILENCE } from '../../src/video/tour.js';
import { apiKey, createProperty, ffprobe, startVideoServer, waitForVideo } from './helpers.js';

test('a property without photos gets a title-card tour: 202 queued, then a completed H.264 MP4 and a poster', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key, { title: 'Empty plot', address: '9 Field Lane' });
    const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '16:9' } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.status, 'queued');
    assert.deepEqual(r.body.photo_ids, []);
    const v = await waitForVideo(s, key, r.body.id);
    assert.equal(v.status, 'completed', v.error);
    const asset = (await s.call('GET', `/v1/assets/${v.video_asset_id}`, { token: key })).body;
    const file = await fetch(s.url + asset.url, { headers: { authorization: `Bearer ${key}` } });
    const path = join(s.dir, 'title-only.mp4');
    writeFileSync(path, Buffer.from(await file.arrayBuffer()));
    const probe = ffprobe(path);
    assert.equal(probe.codec, 'h264');
    assert.deepEqual([probe.width, probe.height], [1920, 1080]);
    // The test server's title card lasts 1 s.
    assert.ok(Math.abs(probe.duration - 1) <= 0.2, `duration ${probe.duration}`);
    const poster = (await s.call('GET', `/v1/assets/${v.poster_asset_id}`, { token: key })).body;
    assert.equal(poster.kind, 'poster');
    assert.equal(poster.content_type, 'image/jpeg');
  } finally {
    await s.stop();
  }
});

test('the plan of a tour without photos is the title card alone, with the poster inside it', () => {
  const title = { kind: 'image', path: '/tmp/title.png' } as const;
  for (const xfade of [true, false]) {
    const plan = planTour({
      photos: [],
      formats: [
        { format: '1:1', title, captions: [], captionFont: null, captionBox: '0x000000', cornerMark: false, output: '/tmp/out.mp4', poster: '/tmp/out.jpg' },
      ],
      logo: null,
      audio: SILENCE,
      timings: DEFAULT_TIMINGS,
      xfade,
      preset: 'ultrafast',
      photosPerSegment: 100,
      work: '/tmp',
    });
    assert.equal(plan.durationS, DEFAULT_TIMINGS.titleS);
    assert.ok(plan.posterAtS > 0 && plan.posterAtS < plan.durationS);
    const args = plan.steps[0]!.args;
    assert.match(args[args.indexOf('-filter_complex') + 1]!, /\[f0p0\]/);
  }
});
