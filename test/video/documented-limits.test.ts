import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CALLBACK_URL } from '../../src/video/callbacks.js';
import { MAX_PHOTOS_PER_PROPERTY } from '../../src/video/index.js';
import { addPhotos, apiKey, createProperty, startVideoServer, testImage } from './helpers.js';

/** Limits the video page documents that no test held: photos per property and the callback URL's length. */
test(`a property holds ${MAX_PHOTOS_PER_PROPERTY} photos; one more is 422 naming how many fit, nothing stored`, async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    await addPhotos(s, key, pid, MAX_PHOTOS_PER_PROPERTY - 1);
    const photo = { data_base64: testImage('jpg').toString('base64') };
    const two = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [photo, photo] } });
    assert.equal(two.status, 422, JSON.stringify(two.body));
    assert.equal(two.body.error.details[0].path, 'photos');
    assert.match(two.body.error.details[0].message, /at most 1 more photos fit/);
    assert.equal((await s.call('GET', `/v1/properties/${pid}`, { token: key })).body.photo_count, MAX_PHOTOS_PER_PROPERTY - 1, 'nothing stored');
    assert.equal((await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [photo] } })).status, 201, 'the last place');
    const more = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [photo] } });
    assert.equal(more.status, 422);
  } finally {
    await s.stop();
  }
});

test(`a callback_url of ${MAX_CALLBACK_URL} characters is taken; one more is 422 on callback_url`, async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const url = (n: number) => {
      const head = 'http://127.0.0.1:9/cb/';
      return head + 'a'.repeat(n - head.length);
    };
    const long = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', format: '16:9', callback_url: url(MAX_CALLBACK_URL + 1) },
    });
    assert.equal(long.status, 422);
    assert.equal(long.body.error.details[0].path, 'callback_url');
    const ok = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', format: '16:9', callback_url: url(MAX_CALLBACK_URL) },
    });
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
    assert.equal(ok.body.callback_url.length, MAX_CALLBACK_URL);
  } finally {
    await s.stop();
  }
});
