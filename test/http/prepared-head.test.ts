import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { HttpServer } from '../../src/http/server.js';
import { prepared } from '../../src/http/reply.js';

/** The raw bytes of one HTTP/1.1 exchange, the Date line (which ticks) left out. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('end', () => resolve(out.replace(/^Date: .*\r\n/im, '')));
    socket.on('error', reject);
  });
}

test('a prepared reply goes out byte for byte as the same reply written header by header, for GET and HEAD, 200 and 304', async () => {
  const server = new HttpServer({ defaultHeaders: { server: 'brainstem-test' } });
  const headers = { 'content-type': 'application/json', etag: '"v7"', 'cache-control': 'no-cache' };
  const body = '{"version":7}';
  const replies = {
    full: { status: 200, headers, body },
    notModified: { status: 304, headers: { etag: '"v7"' } },
  };
  const ready = { full: prepared(replies.full), notModified: prepared(replies.notModified) };
  server.get('/plain/:kind', (req) => replies[req.params.kind as keyof typeof replies]);
  server.get('/prepared/:kind', (req) => ready[req.params.kind as keyof typeof ready]);
  const port = await server.listen('127.0.0.1', 0);
  try {
    for (const method of ['GET', 'HEAD']) {
      for (const kind of ['full', 'notModified']) {
        // Twice: the block is joined on the first write and reused after.
        for (let i = 0; i < 2; i++) {
          const request = (path: string): string => `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
          const plain = await raw(port, request(`/plain/${kind}`));
          const fast = await raw(port, request(`/prepared/${kind}`));
          assert.equal(fast, plain);
          assert.match(fast, kind === 'full' ? /^HTTP\/1\.1 200 OK\r\n/ : /^HTTP\/1\.1 304 Not Modified\r\n/);
          assert.match(fast, /\r\netag: "v7"\r\n/);
          assert.match(fast, /\r\nx-content-type-options: nosniff\r\n/);
        }
      }
    }
  } finally {
    await server.close();
  }
});

test('a header with a line break cannot be prepared', () => {
  assert.throws(() => prepared({ status: 200, headers: { etag: '"v1"\r\nset-cookie: a=b' } }), /line break/);
  assert.throws(() => prepared({ status: 200, headers: { 'a\nb': 'c' } }), /line break/);
});
