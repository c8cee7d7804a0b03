import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';

// Regression: the body stream's first read() resumed a socket that was never paused, and uWS
// then reset the second request after a streamed one on the same keep-alive connection.
test('requests after a streamed body on one keep-alive connection are answered', async () => {
  const server = new HttpServer();
  server.post(
    '/up',
    async (req) => {
      let n = 0;
      for await (const chunk of req.stream!) {
        n += (chunk as Buffer).length;
        await new Promise((r) => setImmediate(r));
      }
      return json(201, { n });
    },
    { body: 'stream', maxBody: 64 * 1024 * 1024 },
  );
  server.post('/b', async (req) => json(201, { n: req.body.length }));
  server.get('/g', async () => json(200, { ok: true }));
  const port = await server.listen('127.0.0.1', 0);
  const url = `http://127.0.0.1:${port}`;
  try {
    for (const size of [5, 8 * 1024 * 1024]) {
      const up = await fetch(`${url}/up`, { method: 'POST', body: Buffer.alloc(size, 1) });
      assert.deepEqual(await up.json(), { n: size });
      const b = await fetch(`${url}/b`, { method: 'POST', body: 'hello' });
      assert.deepEqual(await b.json(), { n: 5 });
      const g = await fetch(`${url}/g`);
      assert.equal(g.status, 200);
      assert.equal((await fetch(`${url}/g`)).status, 200);
    }
  } finally {
    await server.close();
  }
});
