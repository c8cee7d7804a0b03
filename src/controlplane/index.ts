import type { HttpServer } from '../http/server.js';
import type { Authenticator } from '../identity/auth.js';
import type { TenantInsights } from '../identity/routes.js';
import type { TenantId, UserId, UserRecord } from '../identity/types.js';
import { loadPlans, type PlanCatalogue } from './billing/plans.js';
import { OfflineProvider, type PaymentProvider } from './billing/provider.js';
import { mountBillingRoutes } from './billing/routes.js';
import type { ControlPlaneContext } from './context.js';
import { HeadCache } from './heads.js';
import { monthOf } from './read-models.js';
import { mountConfigRoutes } from './routes-config.js';
import { mountReadRoutes } from './routes-reads.js';
import { mountServerRoutes } from './routes-servers.js';
import { mountSidecarRoutes } from './routes-sidecar.js';
import { ServerKeyAuth, type TenantLookup } from './server-key-auth.js';
import type { ControlPlaneStore } from './store.js';
import { serverSummary } from './summary.js';

export interface ControlPlaneOptions {
  store: ControlPlaneStore;
  auth: Authenticator;
  /** Tenants and users (the identity store satisfies both). */
  identity: TenantLookup & { getUser(id: UserId): Promise<UserRecord | null> };
  now?: () => number;
  plans?: PlanCatalogue;
  payments?: PaymentProvider;
  publicUrl?: string | undefined;
  tls?: boolean;
  /** Signatures remembered for replay detection (default 1,000,000). */
  replayEntries?: number;
}

export interface ControlPlane {
  /** For mountIdentityRoutes: server counts, spend and servers per tenant. */
  insights: TenantInsights;
  /** Call when a tenant's status changes (suspend, resume), so cached key checks see it at once. */
  tenantChanged(id: TenantId): void;
}

/** Mounts every control-plane route (spec 001 §4.2–§4.3) on `server`. */
export function mountControlPlane(server: HttpServer, options: ControlPlaneOptions): ControlPlane {
  const now = options.now ?? Date.now;
  const { store, auth } = options;
  const keyAuth = new ServerKeyAuth(store, options.identity, auth, { now, limiter: auth.limiter, rate: auth.limits.serverKey, ...(options.replayEntries ? { replayEntries: options.replayEntries } : {}) });
  auth.addProbe(keyAuth.probe);
  const ctx: ControlPlaneContext = { store, auth, keyAuth, heads: new HeadCache(store), users: options.identity, now };

  mountSidecarRoutes(server, ctx);
  mountServerRoutes(server, ctx);
  mountConfigRoutes(server, ctx);
  mountReadRoutes(server, ctx);
  mountBillingRoutes(server, {
    store,
    auth,
    plans: options.plans ?? loadPlans(),
    provider: options.payments ?? new OfflineProvider(),
    publicUrl: options.publicUrl,
    scheme: options.tls ? 'https' : 'http',
  });

  const insights: TenantInsights = {
    async stats(tenantId) {
      const m = monthOf(now());
      const [servers, usage] = await Promise.all([store.listServers(tenantId), store.tenantUsage(tenantId, m.firstDay, m.lastDay)]);
      return { serverCount: servers.length, monthlySpendUsd: Math.round(usage.spendUsd * 1e6) / 1e6 };
    },
    async servers(tenantId) {
      return Promise.all((await store.listServers(tenantId)).map((s) => serverSummary(ctx, s)));
    },
  };
  return { insights, tenantChanged: (id) => keyAuth.tenantChanged(id) };
}

export { SqliteControlPlaneStore } from './sqlite-store.js';
export type { ControlPlaneStore } from './store.js';
