/**
 * Regression: a multipart photo upload with more than 50 text fields lost photos. busboy stops
 * reading parts past its field and part limits without an error, so with 55 fields and 20
 * photos, the last 5 photos were dropped unseen and the upload was answered 201 with 15. More
 * than MULTIPART_MAX_FIELDS text fields is a 422 now, and nothing of the upload is stored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MULTIPART_MAX_FIELDS } from '../../src/video/uploads.js';
import { UPLOAD_LIMITS } from '../../src/video/index.js';
import { apiKey, createProperty, postPhotosBody, startVideoServer, testImage } from './helpers.js';

function multipart(fields: number, photos: number, png: Buffer): Buffer {
  const part = (head: string, data: Buffer) =>
    Buffer.concat([Buffer.from(`--XX\r\nContent-Disposition: form-data; ${head}\r\n\r\n`), data, Buffer.from('\r\n')]);
  return Buffer.concat([
    ...Array.from({ length: fields }, (_, i) => part(`name="note${i}"`, Buffer.from('x'))),
    ...Array.from({ length: photos }, (_, i) => part(`name="photos"; filename="p${i}.png"\r\nContent-Type: image/png`, png)),
    Buffer.from('--XX--\r\n'),
  ]);
}

test(`a multipart upload with more than ${MULTIPART_MAX_FIELDS} text fields is 422 and stores nothing; at the limit every photo is stored`, async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const png = testImage('png', '64x48');
    const upload = (fields: number, photos: number) => postPhotosBody(s, key, pid, 'multipart/form-data; boundary=XX', multipart(fields, photos, png));
    for (const [fields, photos] of [
      [MULTIPART_MAX_FIELDS + 1, UPLOAD_LIMITS.maxPhotos],
      [MULTIPART_MAX_FIELDS + 5, 1],
      [200, 1],
    ] as const) {
      const r = await upload(fields, photos);
      assert.equal(r.status, 422, `${fields} fields, ${photos} photos: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'validation_failed');
      assert.match(r.body.error.details[0].message, new RegExp(`at most ${MULTIPART_MAX_FIELDS} text fields`));
    }
    assert.deepEqual((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photos, [], 'nothing was stored');
    const full = await upload(MULTIPART_MAX_FIELDS, UPLOAD_LIMITS.maxPhotos);
    assert.equal(full.status, 201, JSON.stringify(full.body));
    assert.equal(full.body.data.length, UPLOAD_LIMITS.maxPhotos);
  } finally {
    await s.stop();
  }
});
