import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { pinnedFetch } from '../../src/net/pinned-fetch.js';

/**
 * A tenant chooses the URL a widget's model is called at, so whoever runs that server chooses
 * the answer. The Response a fetch gives may hold a status of 200-599 only, and no body with
 * 204, 205 or 304: the constructor throws otherwise, and it ran in the HTTP client's event
 * handler, where nothing caught it. A model server answering `101`, `205` with a body or `999`
 * stopped the whole process. Each such answer now fails the one call.
 */
async function rawServer(head: string): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(head));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

test('an answer no Response may hold (status 101, 205 with a body, 600, 999, 099) fails the call, and the process goes on', async () => {
  for (const line of ['HTTP/1.1 999 Odd', 'HTTP/1.1 600 Odd', 'HTTP/1.1 101 Switching Protocols', 'HTTP/1.1 099 Odd']) {
    const server = await rawServer(`${line}\r\ncontent-length: 2\r\n\r\n{}`);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
      await assert.rejects(pinnedFetch({ allowPrivate: true })(url, { method: 'POST', body: '{}' }), /not a final HTTP status/, line);
    } finally {
      server.close();
    }
  }
  for (const status of [205, 204, 304]) {
    const server = await rawServer(`HTTP/1.1 ${status} No Content\r\ncontent-length: 0\r\n\r\n`);
    try {
      const r = await pinnedFetch({ allowPrivate: true })(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(r.status, status);
      assert.equal(r.body, null);
    } finally {
      server.close();
    }
  }
  const ok = await rawServer('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}');
  try {
    const r = await pinnedFetch({ allowPrivate: true })(`http://127.0.0.1:${(ok.address() as AddressInfo).port}/`);
    assert.deepEqual(await r.json(), { ok: true });
  } finally {
    ok.close();
  }
});
