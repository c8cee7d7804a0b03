/**
 * What becomes of bytes that are not ASCII in a header value, as the errors page documents it.
 * The HTTP parser (uWebSockets.js) reads a value as UTF-8 (a byte that is not UTF-8 reads as
 * U+FFFD) and drops the bytes that are not ASCII at either end of it. So every header read by
 * its form (a credential, Idempotency-Key) refuses a value with such a character inside, and a
 * key made only of them is refused rather than read as no key; what is dropped at the end of a
 * value cannot be seen by any service. That last case is pinned here: a parser that keeps the
 * bytes fails this test, and the documentation is corrected with it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { rawRequest } from '../helpers/raw-http.js';

/** The UTF-8 bytes of `s` as the latin1 text rawRequest writes byte for byte. */
const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

test('non-ASCII inside a credential or an Idempotency-Key is refused and creates nothing; at the end of a value the parser drops it', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const key = (await s.call('POST', '/v1/api-keys', { token, body: { name: 'video' } })).body.key as string;
    const property = (await s.call('POST', '/v1/properties', { token: key, body: { address: '1 Main St' } })).body.id as number;
    const body = JSON.stringify({ property_id: property, template: 'tour', format: '16:9' });
    const post = (idempotencyKey: string, authorization = `Bearer ${key}`) =>
      rawRequest(s.port, {
        method: 'POST',
        target: '/v1/videos',
        headers: { authorization, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body,
      });
    const inside = `${key.slice(0, 10)}${utf8('é')}${key.slice(10)}`;
    assert.equal((await post('k-1', `Bearer ${inside}`)).status, 401, 'a key with a letter inside it is no key');
    assert.equal((await post('k-1', `Bearer ${key.slice(0, 10)}\u00e9${key.slice(10)}`)).status, 401, 'nor with a byte that is not UTF-8');
    for (const idem of [utf8('k-é-1'), 'k-\u00e9-1', utf8('é'), utf8('🎬')]) {
      const r = await post(idem);
      assert.equal(r.status, 400, JSON.stringify(idem));
      assert.equal(JSON.parse(r.body.toString()).error.code, 'bad_request');
    }
    assert.deepEqual(
      JSON.parse((await rawRequest(s.port, { method: 'GET', target: '/v1/videos', headers: { authorization: `Bearer ${key}` } })).body.toString()).data,
      [],
    );

    // Pinned parser behaviour: `k-é` arrives as `k-`, so both name one video.
    const plain = await post('k-');
    const accented = await post(utf8('k-é'));
    assert.equal(plain.status, 202);
    assert.equal(accented.status, 202);
    assert.equal(JSON.parse(accented.body.toString()).id, JSON.parse(plain.body.toString()).id);
  } finally {
    await s.stop();
  }
});
