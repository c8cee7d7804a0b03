import net from 'node:net';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpServer, type BodyTaker } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { HttpError } from '../../src/http/errors.js';
import type { RequestObserver } from '../../src/http/observe.js';

/** Answers the pending `x-mode: held` request. */
let release: () => void = () => {};
let arrived: () => void = () => {};
const nextHeld = (): Promise<void> => new Promise((r) => (arrived = r));

interface Calls {
  /** Resolves once `n` requests have been observed. */
  seen(n: number): Promise<void>;
  shortcut: number;
  taken: (string | number)[];
  handler: { body: string; tag: string | null }[];
  observed: { status: number; route: string | null }[];
}

/**
 * A POST route with a body shortcut: by `x-mode` it answers the body itself (with its type:
 * a string or a Buffer's length), throws, rejects, declines at the headers or after the body,
 * or holds the answer; the handler echoes what it got. Everything is counted.
 */
async function start(options: ConstructorParameters<typeof HttpServer>[0] = {}): Promise<{ base: string; port: number; server: HttpServer; calls: Calls }> {
  const waiting: { n: number; resolve: () => void }[] = [];
  const calls: Calls = {
    seen: (n) => (calls.observed.length >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve }))),
    shortcut: 0,
    taken: [],
    handler: [],
    observed: [],
  };
  const observe: RequestObserver = ({ status, route }) => {
    calls.observed.push({ status, route });
    for (const w of waiting) if (calls.observed.length >= w.n) w.resolve();
  };
  const server = new HttpServer({ defaultHeaders: { 'x-served-by': 'test' }, observe, ...options });
  server.post(
    '/ingest',
    (req) => {
      calls.handler.push({ body: req.body.toString('utf8'), tag: req.headers['x-tag'] ?? null });
      return json(200, { via: 'handler', body: req.body.toString('utf8') });
    },
    {
      headers: ['x-mode', 'x-tag', 'content-length'],
      maxBody: 1000,
      bodyShortcut: (headers): BodyTaker | null => {
        calls.shortcut++;
        const mode = headers['x-mode'];
        if (mode === undefined || mode === 'decline') return null;
        return (body) => {
          calls.taken.push(typeof body === 'string' ? body : body.length);
          if (mode === 'throw') throw new Error('taker failed');
          if (mode === 'refuse') throw new HttpError('unauthorized', 'no');
          if (mode === 'reject') return new Promise((_, reject) => setImmediate(() => reject(new HttpError('conflict', 'later no'))));
          if (mode === 'later') return new Promise((resolve) => setImmediate(() => resolve(json(202, { via: 'later', tag: headers['x-tag'] ?? null }))));
          if (mode === 'after') return null;
          if (mode === 'held') {
            arrived();
            return new Promise((resolve) => (release = () => resolve(json(202, { via: 'held' }))));
          }
          return json(202, { via: 'shortcut', text: typeof body === 'string', body: body.toString() });
        };
      },
    },
  );
  const port = await server.listen('127.0.0.1', 0);
  return { base: `http://127.0.0.1:${port}`, port, server, calls };
}

const post = (base: string, mode: string | null, body: string | Buffer, path = '/ingest', headers: Record<string, string> = {}) =>
  fetch(base + path, { method: 'POST', headers: { ...(mode ? { 'x-mode': mode } : {}), 'x-tag': 't', ...headers }, body });

test('a body shortcut answers from the body (a string when ASCII, a Buffer otherwise); null at the headers or after the body hands the request to the handler whole', async () => {
  const { base, server, calls } = await start();
  try {
    const ascii = await post(base, 'answer', '{"a":1}');
    assert.equal(ascii.status, 202);
    assert.equal(ascii.headers.get('x-served-by'), 'test');
    assert.equal(ascii.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(await ascii.json(), { via: 'shortcut', text: true, body: '{"a":1}' });

    const utf8 = await post(base, 'answer', '{"a":"é→"}');
    assert.deepEqual(await utf8.json(), { via: 'shortcut', text: false, body: '{"a":"é→"}' });

    const empty = await post(base, 'answer', '');
    assert.deepEqual(await empty.json(), { via: 'shortcut', text: false, body: '' });

    const declined = await post(base, 'decline', 'abc');
    assert.deepEqual(await declined.json(), { via: 'handler', body: 'abc' });
    const after = await post(base, 'after', 'dé');
    assert.deepEqual(await after.json(), { via: 'handler', body: 'dé' });
    assert.deepEqual(calls.handler, [
      { body: 'abc', tag: 't' },
      { body: 'dé', tag: 't' },
    ]);
    assert.deepEqual(calls.taken, ['{"a":1}', Buffer.byteLength('{"a":"é→"}'), 0, 'dé'.length + 1]);
    assert.deepEqual(
      calls.observed.map((o) => o.status),
      [202, 202, 202, 200, 200],
    );
    assert.ok(calls.observed.every((o) => o.route === '/ingest'));
  } finally {
    await server.close();
  }
});

test('a body shortcut is not tried with a query string, a Content-Encoding, without a Content-Length, or over the limit (the usual way answers 415, 413)', async () => {
  const { base, port, server, calls } = await start();
  try {
    const query = await post(base, 'answer', 'q', '/ingest?x=1');
    assert.deepEqual(await query.json(), { via: 'handler', body: 'q' });
    const compressed = await post(base, 'answer', 'c', '/ingest', { 'content-encoding': 'gzip' });
    assert.equal(compressed.status, 415);
    const big = await post(base, 'answer', 'x'.repeat(1001));
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    // Chunked (no Content-Length): the usual way reads it.
    const chunked = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write('POST /ingest HTTP/1.1\r\nHost: x\r\nx-mode: answer\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
      });
      let out = '';
      socket.on('data', (d: Buffer) => (out += String(d)));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    assert.match(chunked, /^HTTP\/1\.1 200/);
    assert.match(chunked, /"via":"handler"/);
    assert.equal(calls.shortcut, 0);
    assert.deepEqual(calls.taken, []);
  } finally {
    await server.close();
  }
});

test('a body sent in pieces is gathered whole; a throw, an HttpError and a rejection are answered in the error shape', async () => {
  const { base, port, server, calls } = await start();
  try {
    const pieces = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write('POST /ingest HTTP/1.1\r\nHost: x\r\nx-mode: answer\r\nContent-Length: 10\r\nConnection: close\r\n\r\nabcde');
        setTimeout(() => socket.write('fghij'), 50);
      });
      let out = '';
      socket.on('data', (d: Buffer) => (out += String(d)));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    assert.match(pieces, /^HTTP\/1\.1 202/);
    assert.match(pieces, /"body":"abcdefghij"/);
    assert.equal(calls.taken.length, 1);

    const thrown = await post(base, 'throw', 'x');
    assert.equal(thrown.status, 500);
    assert.equal(thrown.headers.get('x-served-by'), 'test');
    assert.equal(((await thrown.json()) as { error: { code: string } }).error.code, 'internal');
    const refused = await post(base, 'refuse', 'x');
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'unauthorized');
    const rejected = await post(base, 'reject', 'x');
    assert.equal(rejected.status, 409);
    assert.equal(((await rejected.json()) as { error: { code: string } }).error.code, 'conflict');
    const later = await post(base, 'later', 'x');
    assert.deepEqual(await later.json(), { via: 'later', tag: 't' });
    assert.deepEqual(
      calls.observed.map((o) => o.status),
      [202, 500, 401, 409, 202],
    );
    assert.deepEqual(calls.handler, []);
  } finally {
    await server.close();
  }
});

test('a taken request is in flight and counted against the connection caps until answered; close waits for it', async () => {
  const { base, server } = await start({ connections: { perAddress: 1, total: 10 } });
  try {
    const reached = nextHeld();
    const held = post(base, 'held', 'x').then((r) => r.json());
    await reached;
    // Its address holds its one place: the next request is refused by the usual way (429).
    const second = await post(base, 'answer', 'y');
    assert.equal(second.status, 429);
    let closedYet = false;
    const closed = server.close().then(() => (closedYet = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(closedYet, false);
    release();
    assert.deepEqual(await held, { via: 'held' });
    await closed;
  } finally {
    await server.close();
  }
});

test('a client that goes away while its taken request waits is not written to, and its place is given back', async () => {
  const { port, base, server, calls } = await start({ connections: { perAddress: 1, total: 10 } });
  try {
    const reached = nextHeld();
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('POST /ingest HTTP/1.1\r\nHost: x\r\nx-mode: held\r\nContent-Length: 1\r\n\r\nx');
    });
    socket.on('error', () => {});
    await reached;
    socket.destroy();
    // Recorded as 499 when uWS tells of the closed connection, before the answer exists.
    await calls.seen(1);
    release();
    assert.equal((await post(base, 'answer', 'z')).status, 202);
    assert.deepEqual(
      calls.observed.map((o) => o.status),
      [499, 202],
    );
  } finally {
    await server.close();
  }
});

test('a body shortcut needs a whole body, a pattern without parameters and its headers listed', () => {
  const server = new HttpServer();
  const bodyShortcut = (): null => null;
  assert.throws(() => server.post('/a/:id', () => json(200, {}), { headers: ['x'], bodyShortcut }), /body shortcut/);
  assert.throws(() => server.post('/b', () => json(200, {}), { bodyShortcut }), /body shortcut/);
  assert.throws(() => server.post('/c', () => json(200, {}), { headers: ['x'], body: 'stream', bodyShortcut }), /body shortcut/);
  assert.throws(() => server.post('/d', () => json(200, {}), { headers: ['x'], refusalHeaders: async () => ({}), bodyShortcut }), /body shortcut/);
});
