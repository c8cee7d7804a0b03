import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { MAX_TOKEN_DAYS } from '../../src/identity/routes.js';

test('a personal access token is shown once, listed by preview, and speaks for its user within its scopes', async () => {
  const s = await startTestServer();
  try {
    const { token: session } = await tenantSession(s, 'pro');
    const server = await s.call('POST', '/v1/servers', { token: session, body: { name: 'eu-1' } });
    assert.equal(server.status, 201);
    const id = server.body.id;

    const created = await s.call('POST', '/v1/tokens', { token: session, body: { name: 'ci', scopes: ['config:write'] } });
    assert.equal(created.status, 201);
    assert.match(created.body.token, /^bsu_/);
    assert.deepEqual(created.body.scopes, ['config:write']);
    assert.equal(created.body.expiresAt, null);
    const pat = created.body.token as string;

    const list = await s.call('GET', '/v1/tokens', { token: session });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
    assert.equal(list.body[0].token, undefined, 'the token itself is never listed');
    assert.equal(list.body[0].preview, pat.slice(0, 8));

    const head = await s.call('GET', `/v1/servers/${id}/config`, { token: pat });
    assert.equal(head.status, 200);
    const put = await s.call('PUT', `/v1/servers/${id}/config`, { token: pat, body: { ...head.body, policy: { ...head.body.policy, emotes: false } } });
    assert.equal(put.status, 200);
    assert.equal(put.body.version, 2);

    // Outside its scope: 403 with the scope named; never token management.
    const keys = await s.call('POST', `/v1/servers/${id}/keys`, { token: pat });
    assert.equal(keys.status, 403);
    assert.equal(keys.body.error.code, 'forbidden');
    assert.match(keys.body.error.message, /config:write/);
    const mint = await s.call('POST', '/v1/tokens', { token: pat, body: { name: 'more', scopes: ['full'] } });
    assert.equal(mint.status, 403);

    const used = await s.call('GET', '/v1/tokens', { token: session });
    assert.notEqual(used.body[0].lastUsedAt, null);

    assert.equal((await s.call('DELETE', `/v1/tokens/${created.body.id}`, { token: session })).status, 204);
    assert.equal((await s.call('GET', `/v1/servers/${id}/config`, { token: pat })).status, 401);
    assert.equal((await s.call('DELETE', `/v1/tokens/${created.body.id}`, { token: session })).status, 404);
  } finally {
    await s.stop();
  }
});

test('config:read admits reads only; full admits what a session may; another user cannot revoke a token', async () => {
  const s = await startTestServer();
  try {
    const a = await tenantSession(s, 'pro');
    const b = await tenantSession(s, 'pro');
    const id = (await s.call('POST', '/v1/servers', { token: a.token, body: { name: 'eu-1' } })).body.id;
    const read = (await s.call('POST', '/v1/tokens', { token: a.token, body: { name: 'r', scopes: ['config:read'] } })).body;
    const full = (await s.call('POST', '/v1/tokens', { token: a.token, body: { name: 'f', scopes: ['full'], expires_in_days: 30 } })).body;
    assert.match(full.expiresAt, /Z$/);

    assert.equal((await s.call('GET', `/v1/servers/${id}/config/versions`, { token: read.token })).status, 200);
    assert.equal((await s.call('GET', '/v1/servers', { token: read.token })).status, 200);
    const head = (await s.call('GET', `/v1/servers/${id}/config`, { token: read.token })).body;
    assert.equal((await s.call('PUT', `/v1/servers/${id}/config`, { token: read.token, body: head })).status, 403);
    assert.equal((await s.call('POST', `/v1/servers/${id}/keys`, { token: full.token })).status, 201);
    assert.equal((await s.call('POST', '/v1/auth/logout', { token: full.token })).status, 403);

    assert.equal((await s.call('DELETE', `/v1/tokens/${read.id}`, { token: b.token })).status, 404);
    assert.equal((await s.call('GET', `/v1/servers/${id}/config`, { token: read.token })).status, 200);
  } finally {
    await s.stop();
  }
});

test('token creation validates name, scopes and lifetime in one 422', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'pro');
    const bad = await s.call('POST', '/v1/tokens', { token, body: { scopes: ['admin'], expires_in_days: 0 } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), ['expires_in_days', 'name', 'scopes']);
    const none = await s.call('POST', '/v1/tokens', { token, body: { name: 'x', scopes: [] } });
    assert.equal(none.status, 422);
    // A misspelt lifetime is refused, not dropped: the token would never expire while its maker thought it would.
    for (const typo of [{ expires_at: '2027-01-01T00:00:00Z' }, { expiresInDays: 1 }, { scope: 'full' }]) {
      const r = await s.call('POST', '/v1/tokens', { token, body: { name: 'x', scopes: ['full'], ...typo } });
      assert.equal(r.status, 422, JSON.stringify(typo));
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        Object.keys(typo),
      );
    }
    const tooLong = await s.call('POST', '/v1/tokens', { token, body: { name: 'x', scopes: ['full'], expires_in_days: MAX_TOKEN_DAYS + 1 } });
    assert.deepEqual([tooLong.status, tooLong.body.error.details[0].path], [422, 'expires_in_days']);
    const agency = await tenantSession(s, 'agency');
    const key = await s.call('POST', '/v1/api-keys', { token: agency.token, body: { name: 'k', expires_in_days: 1 } });
    assert.deepEqual([key.status, key.body.error.details[0].path], [422, 'expires_in_days']);
    assert.equal((await s.call('GET', '/v1/tokens', { token })).body.length, 0);
    const longest = await s.call('POST', '/v1/tokens', { token, body: { name: 'x', scopes: ['full'], expires_in_days: MAX_TOKEN_DAYS } });
    assert.equal(longest.status, 201, JSON.stringify(longest.body));
  } finally {
    await s.stop();
  }
});

test('a user holds at most 20 live personal access tokens (403 plan_limit); a revoked one frees its place', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'pro');
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await s.call('POST', '/v1/tokens', { token, body: { name: `t${i}`, scopes: ['config:read'] } })).body.id);
    const over = await s.call('POST', '/v1/tokens', { token, body: { name: 'over', scopes: ['config:read'] } });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /20/);
    await s.call('DELETE', `/v1/tokens/${ids[0]}`, { token });
    assert.equal((await s.call('POST', '/v1/tokens', { token, body: { name: 'again', scopes: ['config:read'] } })).status, 201);
  } finally {
    await s.stop();
  }
});

test('an expired personal access token is a 401 (injected clock)', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s, 'pro');
    const pat = (await s.call('POST', '/v1/tokens', { token, body: { name: 'short', scopes: ['full'], expires_in_days: 1 } })).body.token;
    assert.equal((await s.call('GET', '/v1/servers', { token: pat })).status, 200);
    now += 86_400_000 + 1;
    assert.equal((await s.call('GET', '/v1/servers', { token: pat })).status, 401);
  } finally {
    await s.stop();
  }
});
