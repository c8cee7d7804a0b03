/**
 * Regression: a sidecar request signed over its PATH alone (`/v1/config`, the word the request
 * signing rule uses, read literally) was refused 401 on `GET /v1/config?server=N`; only the
 * whole target with its query was accepted. Both are accepted now, and a signature over the
 * whole target still covers its query.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signRequest, verifyRequest } from '../../src/signing/request.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { serverWithKey, signed } from './helpers.js';

test('a pull signed over the path without its query is served (200 with ETag, then 304); a tampered query of a whole-target signature is 401', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const at = Date.now();
    const pull = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`, { signTarget: '/v1/config', at });
    assert.equal(pull.status, 200, JSON.stringify(pull.body));
    assert.equal(pull.headers.get('etag'), '"v1"');
    const again = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=1`, {
      signTarget: '/v1/config',
      at: at + 1000,
      headers: { 'if-none-match': '"v1"' },
    });
    assert.equal(again.status, 304);
    // The same path-only signature a second time (same second, even with another query) is a replay.
    const replay = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=9`, { signTarget: '/v1/config', at });
    assert.equal(replay.status, 401);
    const whole = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=2`);
    assert.equal(whole.status, 200);
    const tampered = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=3`, { signTarget: `/v1/config?server=${a.serverId}&n=4` });
    assert.equal(tampered.status, 401);
    assert.equal(tampered.body.error.code, 'unauthorized');
  } finally {
    await s.stop();
  }
});

test('verifyRequest takes a signature over the whole target or over its path alone, nothing else', () => {
  const key = 'bsk_example_key_do_not_use';
  const now = 1_767_225_600_000;
  const check = (signedTarget: string, sentTarget: string) => {
    const h = signRequest(key, { method: 'GET', target: signedTarget }, now);
    return verifyRequest(key, { method: 'GET', target: sentTarget, timestamp: h['x-service-timestamp'], signature: h['x-service-signature'] }, now).ok;
  };
  assert.equal(check('/v1/config?server=7', '/v1/config?server=7'), true);
  assert.equal(check('/v1/config', '/v1/config?server=7'), true);
  assert.equal(check('/v1/config?server=7', '/v1/config?server=8'), false);
  assert.equal(check('/v1/config?server=7', '/v1/config'), false);
  assert.equal(check('/v1/confi', '/v1/config?server=7'), false);
});
