/**
 * Regression: a header given twice was copied last-one-wins, while uWS (and every hot route,
 * through getHeader) reads the first: `Authorization: Bearer <bad>` then `Authorization:
 * Bearer <good>` was let in on one route and refused on another, and two different
 * Content-Lengths were taken by the first while a proxy may frame by the last. A credential,
 * signature, idempotency or framing header given twice is now a 400, with the connection closed,
 * and nothing is done.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

/** Writes `head` (+ body) on a fresh connection; the whole answer and whether the server closed. */
function exchange(port: number, head: string[], body = ''): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(`${head.join('\r\n')}\r\n\r\n${body}`));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    // Every request here says `connection: close` or is refused with a close: the end is the server's.
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
  });
}

test('a credential, signature, idempotency or framing header given twice is 400 and changes nothing', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const port = s.port;
    const get = (...extra: string[]) => exchange(port, ['GET /v1/servers HTTP/1.1', 'host: x', 'connection: close', ...extra]);
    assert.equal((await get(`authorization: Bearer ${token}`)).status, 200);
    for (const pair of [
      [`authorization: Bearer ${token}`, 'authorization: Bearer bss_wrong'],
      ['authorization: Bearer bss_wrong', `authorization: Bearer ${token}`],
      [`authorization: Bearer ${token}`, `Authorization: Bearer ${token}`],
    ]) {
      const r = await get(...pair);
      assert.equal(r.status, 400, pair.join(' | '));
      assert.match(r.text, /"code":"bad_request".*authorization is given more than once/);
    }

    const body = '{"name":"twice"}';
    const post = (...extra: string[]) =>
      exchange(port, ['POST /v1/servers HTTP/1.1', 'host: x', 'connection: close', 'content-type: application/json', ...extra], body);
    for (const extra of [
      ['authorization: Bearer bss_wrong', `authorization: Bearer ${token}`, `content-length: ${body.length}`],
      [`authorization: Bearer ${token}`, `content-length: ${body.length}`, 'content-length: 5'],
      [`authorization: Bearer ${token}`, `content-length: ${body.length}`, 'content-type: text/plain'],
      [`authorization: Bearer ${token}`, `content-length: ${body.length}`, 'idempotency-key: a', 'idempotency-key: b'],
    ]) {
      const r = await post(...extra);
      assert.equal(r.status, 400, extra.join(' | '));
    }
    assert.deepEqual((await s.call('GET', '/v1/servers', { token })).body, []);
    assert.equal((await post(`authorization: Bearer ${token}`, `content-length: ${body.length}`)).status, 201);
  } finally {
    await s.stop();
  }
});
