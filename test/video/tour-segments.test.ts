import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DEFAULT_FFMPEG_ADDRESS_SPACE, findPrlimit } from '../../src/video/ffmpeg.js';
import { photosPerSegment, segmentSizes } from '../../src/video/render.js';
import { DEFAULT_TIMINGS, segmentParts } from '../../src/video/tour.js';
import { VIDEO_LIMITS } from '../../src/video/limits.js';
import { apiKey, createProperty, ffprobe, POLLING_LIMITS, startVideoServer, waitDone, addPhotos, assetBytes } from './helpers.js';

/**
 * The shortest parts the queue accepts (a one-frame fade, a four-frame photo), so a 100-photo tour is quick to
 * encode; every frame is still 1080p and every photo an input of its segment, so memory behaves as in a real tour.
 */
const FAST = { titleS: 0.5, photoS: 0.4, fadeS: 0.1, fps: 10 };

test('segments: a long tour is cut in the middle of photos, each segment at most the photos that fit, sized to the limit and the formats', () => {
  const parts = segmentParts(7, 3, { titleS: 1, photoS: 3, fadeS: 0.5, fps: 25 });
  assert.deepEqual(
    parts.map((seg) => seg.map((p) => `${p.photo ?? 'T'}:${p.from}-${p.to}`)),
    [
      ['T:0-25', '0:0-75', '1:0-75', '2:0-37'],
      ['2:37-75', '3:0-75', '4:0-37'],
      ['4:37-75', '5:0-75', '6:0-75'],
    ],
  );
  // Any tour of two photos or more is cut in two about equal halves, so two processes share it; the first half also shows the title.
  const frames = (n: number, fit: number) => {
    const z = segmentSizes(n, fit);
    return segmentParts(n, z.photosPerSegment, DEFAULT_TIMINGS, z.photosInFirstSegment).map((seg) => seg.reduce((a, p) => a + p.to - p.from, 0));
  };
  assert.deepEqual(frames(10, 37), [75 + 4 * 75 + 37, 38 + 5 * 75]);
  assert.deepEqual(frames(1, 37), [75 + 75]);
  assert.equal(frames(2, 37).length, 2);
  // Photos that do not fit one process still make as many segments as before, of at most what fits.
  assert.equal(frames(100, 37).length, 3);
  assert.equal(frames(100, 10).length, 11);
  const one = photosPerSegment(['16:9'], DEFAULT_FFMPEG_ADDRESS_SPACE);
  const three = photosPerSegment(['16:9', '9:16', '1:1'], DEFAULT_FFMPEG_ADDRESS_SPACE);
  assert.ok(one >= 10 && one < 100, String(one));
  assert.ok(three < one && three >= 10, String(three));
  assert.ok(photosPerSegment(['16:9'], 4 * DEFAULT_FFMPEG_ADDRESS_SPACE) > one);
});

test(
  'a 100-photo tour renders under the default 2 GiB address-space limit (#29: 30 photos used to fail)',
  { skip: findPrlimit() === null && 'prlimit is not installed' },
  async () => {
    const s = await startVideoServer({ limits: POLLING_LIMITS, video: { timings: FAST } });
    try {
      const { key } = await apiKey(s);
      const pid = await createProperty(s, key);
      await addPhotos(s, key, pid, VIDEO_LIMITS.maxPhotosPerVideo);
      const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '16:9' } });
      assert.equal(v.status, 202);
      const done = await waitDone(s, key, v.body.id);
      assert.equal(done.status, 'completed', done.error);
      const out = join(s.dir, 'v.mp4');
      execFileSync('sh', ['-c', `cat > ${out}`], { input: await assetBytes(s, key, done.video_asset_id) });
      const probe = ffprobe(out);
      assert.deepEqual([probe.width, probe.height], [1920, 1080]);
      // 0.5 s title + 100 x (0.4 - 0.1) s.
      assert.ok(Math.abs(probe.duration - 30.5) < 0.3, String(probe.duration));
    } finally {
      await s.stop();
    }
  },
);
