import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer, storedFiles, testImage, uploadMultipart } from './helpers.js';

/** A real PNG whose IHDR declares another size: what an attacker sends to make ffmpeg allocate gigabytes. */
function declaring(width: number, height: number): Buffer {
  const out = Buffer.from(testImage('png', '64x48'));
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(height, 20);
  return out;
}

test('a PNG declaring 16000x16000 is 422 validation_failed naming the photo, by multipart and by JSON; nothing is stored', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const path = `/v1/properties/${pid}/photos`;
    const multipart = await uploadMultipart(s, path, key, [
      { name: 'ok.jpg', data: testImage('jpg') },
      { name: 'bomb.png', data: declaring(16000, 16000) },
    ]);
    assert.equal(multipart.status, 422);
    assert.equal(multipart.body.error.code, 'validation_failed');
    assert.equal(multipart.body.error.details.length, 1);
    assert.equal(multipart.body.error.details[0].path, 'photos[1]');
    assert.match(multipart.body.error.details[0].message, /^bomb\.png .*16000x16000.*12000/);

    const json = await s.call('POST', path, {
      token: key,
      body: { photos: [{ filename: 'wide.png', data_base64: declaring(12000, 3334).toString('base64') }] },
    });
    assert.equal(json.status, 422);
    assert.equal(json.body.error.details[0].path, 'photos[0]');
    assert.match(json.body.error.details[0].message, /^wide\.png .*40000000 pixels/);

    assert.deepEqual(storedFiles(s), []);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 0);
  } finally {
    await s.stop();
  }
});
