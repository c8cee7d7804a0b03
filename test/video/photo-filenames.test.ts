import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKey, createProperty, startVideoServer, testImage, uploadMultipart } from './helpers.js';

/**
 * A photo's filename reads back as it was sent. A multipart filename is UTF-8, as browsers and
 * fetch write it (the form parser read it as Latin-1: `Façade.png` was stored as `FaÃ§ade.png`);
 * a long one keeps its first 255 characters and is never cut inside an emoji (the cut left a
 * lone surrogate: the answer was not UTF-8 and the stored name read back as U+FFFD); a JSON
 * filename holding a lone surrogate is 422, as in every other text field, and nothing is stored.
 */
test('photo filenames: UTF-8 in multipart, cut at 255 characters never inside an emoji, a lone surrogate in JSON is 422', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const png = testImage('png');
    const long = `${'a'.repeat(254)}🏠🏠.png`;
    const up = await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [
      { name: 'Façade été 🏠.png', data: png, type: 'image/png' },
      { name: long, data: png, type: 'image/png' },
    ]);
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const expected = ['Façade été 🏠.png', `${'a'.repeat(254)}🏠`];
    assert.deepEqual(
      up.body.data.map((p: { filename: string }) => p.filename),
      expected,
    );
    const json = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: { photos: [{ filename: long, data_base64: png.toString('base64') }] },
    });
    assert.equal(json.status, 201, JSON.stringify(json.body));
    assert.equal(json.body.data[0].filename, expected[1]);
    const stored = await s.call('GET', `/v1/properties/${pid}`, { token: key });
    assert.deepEqual(
      stored.body.photos.map((p: { filename: string }) => p.filename),
      [...expected, expected[1]],
    );

    const lone = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: `{"photos": [{"filename": "x\\ud800.png", "data_base64": "${png.toString('base64')}"}]}`,
    });
    assert.equal(lone.status, 422, JSON.stringify(lone.body));
    assert.deepEqual(lone.body.error.details, [
      { path: 'photos[0].filename', message: 'must be well-formed Unicode without U+0000 (a lone surrogate or a NUL cannot be stored as sent)' },
    ]);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 3, 'nothing more stored');
  } finally {
    await s.stop();
  }
});

// Regression: a JSON filename that was not a string (a number, an array, an object) was named
// in a detail, then still cut as a string: 500 internal instead of the 422.
test('a JSON photo filename that is not a string is 422 naming it, never a 500, and nothing is stored', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const data = testImage('png').toString('base64');
    for (const filename of [7, -0.5, [], ['a.png'], {}, true]) {
      const r = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ filename, data_base64: data }] } });
      assert.equal(r.status, 422, `${JSON.stringify(filename)}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        ['photos[0].filename'],
      );
    }
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, 0);
  } finally {
    await s.stop();
  }
});
