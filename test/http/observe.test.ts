import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Readable } from 'node:stream';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { HttpError } from '../../src/http/errors.js';
import { accessLogLine, CLIENT_CLOSED, type RequestRecord } from '../../src/http/observe.js';
import { silentLogger } from '../../src/log.js';

test('an observed server reports method, route pattern, status and µs of every request, and never the path or query', async () => {
  const records: RequestRecord[] = [];
  const server = new HttpServer({ observe: (r) => records.push(r) });
  server.get('/items/:id', () => json(200, { ok: true }));
  server.post('/items', () => {
    throw new HttpError('validation_failed', 'bad');
  });
  server.raw('POST', '/raw', (res, _req, control, peer) => {
    res.onAborted(() => {});
    // A raw route that writes no status line answers 200.
    res.end('ok');
    control.done({ aborted: false, peer });
  });
  const port = await server.listen('127.0.0.1', 0);
  const base = `http://127.0.0.1:${port}`;
  try {
    await (await fetch(`${base}/items/secret-id?token=bsk_secret`)).text();
    await (await fetch(`${base}/items`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).text();
    await (await fetch(`${base}/raw`, { method: 'POST', body: 'x' })).text();
    await (await fetch(`${base}/nowhere?key=bpk_secret`)).text();
    await (await fetch(`${base}/items/1`, { method: 'HEAD' })).text();
    assert.deepEqual(
      records.map((r) => [r.method, r.route, r.status]),
      [
        ['GET', '/items/:id', 200],
        ['POST', '/items', 422],
        ['POST', '/raw', 200],
        ['GET', null, 404],
        ['HEAD', '/items/:id', 200],
      ],
    );
    for (const r of records) assert.ok(Number.isInteger(r.micros) && r.micros >= 0);
    const line = accessLogLine(records[0]!, () => 0);
    assert.deepEqual(JSON.parse(line), {
      time: '1970-01-01T00:00:00.000Z',
      type: 'access',
      method: 'GET',
      route: '/items/:id',
      status: 200,
      us: records[0]!.micros,
    });
    assert.doesNotMatch(records.map((r) => accessLogLine(r)).join(''), /secret|token|bsk_|bpk_/);
  } finally {
    await server.close();
  }
});

test('a request whose client goes away before the answer is reported once, as 499', async () => {
  const records: RequestRecord[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const server = new HttpServer({ observe: (r) => records.push(r) });
  let arrived!: () => void;
  const arrival = new Promise<void>((r) => (arrived = r));
  server.get('/slow', async () => {
    arrived();
    await gate;
    return json(200, {});
  });
  const port = await server.listen('127.0.0.1', 0);
  try {
    const abort = new AbortController();
    const pending = fetch(`http://127.0.0.1:${port}/slow`, { signal: abort.signal }).catch(() => null);
    await arrival;
    abort.abort();
    await pending;
    while (records.length === 0) await new Promise((r) => setTimeout(r, 10));
    release();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      records.map((r) => [r.route, r.status]),
      [['/slow', CLIENT_CLOSED]],
    );
  } finally {
    release();
    await server.close();
  }
});

test('an observer that throws is logged and changes nothing: answers, aborts and the process go on', async () => {
  const errors: string[] = [];
  const logger = { ...silentLogger, error: (msg: string) => errors.push(msg) };
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const arrival = new Promise<void>((r) => (arrived = r));
  const server = new HttpServer({
    logger,
    observe: () => {
      throw new Error('observer broke');
    },
  });
  server.get('/items/:id', () => json(200, { ok: true }));
  server.get('/slow', async () => {
    arrived();
    await gate;
    return json(200, {});
  });
  const port = await server.listen('127.0.0.1', 0);
  const base = `http://127.0.0.1:${port}`;
  try {
    const ok = await fetch(`${base}/items/1`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { ok: true });
    // The observer fails inside uWS's abort callback, before the route's own abort handling.
    const abort = new AbortController();
    const pending = fetch(`${base}/slow`, { signal: abort.signal }).catch(() => null);
    await arrival;
    abort.abort();
    await pending;
    while (errors.length < 2) await new Promise((r) => setTimeout(r, 10));
    release();
    const missing = await fetch(`${base}/nowhere`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');
    assert.ok(
      errors.every((m) => m === 'request observer failed'),
      errors.join(),
    );
  } finally {
    release();
    await server.close();
  }
});

test('shortcut answers are observed like any other: whole at once, promised, refused, declined, and a promised one whose client left (499)', async () => {
  const records: RequestRecord[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const arrival = new Promise<void>((r) => (arrived = r));
  const server = new HttpServer({ observe: (r) => records.push(r) });
  const shortcut = (req: { getQuery(): string | undefined }) => {
    const q = req.getQuery() ?? '';
    if (q === 'now') return { status: 304, headers: { etag: '"v1"' } };
    if (q === 'later') return Promise.resolve({ status: 200, body: 'later' });
    if (q === 'refused') return Promise.reject(new HttpError('unauthorized', 'no'));
    if (q === 'gone') {
      arrived();
      return gate.then(() => ({ status: 200, body: 'too late' }));
    }
    return null;
  };
  server.get('/pull', () => json(200, { slow: true }), { shortcut });
  const port = await server.listen('127.0.0.1', 0);
  const base = `http://127.0.0.1:${port}/pull`;
  try {
    assert.equal((await fetch(`${base}?now`)).status, 304);
    assert.equal(await (await fetch(`${base}?later`)).text(), 'later');
    assert.equal((await fetch(`${base}?refused`)).status, 401);
    assert.equal((await fetch(`${base}?declined`)).status, 200);
    const abort = new AbortController();
    const pending = fetch(`${base}?gone`, { signal: abort.signal }).catch(() => null);
    await arrival;
    abort.abort();
    await pending;
    while (records.length < 5) await new Promise((r) => setTimeout(r, 10));
    release();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      records.map((r) => [r.route, r.status]),
      [
        ['/pull', 304],
        ['/pull', 200],
        ['/pull', 401],
        ['/pull', 200],
        ['/pull', CLIENT_CLOSED],
      ],
    );
    for (const r of records) assert.ok(Number.isInteger(r.micros) && r.micros >= 0);
  } finally {
    release();
    await server.close();
  }
});

test('every way a route answers is observed once with the status it wrote: whole replies, streams, refusals before the body, errors, errors in the body', async () => {
  const records: RequestRecord[] = [];
  const server = new HttpServer({ observe: (r) => records.push(r), errorsParam: true });
  server.get('/whole', async () => json(201, { ok: true }));
  server.get('/stream', () => ({ status: 206, stream: Readable.from([Buffer.from('ab'), Buffer.from('cd')]), length: 4 }));
  server.get('/chunked', () => ({ status: 200, stream: Readable.from([Buffer.from('ab')]) }));
  server.post('/small', () => json(200, {}), { maxBody: 4, credentials: 'public' });
  server.get('/late', async () => {
    await new Promise((r) => setImmediate(r));
    throw new HttpError('not_found', 'gone');
  });
  const port = await server.listen('127.0.0.1', 0);
  const base = `http://127.0.0.1:${port}`;
  try {
    assert.equal((await (await fetch(`${base}/whole`)).text()).length > 0, true);
    assert.equal(await (await fetch(`${base}/stream`)).text(), 'abcd');
    assert.equal(await (await fetch(`${base}/chunked`)).text(), 'ab');
    await (await fetch(`${base}/small`, { method: 'POST', body: 'too long a body' })).text();
    await (await fetch(`${base}/late`)).text();
    await (await fetch(`${base}/late?errors=body`)).text();
    while (records.length < 6) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(
      records.map((r) => [r.method, r.route, r.status]),
      [
        ['GET', '/whole', 201],
        ['GET', '/stream', 206],
        ['GET', '/chunked', 200],
        ['POST', '/small', 413],
        ['GET', '/late', 404],
        ['GET', '/late', 200],
      ],
    );
  } finally {
    await server.close();
  }
});
