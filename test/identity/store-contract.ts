import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openIdentityStore } from '../../src/identity/open-store.js';
import type { IdentityStore } from '../../src/identity/store.js';
import type { TenantId, UserId } from '../../src/identity/types.js';
import type { TestDatabase } from '../helpers/databases.js';

/**
 * The behaviour every IdentityStore must have, run on each backend (see
 * test/helpers/databases.ts). The clock is the suite's.
 */
export function identityStoreContract(name: string, open: () => Promise<TestDatabase>): void {
  const T0 = Date.parse('2026-03-01T12:00:00Z');
  const withStore = async (fn: (store: IdentityStore, t: TestDatabase, clock: { now: number }) => Promise<void>): Promise<void> => {
    const t = await open();
    const clock = { now: T0 };
    try {
      await fn(await openIdentityStore(t.database, () => clock.now), t, clock);
    } finally {
      await t.dispose();
    }
  };

  test(`${name}: tenants are created, listed in id order, suspended and re-planned; unknown ids are null`, () =>
    withStore(async (store) => {
      const a = await store.createTenant('A', 'trial');
      const b = await store.createTenant('B', 'pro');
      assert.deepEqual(a, { id: a.id, name: 'A', plan: 'trial', status: 'active', createdAt: '2026-03-01T12:00:00.000Z' });
      assert.equal(typeof a.id, 'number');
      assert.deepEqual(
        (await store.listTenants(10, null)).data.map((t) => t.name),
        ['A', 'B'],
      );
      const c = await store.createTenant('C', 'pro');
      const first = await store.listTenants(2, null);
      assert.deepEqual(
        first.data.map((t) => t.name),
        ['A', 'B'],
      );
      assert.equal(first.nextCursor, b.id);
      assert.deepEqual(await store.listTenants(2, first.nextCursor), { data: [c], nextCursor: null });
      assert.deepEqual(await store.listTenants(3, null).then((p) => p.nextCursor), null, 'a full last page names no next one');
      assert.equal((await store.setTenantStatus(b.id, 'suspended'))!.status, 'suspended');
      assert.equal((await store.setTenantPlan(b.id, 'agency'))!.plan, 'agency');
      assert.deepEqual(await store.getTenant(b.id), { ...b, plan: 'agency', status: 'suspended' });
      assert.equal(await store.getTenant(999 as TenantId), null);
      assert.equal(await store.setTenantStatus(999 as TenantId, 'active'), null);
    }));

  test(`${name}: an e-mail is taken whatever its case; users are found by e-mail in any case`, () =>
    withStore(async (store) => {
      const t = await store.createTenant('A', 'pro');
      const u = await store.createUser(t.id, 'Ann@Example.com', 'hash');
      assert.ok(u !== 'email_taken');
      assert.equal(await store.createUser(t.id, 'ann@example.COM', 'other'), 'email_taken');
      assert.deepEqual(await store.findUserByEmail('ANN@example.com'), { ...u, passwordHash: 'hash' });
      assert.deepEqual(await store.getUser(u.id), u);
      assert.equal(await store.getUser(999 as UserId), null);
      assert.equal(await store.findUserByEmail('nobody@example.com'), null);
    }));

  test(`${name}: a session lives until its expiry or its deletion, and is seen from every handle`, () =>
    withStore(async (store, t, clock) => {
      const tenant = await store.createTenant('A', 'pro');
      const u = (await store.createUser(tenant.id, 'a@example.com', 'h')) as { id: UserId };
      await store.createSession('s1', u.id, tenant.id, T0 + 1000);
      const other = await openIdentityStore(t.second(), () => clock.now);
      assert.deepEqual(await other.findSession('s1', T0), { userId: u.id, expiresAt: T0 + 1000, tenant });
      assert.equal(await store.findSession('s1', T0 + 1000), null);
      await store.createSession('s2', u.id, tenant.id, T0 + 5000);
      await other.deleteSession('s2');
      assert.equal(await store.findSession('s2', T0), null);
      // Expired sessions are purged when a new one is made; a live one stays.
      await store.createSession('s3', u.id, tenant.id, T0 + 5000);
      clock.now = T0 + 2000;
      await store.createSession('s4', u.id, tenant.id, T0 + 9000);
      assert.ok(await store.findSession('s3', T0 + 2000));
    }));

  test(`${name}: API keys: created under a live-key cap, listed, found until revoked; revoking twice is false`, () =>
    withStore(async (store) => {
      const t = await store.createTenant('A', 'agency');
      const k1 = await store.createApiKey(t.id, 'one', 'h1', 'bpk_1234', 2);
      assert.ok(k1 !== 'limit');
      assert.ok((await store.createApiKey(t.id, 'two', 'h2', 'bpk_5678', 2)) !== 'limit');
      assert.equal(await store.createApiKey(t.id, 'three', 'h3', 'bpk_9', 2), 'limit');
      assert.deepEqual(await store.findApiKey('h1'), { keyId: k1.id, tenant: t });
      assert.equal(await store.revokeApiKey(t.id, k1.id), true);
      assert.equal(await store.revokeApiKey(t.id, k1.id), false);
      assert.equal(await store.findApiKey('h1'), null);
      assert.ok((await store.createApiKey(t.id, 'three', 'h3', 'bpk_9', 2)) !== 'limit');
      assert.deepEqual(
        (await store.listApiKeys(t.id)).map((k) => [k.name, k.revokedAt !== null]),
        [
          ['one', true],
          ['two', false],
          ['three', false],
        ],
      );
      // Without a cap there is none (the operator's own tool).
      assert.ok((await store.createApiKey(t.id, 'four', 'h4', 'bpk_4')) !== null);
    }));

  test(`${name}: two handles creating keys at once never pass the cap together`, () =>
    withStore(async (store, t, clock) => {
      const tenant = await store.createTenant('A', 'agency');
      const other = await openIdentityStore(t.second(), () => clock.now);
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store).createApiKey(tenant.id, `k${i}`, `h${i}`, 'bpk_x', 3)));
      assert.equal(results.filter((r) => r !== 'limit').length, 3);
    }));

  test(`${name}: personal tokens: live until revoked or expired; last use written at most once a minute`, () =>
    withStore(async (store) => {
      const t = await store.createTenant('A', 'pro');
      const u = (await store.createUser(t.id, 'a@example.com', 'h')) as { id: UserId };
      const forever = await store.createPersonalToken({
        userId: u.id,
        tenantId: t.id,
        name: 'ci',
        scopes: ['config:read'],
        tokenHash: 'p1',
        preview: 'bsu_1',
        expiresAt: null,
      });
      const brief = await store.createPersonalToken({
        userId: u.id,
        tenantId: t.id,
        name: 'tmp',
        scopes: ['full'],
        tokenHash: 'p2',
        preview: 'bsu_2',
        expiresAt: T0 + 1000,
      });
      assert.deepEqual(forever.scopes, ['config:read']);
      assert.equal(brief.expiresAt, '2026-03-01T12:00:01.000Z');
      const used = await store.usePersonalToken('p1', T0 + 10);
      assert.equal(used!.token.lastUsedAt, new Date(T0 + 10).toISOString());
      assert.deepEqual(used!.tenant, t);
      await store.usePersonalToken('p1', T0 + 30_000);
      assert.equal((await store.listPersonalTokens(u.id)).find((p) => p.id === forever.id)!.lastUsedAt, new Date(T0 + 10).toISOString());
      await store.usePersonalToken('p1', T0 + 70_011);
      assert.equal((await store.listPersonalTokens(u.id)).find((p) => p.id === forever.id)!.lastUsedAt, new Date(T0 + 70_011).toISOString());
      assert.equal(await store.usePersonalToken('p2', T0 + 1000), null);
      assert.deepEqual(
        (await store.listPersonalTokens(u.id)).map((p) => p.name),
        ['tmp', 'ci'],
      );
      assert.equal(await store.revokePersonalToken(999 as UserId, forever.id), false);
      assert.equal(await store.revokePersonalToken(u.id, forever.id), true);
      assert.equal(await store.revokePersonalToken(u.id, forever.id), false);
      assert.equal(await store.usePersonalToken('p1', T0), null);
    }));
}
