import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';

test('admin creates a tenant and a user; the user logs in and out', async () => {
  const s = await startTestServer();
  try {
    const t = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: { name: 'Acme', plan: 'pro' } });
    assert.equal(t.status, 201);
    assert.deepEqual(Object.keys(t.body).sort(), ['createdAt', 'id', 'monthlySpendUsd', 'name', 'plan', 'serverCount', 'status']);
    assert.equal(t.body.status, 'active');
    const u = await s.call('POST', `/v1/admin/tenants/${t.body.id}/users`, { token: ADMIN_TOKEN, body: { email: 'a@acme.test', password: 'longenough' } });
    assert.equal(u.status, 201);
    assert.equal(JSON.stringify(u.body).includes('longenough'), false);
    const bad = await s.call('POST', '/v1/auth/login', { body: { email: 'a@acme.test', password: 'wrongwrong' } });
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error.code, 'unauthorized');
    const login = await s.call('POST', '/v1/auth/login', { body: { email: 'a@acme.test', password: 'longenough' } });
    assert.equal(login.status, 200);
    assert.match(login.body.token, /^bss_/);
    assert.ok(Date.parse(login.body.expiresAt) > Date.now() + 11 * 3600_000);
    const me = await s.call('GET', '/v1/auth/me', { token: login.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.tenant.name, 'Acme');
    assert.equal((await s.call('POST', '/v1/auth/logout', { token: login.body.token })).status, 204);
    assert.equal((await s.call('GET', '/v1/auth/me', { token: login.body.token })).status, 401);
  } finally {
    await s.stop();
  }
});

test('sessions expire after 12 hours (injected clock)', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s);
    now += 12 * 3600_000 - 1000;
    assert.equal((await s.call('GET', '/v1/auth/me', { token })).status, 200);
    now += 2000;
    assert.equal((await s.call('GET', '/v1/auth/me', { token })).status, 401);
  } finally {
    await s.stop();
  }
});

test('admin routes need the admin token; a session there is 403', async () => {
  const s = await startTestServer();
  try {
    assert.equal((await s.call('GET', '/v1/admin/tenants')).status, 401);
    assert.equal((await s.call('GET', '/v1/admin/tenants', { token: 'bsa_wrong' })).status, 401);
    const { token } = await tenantSession(s);
    const r = await s.call('GET', '/v1/admin/tenants', { token });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
    const list = await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
  } finally {
    await s.stop();
  }
});

test('validation: bad tenant and user bodies are 422 with details; duplicate e-mail 409', async () => {
  const s = await startTestServer();
  try {
    const r = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: { name: '', plan: 'gold' } });
    assert.equal(r.status, 422);
    assert.equal(r.body.error.code, 'validation_failed');
    assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(), ['name', 'plan']);
    const { tenantId, email } = await tenantSession(s);
    const dup = await s.call('POST', `/v1/admin/tenants/${tenantId}/users`, { token: ADMIN_TOKEN, body: { email, password: 'whatever123' } });
    assert.equal(dup.status, 409);
    const nf = await s.call('POST', '/v1/admin/tenants/999/users', { token: ADMIN_TOKEN, body: { email: 'x@y.zz', password: 'whatever123' } });
    assert.equal(nf.status, 404);
    const notJson = await s.call('POST', '/v1/admin/tenants', {
      token: ADMIN_TOKEN,
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(notJson.status, 415);
  } finally {
    await s.stop();
  }
});

test('API keys need the agency plan; suspension makes every credential 403 tenant_suspended', async () => {
  const s = await startTestServer();
  try {
    const low = await tenantSession(s, 'pro');
    const denied = await s.call('POST', '/v1/api-keys', { token: low.token, body: { name: 'k' } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'plan_required');

    const high = await tenantSession(s, 'agency');
    const key = await s.call('POST', '/v1/api-keys', { token: high.token, body: { name: 'k' } });
    assert.equal(key.status, 201);
    assert.match(key.body.key, /^bpk_/);
    const listed = await s.call('GET', '/v1/api-keys', { token: high.token });
    assert.equal(listed.body.length, 1);
    assert.equal(JSON.stringify(listed.body).includes(key.body.key), false);

    const suspended = await s.call('POST', `/v1/admin/tenants/${high.tenantId}/suspend`, { token: ADMIN_TOKEN });
    assert.equal(suspended.status, 200);
    assert.equal(suspended.body.ok, true);
    for (const token of [high.token]) {
      const r = await s.call('GET', '/v1/auth/me', { token });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'tenant_suspended');
    }
    const relogin = await s.call('POST', '/v1/auth/login', { body: { email: high.email, password: 'correct horse battery' } });
    assert.equal(relogin.body.error.code, 'tenant_suspended');
    await s.call('POST', `/v1/admin/tenants/${high.tenantId}/resume`, { token: ADMIN_TOKEN });
    assert.equal((await s.call('GET', '/v1/auth/me', { token: high.token })).status, 200);
  } finally {
    await s.stop();
  }
});

// The issue: PATCH /v1/admin/tenants/{id} {"name": "Acme"} answered 200 with the tenant unchanged,
// as if the rename had been applied; only the plan can be changed there.
test('PATCH /v1/admin/tenants/{id}: a field other than plan, or a null plan, is 422 naming it, and nothing changes', async () => {
  const s = await startTestServer();
  try {
    const t = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: { name: 'Acme', plan: 'starter' } });
    for (const body of [{ name: 'Renamed' }, { plan: 'agency', status: 'suspended' }, { plan: 'pro', plna: 'agency' }, { plan: null }]) {
      const r = await s.call('PATCH', `/v1/admin/tenants/${t.body.id}`, { token: ADMIN_TOKEN, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal(r.body.error.code, 'validation_failed');
      assert.match(r.body.error.details[0].message, /is not a known field \(known: plan\)|got null/);
    }
    const after = await s.call('GET', `/v1/admin/tenants/${t.body.id}`, { token: ADMIN_TOKEN });
    assert.deepEqual([after.body.name, after.body.plan, after.body.status], ['Acme', 'starter', 'active']);
    const ok = await s.call('PATCH', `/v1/admin/tenants/${t.body.id}`, { token: ADMIN_TOKEN, body: { plan: 'agency' } });
    assert.deepEqual([ok.status, ok.body.plan], [200, 'agency']);
  } finally {
    await s.stop();
  }
});
