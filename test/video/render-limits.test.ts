import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RENDER_WALL_CLOCK, renderTimeLimitMs } from '../../src/video/queue.js';
import { DEFAULT_FFMPEG_ADDRESS_SPACE, findPrlimit } from '../../src/video/ffmpeg.js';
import type { Logger } from '../../src/log.js';
import { apiKey, createProperty, startVideoServer, testImage, waitForVideo } from './helpers.js';
import type { TestServer } from '../helpers/embedded.js';

/** waitForVideo polls ten times a second; a render on a busy machine outlasts 100 requests a minute. */
const POLLING = { limit: 100_000, windowMs: 60_000 };

async function renderOne(s: TestServer, size = '160x120'): Promise<any> {
  const { key } = await apiKey(s);
  const pid = await createProperty(s, key);
  const up = await s.call('POST', `/v1/properties/${pid}/photos`, {
    token: key,
    body: { photos: [{ data_base64: testImage('jpg', size).toString('base64') }] },
  });
  assert.equal(up.status, 201);
  const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
  assert.equal(v.status, 202);
  return waitForVideo(s, key, v.body.id);
}

test('the wall-clock limit of a render is 20x the video duration, at least 3 and at most 10 minutes', () => {
  assert.deepEqual(RENDER_WALL_CLOCK, { minMs: 180_000, maxMs: 600_000, perVideoSecond: 20 });
  assert.equal(renderTimeLimitMs(4), 180_000);
  assert.equal(renderTimeLimitMs(9), 180_000);
  assert.equal(renderTimeLimitMs(10), 200_000);
  assert.equal(renderTimeLimitMs(29), 580_000);
  assert.equal(renderTimeLimitMs(30), 600_000);
  assert.equal(renderTimeLimitMs(253), 600_000);
  assert.equal(DEFAULT_FFMPEG_ADDRESS_SPACE, 2 * 1024 ** 3);
});

test('ffmpeg past its wall-clock limit is killed and the video fails with the reason', async () => {
  const s = await startVideoServer({
    limits: { apiKey: POLLING, tenantApiKeys: POLLING },
    video: { renderWallClock: { minMs: 1, maxMs: 1, perVideoSecond: 20 } },
  });
  try {
    const v = await renderOne(s);
    assert.equal(v.status, 'failed');
    assert.match(v.error, /wall-clock limit/);
  } finally {
    await s.stop();
  }
});

test(
  'ffmpeg runs under prlimit: an address-space limit too small for it fails the render with the reason',
  { skip: findPrlimit() === null && 'prlimit is not installed' },
  async () => {
    const s = await startVideoServer({ ffmpegAddressSpaceBytes: 64 * 1024 * 1024, limits: { apiKey: POLLING, tenantApiKeys: POLLING } });
    try {
      const v = await renderOne(s);
      assert.equal(v.status, 'failed');
      assert.match(v.error, /address-space limit of 67108864 bytes/);
    } finally {
      await s.stop();
    }
  },
);

test('without prlimit the server says so once in the log and still renders (under the wall-clock limit), a photo larger than the frame included', async () => {
  const warnings: string[] = [];
  const logger: Logger = { info() {}, error() {}, warn: (m) => void warnings.push(m) };
  const s = await startVideoServer({ logger, limits: { apiKey: POLLING, tenantApiKeys: POLLING }, video: { prlimitPath: null } });
  try {
    const v = await renderOne(s, '2400x1600');
    assert.equal(v.status, 'completed', v.error);
    assert.equal(warnings.filter((w) => /prlimit/.test(w)).length, 1);
  } finally {
    await s.stop();
  }
});
