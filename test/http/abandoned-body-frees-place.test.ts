import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { abandonBody, finishedRequests } from '../helpers/raw-http.js';

/**
 * A request whose client goes away while its body is still coming holds its place in the
 * connection caps only until then. Before the fix nothing ended it (no last chunk ever came):
 * every abandoned upload kept a place for the life of the process, so a few clients timing out
 * mid-body (or one attacker) left the server refusing everyone with 429.
 */
test('an abandoned body frees its place in the connection caps (generic router)', async () => {
  const finished = finishedRequests();
  const server = new HttpServer({ connections: { perAddress: 2, total: 3 }, observe: finished.observe });
  server.post('/echo', (req) => json(200, { n: req.body.length }));
  const port = await server.listen('127.0.0.1', 0);
  try {
    for (let i = 1; i <= 10; i++) await abandonBody(port, '/echo');
    // Each went away after its headers: none refused (429) for the places the others hold.
    assert.deepEqual(await finished.reach(10), Array(10).fill(499));
    const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', body: '{}' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { n: 2 });
  } finally {
    await server.close(100);
  }
});
