/**
 * Regression: an allowed origin written another way than a browser sends it (`https://Shop.Example`,
 * `https://shop.example:443`, an IDN host) was refused with "must be an origin", which it is.
 * Such an origin is stored as the browser sends it, and pages from it are let in; anything more
 * than an origin (a path, a query, a fragment, credentials) or another scheme is still a 422.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { widgetServer } from './setup.js';

test('allowed origins are stored as browsers send them; anything but an http(s) origin is 422', async () => {
  const { s, token, widgetId, visitor } = await widgetServer();
  try {
    const patch = (allowed: string[]) => s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body: { allowed_origins: allowed } });
    const saved = await patch(['https://Shop.Example', 'https://b.example:443/', 'http://localhost:3000', 'https://exämple.com', 'https://shop.example']);
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.allowed_origins, ['https://shop.example', 'https://b.example', 'http://localhost:3000', 'https://xn--exmple-cua.com']);
    assert.equal((await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: 'https://shop.example' })).status, 200);
    assert.equal((await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: 'https://xn--exmple-cua.com' })).status, 200);
    const bad = [
      'https://shop.example/path',
      'https://shop.example?',
      'https://shop.example#top',
      'https://u:p@shop.example',
      '*',
      'null',
      'ftp://x.example',
      'shop.example',
    ];
    const refused = await patch(bad);
    assert.equal(refused.status, 422);
    assert.deepEqual(
      refused.body.error.details.map((d: { path: string }) => d.path),
      bad.map((_, i) => `allowed_origins[${i}]`),
    );
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/settings`, { token })).body.allowed_origins.length, 4);
  } finally {
    await s.stop();
  }
});
