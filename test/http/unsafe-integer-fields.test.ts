/**
 * Regression: an integer field past 2^53 - 1 was taken as the nearby integer JSON parsing made
 * of it (a rollback to version 9999999999999999999 answered 404 naming 10000000000000000000),
 * and a string in an integer field was told it "must be a finite number".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fields } from '../../src/http/validate.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { serverWithKey } from '../controlplane/helpers.js';

test('an integer field names the rule it breaks: a string, a fraction, and a value past 2^53 - 1', () => {
  const f = new Fields({ a: '1', b: 1.5, c: 2 ** 53, d: Number.MAX_SAFE_INTEGER, e: 'x' });
  f.number('a', { integer: true });
  f.number('b', { integer: true });
  f.number('c', { integer: true });
  assert.equal(f.number('d', { integer: true }), Number.MAX_SAFE_INTEGER);
  f.number('e');
  assert.deepEqual(f.details, [
    { path: 'a', message: 'must be an integer, got string' },
    { path: 'b', message: 'must be an integer, got 1.5' },
    { path: 'c', message: 'must be an integer no larger than 9007199254740991, got 9007199254740992' },
    { path: 'e', message: 'must be a finite number, got string' },
  ]);
});

test('a JSON number beyond the range of a double (1e400) is named so, not as "got number"', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const key = (await s.call('POST', '/v1/api-keys', { token, body: { name: 'video' } })).body.key as string;
    const r = await s.call('POST', '/v1/properties', { token: key, body: '{"address": "1 Main St", "price": 1e400, "bedrooms": -1e400}' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.error.details, [
      { path: 'price', message: 'must be a finite number, got a number out of range (beyond ±1.8e308)' },
      { path: 'bedrooms', message: 'must be an integer, got a number out of range (beyond ±1.8e308)' },
    ]);
    const video = await s.call('POST', '/v1/videos', { token: key, body: '{"property_id": 1e400, "template": "tour", "format": "16:9"}' });
    assert.equal(video.status, 422);
    assert.deepEqual(video.body.error.details, [{ path: 'property_id', message: 'must be an integer, got a number out of range (beyond ±1.8e308)' }]);
    assert.deepEqual((await s.call('GET', '/v1/properties', { token: key })).body.data, []);
  } finally {
    await s.stop();
  }
});

test('a rollback to a version past 2^53 - 1 is 422 on version and publishes nothing', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { serverId } = await serverWithKey(s, token);
    const r = await fetch(`${s.url}/v1/servers/${serverId}/config/rollback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"version": 9999999999999999999}',
    });
    assert.equal(r.status, 422);
    const body = (await r.json()) as { error: { code: string; details: { path: string; message: string }[] } };
    assert.equal(body.error.code, 'validation_failed');
    assert.deepEqual(
      body.error.details.map((d) => d.path),
      ['version'],
    );
    const versions = await s.call('GET', `/v1/servers/${serverId}/config/versions`, { token });
    assert.equal(versions.body.length, 1);
  } finally {
    await s.stop();
  }
});
