import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer, testImage } from './helpers.js';

/**
 * A JSON photo body took fields it does not know silently (`{"photos": [{…, "rooom": "kitchen"}]}`
 * was stored without its room), while every other body refuses them: a 422 naming each, nothing stored.
 */
test('JSON photo upload: an unknown field in the body or in a photo is a 422 naming it, and nothing is stored', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const png = testImage('png').toString('base64');
    const r = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: { photos: [{ filename: 'a.png', data_base64: png, rooom: 'kitchen' }, { data_base64: png }] },
    });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.error.code, 'validation_failed');
    assert.deepEqual(
      r.body.error.details.map((d: { path: string }) => d.path),
      ['photos[0].rooom'],
    );
    assert.match(r.body.error.details[0].message, /is not a known field \(known: filename, data_base64, room\)/);
    const top = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: png }], photo: [] } });
    assert.equal(top.status, 422);
    assert.deepEqual(
      top.body.error.details.map((d: { path: string }) => d.path),
      ['photo'],
    );
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 0, 'nothing stored');
    const ok = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: { photos: [{ filename: 'a.png', data_base64: png, room: 'kitchen' }] },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.data[0].room, 'kitchen');
  } finally {
    await s.stop();
  }
});
