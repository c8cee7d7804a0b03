import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode, decode } from '@msgpack/msgpack';
import { HttpServer } from '../../src/http/server.js';
import { json, text, encoded } from '../../src/http/reply.js';
import { decodeBody } from '../../src/http/codec.js';
import { HttpError } from '../../src/http/errors.js';

let slowStarted: () => void = () => {};

async function start(): Promise<{ base: string; server: HttpServer }> {
  const server = new HttpServer();
  server.get('/health', () => text(200, 'ok'));
  server.post(
    '/echo',
    (req) => {
      const { value, encoding } = decodeBody(req.body, req.headers['content-type']);
      return encoded(200, { got: value }, encoding);
    },
    { maxBody: 1024 },
  );
  server.get('/items/:id', async (req) => {
    await new Promise((r) => setTimeout(r, 5));
    return json(200, { id: req.params.id, q: req.searchParams().get('q'), target: req.target });
  });
  server.get('/boom', () => {
    throw new Error('secret stack detail');
  });
  server.get('/teapot', () => {
    throw new HttpError('forbidden', 'no tea for you');
  });
  server.get('/slow', async () => {
    slowStarted();
    await new Promise((r) => setTimeout(r, 200));
    return text(200, 'finished');
  });
  const port = await server.listen('127.0.0.1', 0);
  return { base: `http://127.0.0.1:${port}`, server };
}

test('routes answer with params, query and the request target', async () => {
  const { base, server } = await start();
  try {
    const res = await fetch(`${base}/items/a%20b?q=7`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: 'a b', q: '7', target: '/items/a%20b?q=7' });
    const health = await fetch(`${base}/health`);
    assert.equal(health.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await health.text(), 'ok');
  } finally {
    await server.close();
  }
});

test('JSON and MessagePack bodies are answered in their own encoding', async () => {
  const { base, server } = await start();
  try {
    const j = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
    assert.deepEqual(await j.json(), { got: { a: [1, 2] } });
    const m = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/msgpack' }, body: encode({ a: 1 }) });
    assert.equal(m.headers.get('content-type'), 'application/msgpack');
    assert.deepEqual(decode(new Uint8Array(await m.arrayBuffer())), { got: { a: 1 } });
  } finally {
    await server.close();
  }
});

test('bad input gets the error shape with a stable code', async () => {
  const { base, server } = await start();
  try {
    const cases: Array<[string, RequestInit, number, string]> = [
      ['/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' }, 400, 'bad_request'],
      ['/echo', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' }, 415, 'unsupported_media_type'],
      ['/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `"${'x'.repeat(2000)}"` }, 413, 'payload_too_large'],
      ['/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '['.repeat(100) + ']'.repeat(100) }, 400, 'bad_request'],
      ['/nowhere', {}, 404, 'not_found'],
      ['/health', { method: 'DELETE' }, 405, 'method_not_allowed'],
      ['/teapot', {}, 403, 'forbidden'],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await fetch(base + path, init);
      assert.equal(res.status, status, `${init.method ?? 'GET'} ${path}`);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
    }
  } finally {
    await server.close();
  }
});

test('a thrown error is a 500 that leaks nothing', async () => {
  const { base, server } = await start();
  try {
    const res = await fetch(`${base}/boom`);
    assert.equal(res.status, 500);
    const body = await res.text();
    assert.equal(body.includes('secret'), false);
    assert.deepEqual(JSON.parse(body), { error: { code: 'internal', message: 'Internal server error.' } });
  } finally {
    await server.close();
  }
});

// Refused, not dropped: dropped, a game flag named `prototype` vanished from a bundle published 200.
test('prototype-pollution keys are refused with a 400 naming the key, at any depth; the words elsewhere are fine', async () => {
  const { base, server } = await start();
  try {
    const echo = (body: string) => fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const [body, key] of [
      ['{"__proto__":{"polluted":1},"a":1}', '__proto__'],
      ['{"a":{"b":[{"constructor":{"prototype":{"polluted":1}}}]}}', 'prototype'],
      ['{"flags":{"prototype":{"type":"boolean","value":true}}}', 'prototype'],
    ] as const) {
      const res = await echo(body);
      assert.equal(res.status, 400, body);
      const answer = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(answer.error.code, 'bad_request');
      assert.ok(answer.error.message.includes(`"${key}"`), answer.error.message);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const fine = await echo('{"note":"a prototype of the constructor","__proto":1}');
    assert.deepEqual(((await fine.json()) as { got: unknown }).got, { note: 'a prototype of the constructor', __proto: 1 });
  } finally {
    await server.close();
  }
});

test('close lets an in-flight request finish', async () => {
  const { base, server } = await start();
  const started = new Promise<void>((resolve) => (slowStarted = resolve));
  const pending = fetch(`${base}/slow`).then((r) => r.text());
  await started;
  await server.close();
  assert.equal(await pending, 'finished');
});
