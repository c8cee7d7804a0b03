/**
 * Regression: `POST /v1/properties` without a `title` was a 422, though the API's contract
 * names no property field: a client that knows only a property's address (and its own extras)
 * got no property, and every later step (photos, the video) failed with it. A property without
 * a title is titled by its address now.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { titleLines } from '../../src/video/titlecard.js';
import { apiKey, startVideoServer } from './helpers.js';

test('a property without a title is created and titled by its address; an empty or wrong-typed title is still 422', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const r = await s.call('POST', '/v1/properties', { token: key, body: { address: '12 Harbour Road', price: 450000, bedrooms: 3, name: 'Sea view' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.title, '12 Harbour Road');
    assert.equal(r.body.address, '12 Harbour Road');
    assert.equal((await s.call('GET', `/v1/properties/${r.body.id}`, { token: key })).body.title, '12 Harbour Road');
    const long = 'a'.repeat(500);
    const l = await s.call('POST', '/v1/properties', { token: key, body: { address: long } });
    assert.equal(l.status, 201);
    assert.equal(l.body.title, long.slice(0, 200));
    for (const title of ['', 5]) {
      const bad = await s.call('POST', '/v1/properties', { token: key, body: { title, address: '1 Quay' } });
      assert.equal(bad.status, 422, JSON.stringify(title));
      assert.deepEqual(
        bad.body.error.details.map((d: { path: string }) => d.path),
        ['title'],
      );
    }
    const none = await s.call('POST', '/v1/properties', { token: key, body: { title: 'No address' } });
    assert.equal(none.status, 422);
    assert.deepEqual(
      none.body.error.details.map((d: { path: string }) => d.path),
      ['address'],
    );
    assert.equal((await s.call('GET', '/v1/properties', { token: key })).body.data.length, 2);
  } finally {
    await s.stop();
  }
});

test('the title card of a property titled by its address names the address once', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const r = await s.call('POST', '/v1/properties', { token: key, body: { address: '12 Harbour Road', bedrooms: 2 } });
    assert.deepEqual(
      titleLines(r.body, '16:9').map((l) => l.text),
      ['12 Harbour Road', '2 bedrooms'],
    );
    const withCity = await s.call('POST', '/v1/properties', { token: key, body: { address: '12 Harbour Road', city: 'Cork' } });
    assert.deepEqual(
      titleLines(withCity.body, '16:9').map((l) => l.text),
      ['12 Harbour Road', '12 Harbour Road, Cork'],
    );
  } finally {
    await s.stop();
  }
});
