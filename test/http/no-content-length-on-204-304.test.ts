/**
 * A 204 carries no Content-Length (RFC 9110 §8.6: a server MUST NOT send one in a 204), nor does
 * a 304 (it may only repeat the 200's length, so a cache that refreshes its stored headers from
 * the 304 would otherwise record a length of 0 for a whole file). Both still keep the
 * connection usable: the next request on it is answered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { apiKey, createProperty, startVideoServer, testImage, uploadMultipart } from '../video/helpers.js';

/** Two requests written at once on one connection; the raw answer text. */
function twoOnOne(port: number, first: string, second: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close; got ${JSON.stringify(text)}`));
    }, 15_000);
    socket.on('connect', () => socket.write(first + second));
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

const headOf = (text: string, status: number) => {
  const at = text.indexOf(`HTTP/1.1 ${status} `);
  assert.ok(at >= 0, `no ${status} in ${JSON.stringify(text)}`);
  return text.slice(at, text.indexOf('\r\n\r\n', at)).toLowerCase();
};

test('204 and 304 answers carry no Content-Length, and the connection goes on', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const up = await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [{ name: 'a.png', data: testImage('png'), type: 'image/png' }]);
    const photo = `/v1/properties/${pid}/photos/${up.body.data[0].id}/file`;
    const etag = (await fetch(s.url + photo, { headers: { authorization: `Bearer ${key}` } })).headers.get('etag');
    assert.ok(etag);
    const last = `GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`;
    for (const method of ['GET', 'HEAD']) {
      const notModified = await twoOnOne(
        s.port,
        `${method} ${photo} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\nif-none-match: ${etag}\r\n\r\n`,
        last,
      );
      assert.doesNotMatch(headOf(notModified, 304), /\r\ncontent-length:/, method);
      assert.match(notModified, /HTTP\/1\.1 200 OK/, `${method}: the next request is answered`);
    }
    const preflight = await twoOnOne(s.port, `OPTIONS /v1/properties HTTP/1.1\r\nhost: x\r\n\r\n`, last);
    assert.doesNotMatch(headOf(preflight, 204), /\r\ncontent-length:/);
    assert.match(preflight, /HTTP\/1\.1 200 OK/, 'the next request is answered');
  } finally {
    await s.stop();
  }
});
