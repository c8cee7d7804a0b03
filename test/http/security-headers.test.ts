import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/embedded.js';
import { rawRequest, type RawRequest } from '../helpers/raw-http.js';
import { fullTick, startTest } from '../sidecar/helpers.js';

// No response carried X-Content-Type-Options, and the dashboard had no CSP or frame protection.

test('issue 14: every sidecar response carries X-Content-Type-Options: nosniff, fast routes and errors included', async () => {
  const s = await startTest({ token: 'secret' });
  try {
    const port = Number(new URL(s.url).port);
    const tick = JSON.stringify(fullTick(1));
    const cases: (RawRequest & { status: number })[] = [
      { method: 'GET', target: '/health', status: 200 },
      { method: 'POST', target: '/tick', headers: { authorization: 'Bearer secret', 'content-type': 'application/json' }, body: tick, status: 200 },
      { method: 'POST', target: '/tick', headers: { authorization: 'Bearer secret', 'content-type': 'application/json' }, body: '{', status: 400 },
      { method: 'POST', target: '/tick', headers: { 'content-type': 'application/json' }, body: tick, status: 401 },
      { method: 'POST', target: '/tick', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(70_000), status: 413 },
      { method: 'GET', target: '/nope', status: 404 },
      { method: 'GET', target: '/tick', status: 405 },
      { method: 'OPTIONS', target: '/tick', status: 204 },
    ];
    for (const c of cases) {
      const a = await rawRequest(port, c);
      assert.equal(a.status, c.status, `${c.method} ${c.target}`);
      assert.equal(a.headers['x-content-type-options'], 'nosniff', `${c.method} ${c.target} ${c.status}`);
    }
  } finally {
    await s.close();
  }
});

test('issue 14: every embedded-server response carries nosniff; the dashboard adds its CSP and Referrer-Policy, the API does not', async () => {
  const s = await startTestServer();
  try {
    for (const [path, status] of [
      ['/health', 200],
      ['/v1/auth/me', 401],
      ['/v1/nope', 404],
      ['/v1/servers/%ZZ', 400],
    ] as const) {
      const a = await rawRequest(s.port, { method: 'GET', target: path });
      assert.equal(a.status, status, path);
      assert.equal(a.headers['x-content-type-options'], 'nosniff', path);
      assert.equal(a.headers['content-security-policy'], undefined, path);
    }
    const page = await rawRequest(s.port, { method: 'GET', target: '/' });
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.match(page.headers['content-security-policy'] ?? '', /^default-src 'self';.* frame-ancestors 'none'; object-src 'none'; base-uri 'none'$/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    // One nosniff header, not the page's own next to the server's.
    assert.equal((page.headers['x-content-type-options'] ?? '').split(',').length, 1);
  } finally {
    await s.stop();
  }
});
