import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { apiKey, createProperty, startVideoServer, storedFiles, testImage, uploadMultipart } from './helpers.js';
import type { TestServer } from '../helpers/embedded.js';

function photoRows(s: TestServer): number {
  return (s.db.prepare('SELECT COUNT(*) AS n FROM video_photos').get() as { n: number }).n;
}

test('multipart upload: several images typed by magic bytes (not the declared type), dimensions from the header', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const r = await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [
      { name: 'front.jpg', data: testImage('jpg', '320x240'), type: 'image/png' },
      { name: 'garden.png', data: testImage('png', '200x300') },
      { name: '../../etc/kitchen.webp', data: testImage('webp', '64x48'), type: 'text/plain' },
    ]);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.data.map((p: any) => [p.filename, p.content_type, p.width, p.height]),
      [
        ['front.jpg', 'image/jpeg', 320, 240],
        ['garden.png', 'image/png', 200, 300],
        ['kitchen.webp', 'image/webp', 64, 48],
      ],
    );
    assert.equal(r.body.data[0].size_bytes, testImage('jpg', '320x240').length);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) assert.ok(r.headers.get(h));
    const prop = await s.call('GET', `/v1/properties/${pid}`, { token: key });
    assert.equal(prop.body.photo_count, 3);
    assert.deepEqual(
      prop.body.photos.map((p: any) => p.id),
      r.body.data.map((p: any) => p.id),
    );
    assert.equal(storedFiles(s).filter((f) => f.startsWith('photos/')).length, 3);
    assert.equal(storedFiles(s).filter((f) => f.startsWith('tmp/')).length, 0);
  } finally {
    await s.stop();
  }
});

test('JSON upload {photos: [{filename, data_base64}]}; bad entries are 422 with details', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await createProperty(s, key);
    const body = { photos: [{ filename: 'a.png', data_base64: testImage('png').toString('base64') }, { data_base64: testImage('jpg').toString('base64') }] };
    const r = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body });
    assert.equal(r.status, 201);
    assert.deepEqual(
      r.body.data.map((p: any) => [p.filename, p.content_type]),
      [
        ['a.png', 'image/png'],
        ['photo-2', 'image/jpeg'],
      ],
    );
    assert.equal((await s.call('POST', `/v1/properties/${pid}/photos`, { token: other.key, body })).status, 404);
    assert.equal((await s.call('POST', '/v1/properties/abc/photos', { token: key, body })).status, 404);
    const bad = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ filename: 3, data_base64: '!!' }, 'x'] } });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      bad.body.error.details.map((d: any) => d.path),
      ['photos[0].filename', 'photos[0].data_base64', 'photos[1]'],
    );
    assert.equal((await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [] } })).status, 422);
    assert.equal((await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: 'x', headers: { 'content-type': 'text/plain' } })).status, 415);
    const many = { photos: Array.from({ length: 21 }, () => ({ data_base64: testImage('png').toString('base64') })) };
    const tooMany = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: many });
    assert.equal(tooMany.status, 422);
    assert.equal(photoRows(s), 2);
  } finally {
    await s.stop();
  }
});

test('all or nothing: a non-image, an oversize photo or a truncated image beside good ones stores nothing', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const good = { name: 'ok.jpg', data: testImage('jpg') };
    const path = `/v1/properties/${pid}/photos`;

    const notImage = await uploadMultipart(s, path, key, [
      good,
      { name: 'evil.jpg', data: Buffer.from('GIF89a not really an image at all'), type: 'image/jpeg' },
    ]);
    assert.equal(notImage.status, 422);
    assert.equal(notImage.body.error.code, 'validation_failed');
    assert.deepEqual(
      notImage.body.error.details.map((d: any) => d.path),
      ['photos[1]'],
    );

    const png = testImage('png');
    const cutPng = await uploadMultipart(s, path, key, [good, { name: 'cut.png', data: png.subarray(0, png.length - 20) }]);
    assert.equal(cutPng.status, 422);
    const jpg = testImage('jpg');
    const cutJpg = await uploadMultipart(s, path, key, [{ name: 'cut.jpg', data: jpg.subarray(0, jpg.length - 100) }, good]);
    assert.equal(cutJpg.status, 422);
    assert.deepEqual(
      cutJpg.body.error.details.map((d: any) => d.path),
      ['photos[0]'],
    );
    const webp = testImage('webp');
    const cutWebp = await s.call('POST', path, { token: key, body: { photos: [{ data_base64: webp.subarray(0, webp.length - 7).toString('base64') }] } });
    assert.equal(cutWebp.status, 422);
    const headerOnly = await uploadMultipart(s, path, key, [{ name: 'h.jpg', data: jpg.subarray(0, 2) }]);
    assert.equal(headerOnly.status, 422);

    // 15 MiB + 1 byte, with a valid JPEG start so only the size is wrong.
    const big = Buffer.alloc(15 * 1024 * 1024 + 1);
    jpg.copy(big);
    const oversize = await uploadMultipart(s, path, key, [good, { name: 'huge.jpg', data: big }]);
    assert.equal(oversize.status, 413);
    assert.equal(oversize.body.error.code, 'payload_too_large');
    const atLimit = Buffer.alloc(15 * 1024 * 1024);
    jpg.copy(atLimit, atLimit.length - jpg.length);
    assert.equal(
      (await uploadMultipart(s, path, key, [{ name: 'exact.jpg', data: atLimit }])).status,
      422,
      'a 15 MiB non-JPEG is judged on content, not refused for size',
    );
    const bigJson = await s.call('POST', path, { token: key, body: { photos: [{ data_base64: big.toString('base64') }] } });
    assert.equal(bigJson.status, 413);

    const many = Array.from({ length: 21 }, (_, i) => ({ name: `p${i}.jpg`, data: jpg }));
    const tooMany = await uploadMultipart(s, path, key, many);
    assert.equal(tooMany.status, 422);
    assert.deepEqual(
      tooMany.body.error.details.map((d: any) => d.path),
      ['photos'],
    );

    assert.equal(photoRows(s), 0);
    assert.deepEqual(storedFiles(s), []);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 0);
  } finally {
    await s.stop();
  }
});

test('a multipart body cut off before its closing boundary is 400 and stores nothing', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const jpg = testImage('jpg');
    const boundary = 'xBOUNDARYx';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
      jpg,
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="b.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
      jpg.subarray(0, 1000),
    ]);
    const { port } = new URL(s.url);
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/v1/properties/${pid}/photos`,
          headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
        },
        (r) => {
          let text = '';
          r.on('data', (c) => (text += c));
          r.on('end', () => resolve({ status: r.statusCode!, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.body).error.code, 'bad_request');
    assert.equal(photoRows(s), 0);
    assert.deepEqual(storedFiles(s), []);
  } finally {
    await s.stop();
  }
});
