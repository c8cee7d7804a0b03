import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer } from './helpers.js';

// An upload to a missing property sent with fetch: the server used to answer and drop the
// connection with the body unread, and fetch, still sending, failed with EPIPE instead of
// reading the 404 (seen against `brainstem serve`; this in-process server rarely shows it,
// so the case guards the behaviour rather than reproducing the race every run).
test('fetch multipart upload of a 17 MiB photo reads 413; to a missing property reads 404; the key still works after', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const big = Buffer.alloc(17 * 1024 * 1024);
    big.set([0xff, 0xd8, 0xff, 0xe0]);
    for (const [path, status, code] of [
      [`/v1/properties/${pid}/photos`, 413, 'payload_too_large'],
      ['/v1/properties/999999/photos', 404, 'not_found'],
      ['/v1/properties/undefined/photos', 404, 'not_found'],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const form = new FormData();
        form.append('photos', new Blob([big], { type: 'image/jpeg' }), 'big.jpg');
        const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
        assert.equal(res.status, status, path);
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, code);
      }
    }
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 0);
  } finally {
    await s.stop();
  }
});
