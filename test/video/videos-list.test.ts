import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer, testImage, waitForVideo } from './helpers.js';
import { tenantSession, type TestServer } from '../helpers/embedded.js';

async function withPhoto(s: TestServer, key: string): Promise<number> {
  const pid = await createProperty(s, key);
  const up = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ filename: 'a.png', data_base64: testImage('png').toString('base64') }] } });
  assert.equal(up.status, 201);
  return pid;
}

async function video(s: TestServer, key: string, pid: number): Promise<number> {
  const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return r.body.id;
}

test('GET /v1/videos lists the tenant\'s videos newest first, paginated, filtered by property_id and status', async () => {
  // Without ffmpeg every render fails at once: the statuses settle without a real render.
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const p1 = await withPhoto(s, key);
    const p2 = await withPhoto(s, key);
    const ids = [await video(s, key, p1), await video(s, key, p2), await video(s, key, p1)];
    for (const id of ids) assert.equal((await waitForVideo(s, key, id)).status, 'failed');
    await video(s, other.key, await withPhoto(s, other.key));

    const all = await s.call('GET', '/v1/videos', { token: key });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.data.map((v: { id: number }) => v.id), [...ids].reverse());
    assert.equal(all.body.next_cursor, null);
    const one = await s.call('GET', `/v1/videos/${ids[0]}`, { token: key });
    assert.deepEqual(all.body.data[2], one.body, 'a listed video is the same record GET /v1/videos/{id} answers');

    const first = await s.call('GET', '/v1/videos?limit=2', { token: key });
    assert.equal(first.body.data.length, 2);
    assert.equal(typeof first.body.next_cursor, 'string');
    const second = await s.call('GET', `/v1/videos?limit=2&cursor=${first.body.next_cursor}`, { token: key });
    assert.deepEqual(second.body.data.map((v: { id: number }) => v.id), [ids[0]]);
    assert.equal(second.body.next_cursor, null);

    const ofP1 = await s.call('GET', `/v1/videos?property_id=${p1}`, { token: key });
    assert.deepEqual(ofP1.body.data.map((v: { id: number }) => v.id), [ids[2], ids[0]]);
    assert.equal((await s.call('GET', '/v1/videos?status=failed', { token: key })).body.data.length, 3);
    assert.deepEqual((await s.call('GET', '/v1/videos?status=completed', { token: key })).body.data, []);
    assert.deepEqual((await s.call('GET', `/v1/videos?property_id=${p1}&status=queued`, { token: key })).body.data, []);
    assert.equal((await s.call('GET', '/v1/videos', { token: other.key })).body.data.length, 1, 'another tenant sees only its own');

    for (const q of ['limit=0', 'limit=101', 'status=done', 'property_id=abc', 'property_id=0', 'cursor=garbage']) {
      const r = await s.call('GET', `/v1/videos?${q}`, { token: key });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'bad_request', q);
    }
    assert.equal((await s.call('GET', '/v1/videos')).status, 401);
  } finally {
    await s.stop();
  }
});

test('a video is deleted (204, then 404), unless it is rendering (409 conflict); another tenant\'s id is 404', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await withPhoto(s, key);
    const id = await video(s, key, pid);
    await waitForVideo(s, key, id);
    // A render in progress (on this replica or another) is a 'rendering' row in the store.
    s.db.prepare(`UPDATE video_videos SET status = 'rendering' WHERE id = ?`).run(id);
    const busy = await s.call('DELETE', `/v1/videos/${id}`, { token: key });
    assert.equal(busy.status, 409);
    assert.equal(busy.body.error.code, 'conflict');
    assert.match(busy.body.error.message, /rendering/);
    assert.equal((await s.call('GET', `/v1/videos/${id}`, { token: key })).body.status, 'rendering', 'a refused delete changes nothing');
    s.db.prepare(`UPDATE video_videos SET status = 'queued' WHERE id = ?`).run(id);

    const foreign = await s.call('DELETE', `/v1/videos/${id}`, { token: other.key });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'not_found');
    const gone = await s.call('DELETE', `/v1/videos/${id}`, { token: key });
    assert.equal(gone.status, 204, 'a queued video is deleted: it leaves the queue');
    assert.equal(gone.body, '');
    assert.equal((await s.call('GET', `/v1/videos/${id}`, { token: key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/videos/${id}`, { token: key })).status, 404);
    for (const bad of ['0', 'abc', '-1', '99999999']) assert.equal((await s.call('DELETE', `/v1/videos/${bad}`, { token: key })).status, 404, bad);
  } finally {
    await s.stop();
  }
});

test('a photo in a queued or rendering video is 409 to delete; in a finished one it is deleted and the video keeps its photo_ids', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await withPhoto(s, key);
    const photoId = (await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photos[0].id;
    const id = await video(s, key, pid);
    await waitForVideo(s, key, id);
    for (const status of ['queued', 'rendering']) {
      s.db.prepare(`UPDATE video_videos SET status = ? WHERE id = ?`).run(status, id);
      const r = await s.call('DELETE', `/v1/properties/${pid}/photos/${photoId}`, { token: key });
      assert.equal(r.status, 409, status);
      assert.equal(r.body.error.code, 'conflict');
      assert.match(r.body.error.message, new RegExp(`video ${id}, which is ${status}`));
    }
    s.db.prepare(`UPDATE video_videos SET status = 'failed' WHERE id = ?`).run(id);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}/photos/${photoId}`, { token: other.key })).status, 404);
    const otherPid = await withPhoto(s, key);
    const wrongParent = await s.call('DELETE', `/v1/properties/${otherPid}/photos/${photoId}`, { token: key });
    assert.equal(wrongParent.status, 404, 'a photo is addressed under its own property');
    assert.match(wrongParent.body.error.message, /has no photo/);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}/photos/${photoId}`, { token: key })).status, 204);
    const after = await s.call('GET', `/v1/properties/${pid}`, { token: key });
    assert.equal(after.body.photo_count, 0);
    assert.deepEqual(after.body.photos, []);
    assert.deepEqual((await s.call('GET', `/v1/videos/${id}`, { token: key })).body.photo_ids, [photoId]);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}/photos/${photoId}`, { token: key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/properties/999999/photos/${photoId}`, { token: key })).body.error.message, 'No property with id 999999.');
  } finally {
    await s.stop();
  }
});

test('a property is deleted with its photos and videos (queued ones leave the queue), unless one of its videos is rendering', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await withPhoto(s, key);
    const keep = await withPhoto(s, key);
    const a = await video(s, key, pid);
    const b = await video(s, key, pid);
    await waitForVideo(s, key, a);
    await waitForVideo(s, key, b);
    s.db.prepare(`UPDATE video_videos SET status = 'rendering' WHERE id = ?`).run(b);
    const busy = await s.call('DELETE', `/v1/properties/${pid}`, { token: key });
    assert.equal(busy.status, 409);
    assert.equal(busy.body.error.code, 'conflict');
    assert.match(busy.body.error.message, new RegExp(`Video ${b} of property ${pid} is rendering`));
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).status, 200);
    s.db.prepare(`UPDATE video_videos SET status = 'queued' WHERE id = ?`).run(b);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: other.key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: key })).status, 204);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).status, 404);
    assert.equal((await s.call('GET', `/v1/videos/${a}`, { token: key })).status, 404);
    assert.equal((await s.call('GET', `/v1/videos/${b}`, { token: key })).status, 404);
    assert.equal((await s.call('GET', '/v1/properties', { token: key })).body.data[0].id, keep);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: key })).status, 404);
  } finally {
    await s.stop();
  }
});

test('a session of the tenant reaches the property-video routes under the same plan check as a key', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { session } = await apiKey(s);
    const pid = await createProperty(s, session);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: session })).status, 200);
    const pro = await tenantSession(s, 'pro');
    const refused = await s.call('GET', '/v1/videos', { token: pro.token });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'plan_required');
  } finally {
    await s.stop();
  }
});
