import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { HttpError } from '../../src/http/errors.js';
import { startTest } from '../sidecar/helpers.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

/**
 * Issue 29: a sidecar with --token read a whole /ticks body (up to 4 MiB) before it answered
 * 401, and serve buffered 1 MiB per connection before its auth. Each request here sends its
 * headers only, announcing a large body that never comes: the answer must arrive anyway, and
 * the connection must be closed behind it.
 */
interface Exchange {
  text: string;
  closed: boolean;
  socket: Socket;
}

/** Sends `head` and reads until the server closes the connection or `waitMs` passes. */
function headersOnly(port: number, head: string, waitMs = 10_000, localAddress = '127.0.0.1'): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    const timer = setTimeout(() => resolve({ text, closed: false, socket }), waitMs);
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true, socket });
    });
    socket.write(head.replace(/\n/g, '\r\n'));
  });
}

const post = (path: string, length: number, extra = ''): string =>
  `POST ${path} HTTP/1.1\nhost: a\ncontent-type: application/json\ncontent-length: ${length}\n${extra}\n`;

test('issue 29: sidecar with --token answers 401 to /tick and /ticks before any body byte, and closes the connection', async () => {
  const s = await startTest({ token: 'secret-token' });
  try {
    const port = Number(new URL(s.url).port);
    for (const path of ['/tick', '/ticks']) {
      for (const extra of ['', 'authorization: Bearer wrong\n', 'x-brain-token: wrong\n']) {
        const r = await headersOnly(port, post(path, path === '/tick' ? 60_000 : 4_000_000, extra));
        assert.ok(r.closed, `${path} ${extra}: connection closed`);
        assert.match(r.text, /^HTTP\/1\.1 401 /, `${path} ${extra}`);
        assert.match(r.text, /"unauthorized"/);
      }
    }
    // With the token, the body is awaited (the connection stays open for it).
    const ok = await headersOnly(port, post('/ticks', 4_000_000, 'authorization: Bearer secret-token\n'), 500);
    assert.equal(ok.closed, false);
    assert.equal(ok.text, '');
    ok.socket.destroy();
  } finally {
    await s.close();
  }
});

test('issue 29: a declared body over the limit is answered 413 before it is read (sidecar and serve), connection closed', async () => {
  const s = await startTest({ token: 'secret-token' });
  const srv = await startTestServer();
  try {
    const r = await headersOnly(Number(new URL(s.url).port), post('/ticks', 64 * 1024 * 1024, 'authorization: Bearer secret-token\n'));
    assert.ok(r.closed);
    assert.match(r.text, /^HTTP\/1\.1 413 /);
    const { token } = await tenantSession(srv);
    const r2 = await headersOnly(srv.port, post('/v1/servers', 64 * 1024 * 1024, `authorization: Bearer ${token}\n`));
    assert.ok(r2.closed);
    assert.match(r2.text, /^HTTP\/1\.1 413 /);
  } finally {
    await s.close();
    await srv.stop();
  }
});

test('issue 29: serve checks the credential of a route with a body before reading it: none, unknown, stale signed request → 401 at once', async () => {
  const s = await startTestServer();
  try {
    const cases: [string, string][] = [
      ['/v1/servers', ''],
      ['/v1/servers', 'authorization: Bearer bss_not_a_session\n'],
      ['/v1/servers', 'authorization: Basic YTpi\n'],
      ['/v1/admin/tenants', 'authorization: Bearer bsa_wrong\n'],
      ['/v1/properties', 'authorization: Bearer bpk_unknown\n'],
      ['/v1/widgets/1/events', 'authorization: Bearer bwk_unknown\n'],
      ['/v1/telemetry', ''],
      ['/v1/telemetry', 'authorization: Bearer bsk_unknown\nx-service-timestamp: 1\nx-service-signature: 00\n'],
      ['/v1/telemetry', `authorization: Bearer bsk_unknown\nx-service-timestamp: ${Math.floor(Date.now() / 1000)}\n`],
      ['/v1/telemetry', `authorization: Bearer bsk_unknown\nx-service-timestamp: ${Math.floor(Date.now() / 1000)}\nx-service-signature: 00\n`],
    ];
    for (const [path, extra] of cases) {
      const r = await headersOnly(s.port, post(path, 60_000, extra));
      assert.ok(r.closed, `${path} ${extra}: closed`);
      assert.match(r.text, /^HTTP\/1\.1 401 /, `${path} ${extra}: ${r.text.slice(0, 200)}`);
    }
    // A valid session: the body is awaited, then the request is answered as usual.
    const { token } = await tenantSession(s, 'pro');
    const body = JSON.stringify({ name: 'after-the-check' });
    const ok = await new Promise<string>((resolve) => {
      const socket = connect(s.port, '127.0.0.1');
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('after-the-check')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.write(post('/v1/servers', body.length, `authorization: Bearer ${token}\n`).replace(/\n/g, '\r\n'));
      setTimeout(() => socket.write(body), 200);
    });
    assert.match(ok, /^HTTP\/1\.1 201 /);
    // The login route is public: it reads its body.
    const login = await s.call('POST', '/v1/auth/login', { body: { email: 'nobody@example.com', password: 'x' } });
    assert.equal(login.status, 401);
  } finally {
    await s.stop();
  }
});

test('issue 29: connection caps: past the per-address cap 429, past the total 503, each refused before its body and closed; a finished request frees its place', async () => {
  const server = new HttpServer({ connections: { perAddress: 2, total: 3 } });
  server.post('/slow', (req) => json(200, { n: req.body.length }), { credentials: 'public' });
  const port = await server.listen('127.0.0.1', 0);
  try {
    const open: Exchange[] = [];
    // Two requests from 127.0.0.1 wait for their bodies.
    for (let i = 0; i < 2; i++) open.push(await headersOnly(port, post('/slow', 10), 200));
    const third = await headersOnly(port, post('/slow', 10));
    assert.ok(third.closed);
    assert.match(third.text, /^HTTP\/1\.1 429 /);
    assert.match(third.text, /retry-after: 1/i);
    // Another address (127.0.0.2 is loopback too) takes the last place in all, then the total is reached.
    open.push(await headersOnly(port, post('/slow', 10), 200, '127.0.0.2'));
    const over = await headersOnly(port, post('/slow', 10), 10_000, '127.0.0.2');
    assert.match(over.text, /^HTTP\/1\.1 503 /);
    // Finishing one request frees its place.
    const done = await new Promise<string>((resolve) => {
      let text = '';
      open[0]!.socket.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('"n":10')) resolve(text);
      });
      open[0]!.socket.write('0123456789');
    });
    assert.match(done, /^HTTP\/1\.1 200 /);
    const again = await headersOnly(port, post('/slow', 10), 200);
    assert.equal(again.closed, false, 'admitted again');
    for (const e of [...open, again]) e.socket.destroy();
  } finally {
    await server.close(100);
  }
});

test('issue 29: a credential check that needs a look-up pauses the body and refuses with the connection closed', async () => {
  let calls = 0;
  const server = new HttpServer({
    credentials: async (req) => {
      calls++;
      await new Promise((r) => setTimeout(r, 20));
      if (req.headers.authorization !== 'Bearer good') throw new HttpError('unauthorized', 'no');
    },
  });
  server.post('/x', (req) => json(200, { n: req.body.length }));
  server.post(
    '/s',
    async (req) => {
      let n = 0;
      for await (const c of req.stream!) n += (c as Buffer).length;
      return json(200, { n });
    },
    { body: 'stream', maxBody: 8 * 1024 * 1024 },
  );
  const port = await server.listen('127.0.0.1', 0);
  try {
    for (const path of ['/x', '/s']) {
      // Twice on one keep-alive connection: a paused socket must not stay paused behind a request.
      for (const size of [10, 900_000, 10, 900_000]) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { authorization: 'Bearer good' }, body: 'x'.repeat(size) });
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { n: size });
      }
      const bad = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { authorization: 'Bearer bad' }, body: 'x'.repeat(100) });
      assert.equal(bad.status, 401);
    }
    assert.equal(calls, 10);
  } finally {
    await server.close();
  }
});
