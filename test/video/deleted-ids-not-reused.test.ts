import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, uploadMultipart, waitForVideo } from './helpers.js';

// SQLite gave a new row the highest id + 1, so the ids of the newest rows came back once those
// rows were deleted: a signed URL of a deleted asset opened the next tenant's asset that took
// its id, and GET of a deleted id answered with a different record.
test('ids of deleted properties, photos, videos and assets are never given again: an old signed URL stays 404', async () => {
  const s = await startVideoServer({ limits: POLLING_LIMITS });
  try {
    const a = await apiKey(s);
    const b = await apiKey(s);
    const render = async (key: string, pid: number) => {
      const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
      assert.equal(v.status, 202, JSON.stringify(v.body));
      const done = await waitForVideo(s, key, v.body.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      return done;
    };

    const pa = await createProperty(s, a.key);
    const photo = await uploadMultipart(s, `/v1/properties/${pa}/photos`, a.key, [{ name: 'a.jpg', data: testImage('jpg') }]);
    assert.equal(photo.status, 201);
    const photoA = photo.body.data[0].id;
    assert.equal((await s.call('DELETE', `/v1/properties/${pa}/photos/${photoA}`, { token: a.key })).status, 204);
    const again = await uploadMultipart(s, `/v1/properties/${pa}/photos`, a.key, [{ name: 'b.jpg', data: testImage('jpg') }]);
    assert.ok(again.body.data[0].id > photoA, 'a new photo takes a new id');

    const doneA = await render(a.key, pa);
    const signed = await s.call('GET', `/v1/assets/${doneA.poster_asset_id}/url`, { token: a.key });
    assert.equal(signed.status, 200);
    assert.equal((await fetch(signed.body.url)).status, 200);
    assert.equal((await s.call('DELETE', `/v1/videos/${doneA.id}`, { token: a.key })).status, 204);
    assert.equal((await s.call('DELETE', `/v1/properties/${pa}`, { token: a.key })).status, 204);

    const pb = await createProperty(s, b.key);
    assert.ok(pb > pa, `the next property takes a new id (${pb} after ${pa})`);
    const doneB = await render(b.key, pb);
    assert.ok(doneB.id > doneA.id, 'the next video takes a new id');
    assert.ok(Math.min(doneB.video_asset_id, doneB.poster_asset_id) > Math.max(doneA.video_asset_id, doneA.poster_asset_id), 'new assets take new ids');

    const old = await fetch(signed.body.url);
    assert.equal(old.status, 404, "a deleted asset's signed URL never opens another asset");
    assert.equal(((await old.json()) as { error: { code: string } }).error.code, 'not_found');
    assert.equal((await s.call('GET', `/v1/assets/${doneA.poster_asset_id}`, { token: a.key })).status, 404);
    assert.equal((await s.call('GET', `/v1/properties/${pa}`, { token: a.key })).status, 404);
  } finally {
    await s.stop();
  }
});
