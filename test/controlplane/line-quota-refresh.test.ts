import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { ControlPlaneSync } from '../../src/controlplane/cluster.js';
import { HeadCache } from '../../src/controlplane/heads.js';
import { LineQuota } from '../../src/controlplane/line-quota.js';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import type { ControlPlaneStore } from '../../src/controlplane/store.js';
import type { TenantPlans } from '../../src/identity/plan-limits.js';
import { silentLogger } from '../../src/log.js';
import { sqliteTestDatabase } from '../helpers/databases.js';

test('with replicas, the month total is read once per refresh however many reports arrive during the read', async () => {
  const t = await sqliteTestDatabase();
  try {
    let now = Date.parse('2026-05-02T10:00:00Z');
    const identity = await openIdentityStore(t.database, () => now);
    const tenant = await identity.createTenant('t', 'pro');
    const real = await openControlPlaneStore(t.database, () => now);
    const server = await real.createServer(tenant.id, 's', DEFAULT_BUNDLE, 'system');
    let reads = 0;
    // The real store, counting its month-total reads.
    const store = new Proxy(real, {
      get(target, key) {
        const v = Reflect.get(target, key) as unknown;
        if (key === 'tenantUsage') reads++;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as ControlPlaneStore;
    const heads = new HeadCache(store);
    const plans: TenantPlans = { limits: () => ({ linesPerMonth: 1_000_000 }) as never, trialEndsAt: () => null };
    const refreshMs = 1000;
    const quota = new LineQuota({ store, heads, now: () => now, sync: new ControlPlaneSync(null, silentLogger) }, plans, identity, refreshMs);
    await quota.afterIngest(tenant.id, server.id, 1);
    assert.equal(reads, 1);
    // Counted in memory until the refresh is due; then 50 reports at once share one read.
    for (let i = 0; i < 10; i++) assert.equal(quota.afterIngest(tenant.id, server.id, 1), undefined);
    now += refreshMs;
    await Promise.all(Array.from({ length: 50 }, () => Promise.resolve(quota.afterIngest(tenant.id, server.id, 1))));
    assert.equal(reads, 2);
  } finally {
    await t.dispose();
  }
});
