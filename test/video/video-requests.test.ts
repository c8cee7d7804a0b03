import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VIDEO_LIMITS } from '../../src/video/limits.js';
import { apiKey, createProperty, startVideoServer, addPhotos } from './helpers.js';

test('POST /v1/videos validates every new field with a 422 and creates nothing', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const bad: [Record<string, unknown>, string][] = [
      [{ formats: [] }, 'formats'],
      [{ formats: ['16:9', '16:9'] }, 'formats[1]'],
      [{ formats: ['16:9', '1:1', '9:16', '4:5', '16:9'] }, 'formats'],
      [{ formats: ['3:2'] }, 'formats[0]'],
      [{ format: '16:9', formats: ['1:1'] }, 'format'],
      [{ format: '16:9', photo_ids: [999999] }, 'photo_ids[0]'],
      [{ format: '16:9', photo_ids: [] }, 'photo_ids'],
      [{ format: '16:9', music_id: 424242 }, 'music_id'],
      [{ format: '16:9', photo_order: 'random' }, 'photo_order'],
      [{ format: '16:9', captions: 'yes' }, 'captions'],
      [{ format: '16:9', branded: 1 }, 'branded'],
    ];
    for (const [extra, path] of bad) {
      const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', ...extra } });
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.ok(
        r.body.error.details.some((d: any) => d.path === path),
        `${JSON.stringify(extra)} → ${JSON.stringify(r.body.error.details)}`,
      );
    }
    const list = await s.call('GET', '/v1/videos', { token: key });
    assert.equal(list.body.data.length, 0);
  } finally {
    await s.stop();
  }
});

test('Idempotency-Key: a retry returns the first video, another body with the key is 422, a malformed key 400', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const body = { property_id: pid, template: 'tour', format: '16:9' };
    const post = (b: unknown, k: string) => s.call('POST', '/v1/videos', { token: key, body: b, headers: { 'idempotency-key': k } });
    const first = await post(body, 'order-1');
    assert.equal(first.status, 202);
    const again = await post({ format: '16:9', template: 'tour', property_id: pid }, 'order-1');
    assert.equal(again.status, 202);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const other = await post({ ...body, format: '1:1' }, 'order-1');
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'idempotency_key_reused');
    assert.equal((await post(body, 'x'.repeat(VIDEO_LIMITS.maxIdempotencyKeyChars + 1))).status, 400);
    assert.equal((await post(body, 'x'.repeat(VIDEO_LIMITS.maxIdempotencyKeyChars))).status, 202);
    const list = await s.call('GET', '/v1/videos', { token: key });
    assert.equal(list.body.data.length, 2);
  } finally {
    await s.stop();
  }
});

test('branding and audio limits: bad colours and fonts 422, a logo or track over its size 413, a non-audio body 422', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const b = await s.call('PUT', '/v1/branding', { token: key, body: { primary_color: 'red', font: 'comic', extra: 1 } });
    assert.equal(b.status, 422);
    assert.deepEqual(b.body.error.details.map((d: any) => d.path).sort(), ['extra', 'font', 'primary_color']);
    const put = (path: string, type: string, body: Buffer) =>
      fetch(`${s.url}${path}`, { method: path.includes('audio') ? 'POST' : 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });
    assert.equal((await put('/v1/branding/logo', 'image/png', Buffer.alloc(VIDEO_LIMITS.maxLogoBytes + 1))).status, 413);
    assert.equal((await put('/v1/branding/logo', 'image/png', Buffer.from('not an image'))).status, 422);
    assert.equal((await put('/v1/audio', 'audio/mpeg', Buffer.alloc(VIDEO_LIMITS.maxAudioBytes + 1))).status, 413);
    assert.equal((await put('/v1/audio', 'audio/wav', Buffer.from('RIFF....WAVEjunk'))).status, 422);
    assert.equal((await put('/v1/audio', 'text/plain', Buffer.from('x'))).status, 415);
    const g = await s.call('GET', '/v1/branding', { token: key });
    assert.equal(g.body.primary_color, '#1F2933');
    assert.equal(g.body.logo, null);
  } finally {
    await s.stop();
  }
});

test('photos by room: tags from the upload or PATCH order the tour (untagged last), photo_ids pick and order', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const ids = await addPhotos(s, key, pid, 4, ['bathroom', null, 'kitchen', 'exterior']);
    const p = await s.call('PATCH', `/v1/properties/${pid}/photos/${ids[1]}`, { token: key, body: { room: 'living' } });
    assert.equal(p.status, 200);
    assert.equal(p.body.room, 'living');
    assert.equal((await s.call('PATCH', `/v1/properties/${pid}/photos/${ids[1]}`, { token: key, body: { room: 'attic' } })).status, 422);
    const byRoom = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1', photo_order: 'room' } });
    assert.deepEqual(byRoom.body.photo_ids, [ids[3], ids[1], ids[2], ids[0]]);
    const given = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1', photo_ids: [ids[2], ids[0]] } });
    assert.deepEqual(given.body.photo_ids, [ids[2], ids[0]]);
  } finally {
    await s.stop();
  }
});
