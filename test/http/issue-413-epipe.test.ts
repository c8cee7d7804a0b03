import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { HttpServer } from '../../src/http/server.js';
import { json, text } from '../../src/http/reply.js';
import { HttpError } from '../../src/http/errors.js';
import { fullTick, startTest } from '../sidecar/helpers.js';

// A body many times the limit used to get its 413 written and the connection closed at once;
// fetch, still writing, then failed with EPIPE instead of reading the 413. The connection is
// still closed behind a 413 (nothing more of a refused body is taken in), but only once the
// answer is out: every client reads it.
const BIG = 'x'.repeat(8 * 1024 * 1024);
const HUGE = Buffer.alloc(32 * 1024 * 1024, 120);

async function start(): Promise<{ port: number; server: HttpServer }> {
  const server = new HttpServer();
  server.post('/x', () => json(200, {}), { maxBody: 1024 });
  server.get('/h', () => text(200, 'ok'));
  server.post(
    '/upload/:id',
    async (req) => {
      // As a real route does (an auth or store look-up first): body bytes pile up meanwhile.
      await new Promise((r) => setTimeout(r, 50));
      throw new HttpError('not_found', `No property with id ${req.params.id}.`);
    },
    { body: 'stream', maxBody: 64 * 1024 * 1024 },
  );
  server.post(
    '/upload-some',
    async (req) => {
      for await (const _chunk of req.stream!) {
        await new Promise((r) => setTimeout(r, 50));
        throw new HttpError('payload_too_large', 'The photo is over its limit.');
      }
      return json(200, {});
    },
    { body: 'stream', maxBody: 64 * 1024 * 1024 },
  );
  return { port: await server.listen('127.0.0.1', 0), server };
}

test('fetch of a body far over the limit reads a 413 in the error shape, every time', async () => {
  const { port, server } = await start();
  try {
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BIG });
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    }
  } finally {
    await server.close();
  }
});

test('a streamed-body route that refuses before reading (404) or midway (413) is read by fetch, and the connection lives on', async () => {
  const { port, server } = await start();
  try {
    for (let i = 0; i < 3; i++) {
      const missing = await fetch(`http://127.0.0.1:${port}/upload/9`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: HUGE });
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');
      const over = await fetch(`http://127.0.0.1:${port}/upload-some`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: HUGE });
      assert.equal(over.status, 413);
      assert.equal(((await over.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    }
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/h`)).text(), 'ok');
  } finally {
    await server.close();
  }
});

test('a declared body over the limit is answered 413 before it is read, and the connection is closed behind the answer', async () => {
  const { port, server } = await start();
  try {
    const body = 'x'.repeat(3_000_000);
    const out = await new Promise<string>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      let got = '';
      // Writing on after the close may fail (EPIPE, ECONNRESET): what matters is what was read.
      sock.on('error', () => {});
      sock.on('data', (d: Buffer) => {
        got += d.toString();
      });
      sock.on('close', () => resolve(got));
      sock.write(`POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      sock.write(body);
      sock.write('GET /h HTTP/1.1\r\nHost: a\r\n\r\n');
    });
    assert.match(out, /^HTTP\/1\.1 413 /);
    assert.match(out, /"payload_too_large"/);
    assert.doesNotMatch(out, /200 OK/);
  } finally {
    await server.close();
  }
});

test('sidecar /tick: fetch of a body far over its limit reads the 413', async () => {
  const s = await startTest();
  try {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${s.url}/tick`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...fullTick(), pad: BIG }),
      });
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    }
  } finally {
    await s.close();
  }
});
