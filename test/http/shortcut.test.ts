import http from 'node:http';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { HttpError } from '../../src/http/errors.js';

/** Answers the pending `?held` request. */
let release: () => void = () => {};
/** Resolves when a `?held` request has reached the shortcut. */
let arrived: () => void = () => {};
const nextHeld = (): Promise<void> => new Promise((r) => (arrived = r));

/**
 * A route with a shortcut: it answers `?fast=…` itself from the uWS request, throws on
 * `?boom`, and leaves everything else to the handler. Both count their calls.
 */
async function start(): Promise<{ base: string; server: HttpServer; calls: { shortcut: number; handler: number } }> {
  const calls = { shortcut: 0, handler: 0 };
  const server = new HttpServer({ defaultHeaders: { 'x-served-by': 'test' } });
  server.get(
    '/thing',
    (req) => {
      calls.handler++;
      return json(200, { via: 'handler', tag: req.headers['x-tag'] ?? null });
    },
    {
      shortcut: (req) => {
        calls.shortcut++;
        const query = req.getQuery() ?? '';
        if (query === 'boom') throw new Error('shortcut failed');
        if (query === 'later') {
          const tag = req.getHeader('x-tag');
          return new Promise((resolve) => setImmediate(() => resolve(json(200, { via: 'later', tag }))));
        }
        if (query === 'refused') return new Promise((_, reject) => setImmediate(() => reject(new HttpError('unauthorized', 'no'))));
        if (query === 'held') {
          arrived();
          return new Promise((resolve) => (release = () => resolve(json(200, { via: 'held' }))));
        }
        if (query === 'fast=304') return { status: 304, headers: { etag: '"v1"' } };
        if (query.startsWith('fast')) return json(200, { via: 'shortcut', tag: req.getHeader('x-tag') });
        return null;
      },
    },
  );
  const port = await server.listen('127.0.0.1', 0);
  return { base: `http://127.0.0.1:${port}`, server, calls };
}

test('a shortcut answers with the default headers and the handler never runs; null hands the request to the handler', async () => {
  const { base, server, calls } = await start();
  try {
    const fast = await fetch(`${base}/thing?fast`, { headers: { 'x-tag': 'a' } });
    assert.equal(fast.status, 200);
    assert.equal(fast.headers.get('x-served-by'), 'test');
    assert.equal(fast.headers.get('content-type'), 'application/json');
    assert.deepEqual(await fast.json(), { via: 'shortcut', tag: 'a' });
    assert.deepEqual(calls, { shortcut: 1, handler: 0 });

    const notModified = await fetch(`${base}/thing?fast=304`);
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.get('etag'), '"v1"');
    assert.equal(await notModified.text(), '');

    const slow = await fetch(`${base}/thing?other`, { headers: { 'x-tag': 'b' } });
    assert.deepEqual(await slow.json(), { via: 'handler', tag: 'b' });
    assert.deepEqual(calls, { shortcut: 3, handler: 1 });
  } finally {
    await server.close();
  }
});

test("a GET route's shortcut is not tried for HEAD, and a throwing shortcut is a 500 in the error shape", async () => {
  const { base, server, calls } = await start();
  try {
    const head = await fetch(`${base}/thing?fast`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.deepEqual(calls, { shortcut: 0, handler: 1 });

    const boom = await fetch(`${base}/thing?boom`);
    assert.equal(boom.status, 500);
    assert.equal(boom.headers.get('x-served-by'), 'test');
    assert.equal(((await boom.json()) as { error: { code: string } }).error.code, 'internal');
    assert.deepEqual(calls, { shortcut: 1, handler: 1 });
  } finally {
    await server.close();
  }
});

test('a shortcut may answer with a promise: its reply once it resolves, a rejection in the error shape; close waits for it', async () => {
  const { base, server, calls } = await start();
  try {
    const later = await fetch(`${base}/thing?later`, { headers: { 'x-tag': 'c' } });
    assert.equal(later.status, 200);
    assert.equal(later.headers.get('x-served-by'), 'test');
    assert.deepEqual(await later.json(), { via: 'later', tag: 'c' });

    const refused = await fetch(`${base}/thing?refused`);
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'unauthorized');
    assert.deepEqual(calls, { shortcut: 2, handler: 0 });

    // A promised answer still in flight is waited for by close(), on a connection of its own.
    const reached = nextHeld();
    const held = new Promise<string>((resolve, reject) => {
      http
        .get(`${base}/thing?held`, { agent: false }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += String(c)));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
    await reached;
    let closedYet = false;
    const closed = server.close().then(() => (closedYet = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(closedYet, false);
    release();
    assert.deepEqual(JSON.parse(await held), { via: 'held' });
    await closed;
  } finally {
    await server.close();
  }
});

test('a client that goes away before a promised shortcut answer is not written to', async () => {
  const { base, server } = await start();
  try {
    const ac = new AbortController();
    const reached = nextHeld();
    const held = fetch(`${base}/thing?held`, { signal: ac.signal }).catch((err: Error) => err.name);
    await reached;
    ac.abort();
    assert.equal(await held, 'AbortError');
    release();
    // The server is unharmed and answers the next request.
    assert.equal((await fetch(`${base}/thing?fast`)).status, 200);
  } finally {
    await server.close();
  }
});
