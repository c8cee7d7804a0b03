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

test("behind a TLS-terminating proxy the server's own pages (the demo page) come from SERVICE_PUBLIC_URL's origin and may use every widget", async () => {
  // serve speaks plain http behind the proxy; the browser's pages are on the public https origin.
  const { s, widgetId, visitor } = await widgetServer({ publicUrl: 'https://chat.example.com/' });
  try {
    const own = await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: 'https://chat.example.com' });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.headers.get('access-control-allow-origin'), 'https://chat.example.com');
    assert.equal((await visitor('POST', `/v1/widgets/${widgetId}/conversations`, { origin: 'https://chat.example.com', body: {} })).status, 201);
    // Another origin (the same host over http, another host) is still refused.
    assert.equal((await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: 'http://chat.example.com' })).status, 403);
    assert.equal((await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: 'https://other.example.com' })).status, 403);
  } finally {
    await s.stop();
  }
});

test("a widget's model base_url follows the rule of every registered URL: a #fragment is 422, a non-ASCII host is kept in its xn-- form", async () => {
  const { s, token, widgetId } = await widgetServer();
  try {
    const frag = await s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body: { agent: { base_url: 'https://models.example.com/v1#x' } } });
    assert.equal(frag.status, 422);
    assert.deepEqual(frag.body.error.details, [
      { path: 'agent.base_url', message: 'must not carry a fragment (#…): a fragment is never sent with the request' },
    ]);
    const idn = await s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body: { agent: { base_url: 'https://mödels.example.com/v1' } } });
    assert.equal(idn.status, 200, JSON.stringify(idn.body));
    assert.equal(idn.body.agent.base_url, 'https://xn--mdels-jua.example.com/v1');
  } finally {
    await s.stop();
  }
});

test('a refused Origin is quoted in the 403 up to 200 characters, then …: a header of any length is not echoed whole', async () => {
  const { s, widgetId, visitor } = await widgetServer();
  try {
    const long = `https://${'a'.repeat(5000)}.example`;
    const r = await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: long });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
    assert.ok(r.body.error.message.includes(`"${long.slice(0, 200)}…"`), r.body.error.message.slice(0, 300));
    assert.ok(r.body.error.message.length < 400);
    const short = await visitor('GET', `/v1/widgets/${widgetId}/config`, { origin: 'https://evil.example' });
    assert.match(short.body.error.message, /^Pages from "https:\/\/evil\.example" may not use this widget/);
  } finally {
    await s.stop();
  }
});
