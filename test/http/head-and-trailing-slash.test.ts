import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { HttpServer } from '../../src/http/server.js';
import { json, text } from '../../src/http/reply.js';

async function start(): Promise<{ port: number; server: HttpServer }> {
  const server = new HttpServer();
  server.get('/health', () => text(200, 'ok'));
  server.get('/items/:id', (req) => json(200, { id: req.params.id }, { etag: '"v1"' }));
  server.post('/tick', () => json(200, {}));
  server.get('/file', () => ({ status: 200, headers: { 'content-type': 'video/mp4' }, stream: Readable.from([Buffer.from('abcdef')]), length: 6 }));
  return { port: await server.listen('127.0.0.1', 0), server };
}

/** Raw node:http so the bytes after the head are visible (fetch hides a HEAD body). */
function raw(port: number, method: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('HEAD on a GET route answers the GET status and headers with no body', async () => {
  const { port, server } = await start();
  try {
    const health = await raw(port, 'HEAD', '/health');
    assert.equal(health.status, 200);
    assert.equal(health.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(health.headers['content-length'], '2');
    assert.equal(health.body, '');
    const item = await raw(port, 'HEAD', '/items/7');
    assert.equal(item.status, 200);
    assert.equal(item.headers.etag, '"v1"');
    assert.equal(item.body, '');
    const file = await raw(port, 'HEAD', '/file');
    assert.equal(file.status, 200);
    assert.equal(file.headers['content-length'], '6');
    assert.equal(file.body, '');
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/file`)).text(), 'abcdef');
    // The connection stays usable: a GET right after still gets its body.
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(await res.text(), 'ok');
  } finally {
    await server.close();
  }
});

test('HEAD on a route without GET is a 405 with Allow and no body; on no route a bodiless 404', async () => {
  const { port, server } = await start();
  try {
    const tick = await raw(port, 'HEAD', '/tick');
    assert.equal(tick.status, 405);
    assert.equal(tick.headers.allow, 'POST');
    assert.equal(tick.body, '');
    const none = await raw(port, 'HEAD', '/nope');
    assert.equal(none.status, 404);
    assert.equal(none.body, '');
  } finally {
    await server.close();
  }
});

test('a trailing slash is a 404 in the error shape, not a 405 for a method the route serves', async () => {
  const { port, server } = await start();
  try {
    for (const path of ['/health/', '/items/7/']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      assert.equal(res.status, 404, path);
      assert.deepEqual(await res.json(), { error: { code: 'not_found', message: `No route for GET ${path}.` } });
    }
    const allow = await fetch(`http://127.0.0.1:${port}/health`, { method: 'DELETE' });
    assert.equal(allow.status, 405);
    assert.equal(allow.headers.get('allow'), 'GET, HEAD');
    assert.equal(((await allow.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  } finally {
    await server.close();
  }
});
