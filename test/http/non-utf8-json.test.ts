/**
 * Regression: a JSON body holding bytes that are not UTF-8 (`\xff`, a cut sequence, an encoded
 * surrogate) was decoded with U+FFFD in their place and stored: a property titled `A\xff\xfe`
 * was created as `A��`, a record other than the one sent. Such a body is malformed: 400, and
 * nothing is created. (The sidecar's tick routes already refused it.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { widgetServer } from '../webhooks/conversations/setup.js';

const BAD = [Buffer.from([0xff, 0xfe]), Buffer.from([0xe2, 0x82]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0xaf])];

/** `{"key":"A<bytes>", ...rest}` as raw bytes. */
function bodyWith(key: string, bytes: Buffer, rest: Record<string, unknown>): Buffer {
  const tail = JSON.stringify(rest).slice(1);
  return Buffer.concat([Buffer.from(`{"${key}":"A`), bytes, Buffer.from(`"${tail.length > 1 ? `,${tail}` : '}'}`)]);
}

test('a JSON body with bytes that are not UTF-8 is 400 on the control plane, video and widget routes, and creates nothing', async () => {
  const { s, token, widgetId, start } = await widgetServer();
  try {
    const post = (path: string, body: Buffer, auth = token) =>
      fetch(s.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json', origin: 'https://shop.example' },
        body,
      });
    const c = await start();
    const cases: [string, string, Record<string, unknown>, string?][] = [
      ['/v1/servers', 'name', {}],
      ['/v1/properties', 'title', { address: '1 Road', city: 'Paris', price: 1, currency: 'EUR', bedrooms: 1 }],
      [`/v1/widgets/${widgetId}/webhooks`, 'secret', { url: 'http://127.0.0.1:9/h', events: ['lead.captured'] }],
      [`/v1/conversations/${c.conversation_id}/lead`, 'name', { email: 'a@example.com' }, c.token],
    ];
    for (const [path, key, rest, auth] of cases) {
      for (const bytes of BAD) {
        const r = await post(path, bodyWith(key, bytes, rest), auth);
        const answer = (await r.json()) as { error: { code: string; message: string } };
        assert.equal(r.status, 400, `${path} ${bytes.toString('hex')}`);
        assert.equal(answer.error.code, 'bad_request');
        assert.match(answer.error.message, /UTF-8/);
      }
      // The same body in UTF-8 is taken.
      const ok = await post(path, bodyWith(key, Buffer.from('é'), rest), auth);
      assert.ok(ok.status < 300, `${path}: ${ok.status} ${await ok.text()}`);
    }
    assert.equal((await s.call('GET', '/v1/servers', { token })).body.length, 1);
    assert.equal((await s.call('GET', '/v1/properties', { token })).body.data.length, 1);
  } finally {
    await s.stop();
  }
});
