import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, addPhotos } from './helpers.js';

test('cancel: a queued or rendering video becomes cancelled, ffmpeg is killed and its scratch removed; a finished one is 409', async () => {
  const s = await startVideoServer({ limits: POLLING_LIMITS, video: { timings: { titleS: 1, photoS: 4, fadeS: 0.5, fps: 25 } } });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    await addPhotos(s, key, pid, 6);
    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '16:9' } });
    const work = join(s.dir, 'data', 'work');
    // Cancelled once its render has made its scratch directory.
    while (readdirSync(work).length === 0) {
      const now = await s.call('GET', `/v1/videos/${v.body.id}`, { token: key });
      assert.ok(['queued', 'rendering'].includes(now.body.status), now.body.status);
      await new Promise((res) => setTimeout(res, 20));
    }
    const c = await s.call('POST', `/v1/videos/${v.body.id}/cancel`, { token: key });
    assert.equal(c.status, 200);
    assert.equal(c.body.status, 'cancelled');
    while (readdirSync(work).length > 0) await new Promise((res) => setTimeout(res, 50));
    assert.equal((await s.call('GET', `/v1/videos/${v.body.id}`, { token: key })).body.status, 'cancelled');
    assert.equal((await s.call('POST', `/v1/videos/${v.body.id}/cancel`, { token: key })).status, 409);
    assert.equal((await s.call('POST', '/v1/videos/999999/cancel', { token: key })).status, 404);
  } finally {
    await s.stop();
  }
});
