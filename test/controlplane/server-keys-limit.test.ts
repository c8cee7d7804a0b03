import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

test('live server keys: at most liveServerKeys per server (403 plan_limit naming the limit); a revoked key frees a place', async () => {
  assert.equal(DEFAULT_LIMITS.liveServerKeys, 20);
  const s = await startTestServer({ limits: { liveServerKeys: 3 } });
  try {
    const { token } = await tenantSession(s, 'agency');
    const server = (await s.call('POST', '/v1/servers', { token, body: { name: 'dayz-1' } })).body.id as number;
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.call('POST', `/v1/servers/${server}/keys`, { token });
      assert.equal(r.status, 201);
      ids.push(r.body.id);
    }
    const over = await s.call('POST', `/v1/servers/${server}/keys`, { token });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /at most 3 live keys/);
    assert.equal((await s.call('GET', `/v1/servers/${server}/keys`, { token })).body.length, 3);
    assert.equal((await s.call('DELETE', `/v1/servers/${server}/keys/${ids[0]}`, { token })).status, 204);
    assert.equal((await s.call('POST', `/v1/servers/${server}/keys`, { token })).status, 201);
  } finally {
    await s.stop();
  }
});
