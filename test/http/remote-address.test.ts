import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';

test('remoteAddress is read on demand, in sync handlers and after an await', async () => {
  const server = new HttpServer();
  server.get('/sync', (req) => json(200, { remote: req.remoteAddress }));
  server.get('/async', async (req) => {
    await new Promise((r) => setImmediate(r));
    return json(200, { remote: req.remoteAddress });
  });
  const port = await server.listen('127.0.0.1', 0);
  try {
    for (const path of ['/sync', '/async']) {
      const body = (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as { remote: string };
      assert.match(body.remote, /127\.0\.0\.1|7f00:1|7f00:0001/i, `${path}: ${body.remote}`);
    }
  } finally {
    await server.close();
  }
});
