import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';

test('POST /v1/servers makes a ServerSummary with the default bundle at version 1; list and get show it', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const created = await s.call('POST', '/v1/servers', { token, body: { name: 'Chernarus #1' } });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), [
      'activeKeys',
      'botCount',
      'configVersion',
      'connection',
      'createdAt',
      'id',
      'lastSeenAt',
      'name',
      'playersOnline',
    ]);
    assert.equal(created.body.name, 'Chernarus #1');
    assert.equal(created.body.configVersion, 1);
    assert.equal(created.body.lastSeenAt, null);
    assert.equal(typeof created.body.id, 'number');
    const list = await s.call('GET', '/v1/servers', { token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, [created.body]);
    const one = await s.call('GET', `/v1/servers/${created.body.id}`, { token });
    assert.deepEqual(one.body, created.body);
    const config = await s.call('GET', `/v1/servers/${created.body.id}/config`, { token });
    assert.equal(config.body.version, 1);
    assert.equal(config.body.speech.limits.economy, 'Normal');
    for (const name of ['', '   ', 7]) {
      const bad = await s.call('POST', '/v1/servers', { token, body: { name } });
      assert.equal(bad.status, 422, JSON.stringify(name));
      assert.equal(bad.body.error.details[0].path, 'name');
    }
    assert.equal((await s.call('POST', '/v1/servers', { token, body: { name: '  padded  ' } })).body.name, 'padded');
  } finally {
    await s.stop();
  }
});

test('server keys: shown once on create, listed without secrets, revoked with 204, then 404', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const { body: server } = await s.call('POST', '/v1/servers', { token, body: { name: 'k' } });
    const k = await s.call('POST', `/v1/servers/${server.id}/keys`, { token });
    assert.equal(k.status, 201);
    assert.match(k.body.key, /^bsk_[A-Za-z0-9_-]{40,}$/);
    assert.equal(typeof k.body.id, 'number');
    const list = await s.call('GET', `/v1/servers/${server.id}/keys`, { token });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
    assert.equal(JSON.stringify(list.body).includes(k.body.key), false);
    assert.equal(list.body[0].revokedAt, null);
    assert.equal(list.body[0].preview, k.body.key.slice(0, 8));
    assert.equal((await s.call('GET', `/v1/servers/${server.id}`, { token })).body.activeKeys, 1);
    assert.equal((await s.call('DELETE', `/v1/servers/${server.id}/keys/${k.body.id}`, { token })).status, 204);
    assert.equal((await s.call('DELETE', `/v1/servers/${server.id}/keys/${k.body.id}`, { token })).status, 404);
    assert.notEqual((await s.call('GET', `/v1/servers/${server.id}/keys`, { token })).body[0].revokedAt, null);
  } finally {
    await s.stop();
  }
});

test("cross-tenant isolation: another tenant's server is 404 on every dashboard route, and absent from its list", async () => {
  const s = await startTestServer();
  try {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    const { body: server } = await s.call('POST', '/v1/servers', { token: a.token, body: { name: 'mine' } });
    const key = await s.call('POST', `/v1/servers/${server.id}/keys`, { token: a.token });
    assert.deepEqual((await s.call('GET', '/v1/servers', { token: b.token })).body, []);
    const paths = ['', '/keys', '/overview', '/roster', '/activity', '/economy', '/usage'].map((p) => `/v1/servers/${server.id}${p}`);
    for (const path of paths) {
      const r = await s.call('GET', path, { token: b.token });
      assert.equal(r.status, 404, path);
      assert.equal(r.body.error.code, 'config_not_found', path);
    }
    assert.equal((await s.call('POST', `/v1/servers/${server.id}/keys`, { token: b.token })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/servers/${server.id}/keys/${key.body.id}`, { token: b.token })).status, 404);
    for (const path of ['/v1/servers/99999', '/v1/servers/abc', '/v1/servers/999/config', '/v1/servers/0/usage']) {
      const r = await s.call('GET', path, { token: a.token });
      assert.equal(r.status, 404, path);
      assert.equal(r.body.error.code, 'config_not_found', path);
    }
    assert.equal((await s.call('GET', '/v1/servers')).status, 401);
  } finally {
    await s.stop();
  }
});
