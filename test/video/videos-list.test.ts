import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, waitForVideo } from './helpers.js';
import { tenantSession, type TestServer } from '../helpers/embedded.js';

async function withPhoto(s: TestServer, key: string): Promise<number> {
  const pid = await createProperty(s, key);
  const up = await s.call('POST', `/v1/properties/${pid}/photos`, {
    token: key,
    body: { photos: [{ filename: 'a.png', data_base64: testImage('png').toString('base64') }] },
  });
  assert.equal(up.status, 201);
  return pid;
}

/** Polls a video until it shows `status` (the render queue moves it on its own). */
async function waitForStatus(s: TestServer, key: string, id: number, status: string): Promise<void> {
  for (;;) {
    const r = await s.call('GET', `/v1/videos/${id}`, { token: key });
    if (r.body.status === status) return;
    assert.ok(r.body.status === 'queued' || r.body.status === status, `video ${id} is ${r.body.status}, waiting for ${status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function video(s: TestServer, key: string, pid: number): Promise<number> {
  const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return r.body.id;
}

test("GET /v1/videos lists the tenant's videos newest first, paginated, filtered by property_id and status", async () => {
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
    assert.deepEqual(
      all.body.data.map((v: { id: number }) => v.id),
      [...ids].reverse(),
    );
    assert.equal(all.body.next_cursor, null);
    const one = await s.call('GET', `/v1/videos/${ids[0]}`, { token: key });
    assert.deepEqual(all.body.data[2], one.body, 'a listed video is the same record GET /v1/videos/{id} answers');

    const first = await s.call('GET', '/v1/videos?limit=2', { token: key });
    assert.equal(first.body.data.length, 2);
    assert.equal(typeof first.body.next_cursor, 'string');
    const second = await s.call('GET', `/v1/videos?limit=2&cursor=${first.body.next_cursor}`, { token: key });
    assert.deepEqual(
      second.body.data.map((v: { id: number }) => v.id),
      [ids[0]],
    );
    assert.equal(second.body.next_cursor, null);

    const ofP1 = await s.call('GET', `/v1/videos?property_id=${p1}`, { token: key });
    assert.deepEqual(
      ofP1.body.data.map((v: { id: number }) => v.id),
      [ids[2], ids[0]],
    );
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

test('deletes refuse (409 conflict) while a render needs what they would remove; a queued video is deleted out of the queue', async () => {
  // One render slot held by a ten-minute tour: the first video stays rendering and the next one
  // queued for as long as the test needs (stopping the server kills ffmpeg).
  const s = await startVideoServer({ renderConcurrency: 1, limits: POLLING_LIMITS, video: { timings: { titleS: 300, photoS: 300, fadeS: 0.5, fps: 25 } } });
  try {
    const { key } = await apiKey(s);
    const pid = await withPhoto(s, key);
    const first = (await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photos[0].id;
    const rendering = await video(s, key, pid);
    await waitForStatus(s, key, rendering, 'rendering');
    const up = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: { photos: [{ filename: 'b.png', data_base64: testImage('png').toString('base64') }] },
    });
    const second = up.body.data[0].id;
    const queued = await video(s, key, pid);
    assert.equal((await s.call('GET', `/v1/videos/${queued}`, { token: key })).body.status, 'queued');

    const conflict = async (path: string, message: RegExp) => {
      const r = await s.call('DELETE', path, { token: key });
      assert.equal(r.status, 409, path);
      assert.equal(r.body.error.code, 'conflict');
      assert.match(r.body.error.message, message);
    };
    await conflict(`/v1/videos/${rendering}`, new RegExp(`Video ${rendering} is rendering`));
    await conflict(`/v1/properties/${pid}`, new RegExp(`Video ${rendering} of property ${pid} is rendering`));
    await conflict(`/v1/properties/${pid}/photos/${first}`, new RegExp(`Photo ${first} is in video ${rendering}, which is rendering`));
    await conflict(`/v1/properties/${pid}/photos/${second}`, new RegExp(`Photo ${second} is in video ${queued}, which is queued; delete that video first`));
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 2, 'a refused delete changes nothing');

    assert.equal((await s.call('DELETE', `/v1/videos/${queued}`, { token: key })).status, 204, 'a queued video is deleted');
    assert.equal((await s.call('GET', `/v1/videos/${queued}`, { token: key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}/photos/${second}`, { token: key })).status, 204, 'no unfinished video shows it any more');
    assert.equal((await s.call('GET', `/v1/videos/${rendering}`, { token: key })).body.status, 'rendering');
  } finally {
    await s.stop();
  }
});

test("a finished video is deleted (204, then 404); another tenant's id and malformed ids are 404", async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await withPhoto(s, key);
    const id = await video(s, key, pid);
    assert.equal((await waitForVideo(s, key, id)).status, 'failed');
    const foreign = await s.call('DELETE', `/v1/videos/${id}`, { token: other.key });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'not_found');
    const gone = await s.call('DELETE', `/v1/videos/${id}`, { token: key });
    assert.equal(gone.status, 204);
    assert.equal(gone.body, '');
    assert.equal((await s.call('GET', `/v1/videos/${id}`, { token: key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/videos/${id}`, { token: key })).status, 404);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 1, 'the property and its photos stay');
    for (const bad of ['0', 'abc', '-1', '99999999']) assert.equal((await s.call('DELETE', `/v1/videos/${bad}`, { token: key })).status, 404, bad);
  } finally {
    await s.stop();
  }
});

test('a photo of a finished video is deleted and the video keeps its photo_ids; photos are addressed under their own property', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await withPhoto(s, key);
    const photoId = (await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photos[0].id;
    const id = await video(s, key, pid);
    await waitForVideo(s, key, id);
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

test("a property is deleted with its photos and videos; another tenant's id is 404", async () => {
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
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: other.key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: key })).status, 204);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).status, 404);
    assert.equal((await s.call('GET', `/v1/videos/${a}`, { token: key })).status, 404);
    assert.equal((await s.call('GET', `/v1/videos/${b}`, { token: key })).status, 404);
    assert.deepEqual(
      (await s.call('GET', '/v1/properties', { token: key })).body.data.map((p: { id: number }) => p.id),
      [keep],
    );
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
