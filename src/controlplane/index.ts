import type { HttpServer } from '../http/server.js';
import type { Authenticator } from '../identity/auth.js';
import type { TenantInsights } from '../identity/routes.js';
import type { TenantPlans } from '../identity/plan-limits.js';
import type { Plan, TenantId, TenantRecord, UserId, UserRecord } from '../identity/types.js';
import { loadPlans, tenantPlans, type PlanCatalogue } from './billing/plans.js';
import { OfflineProvider, type PaymentProvider } from './billing/provider.js';
import { mountBillingRoutes } from './billing/routes.js';
import type { ControlPlaneContext } from './context.js';
import { ControlPlaneSync } from './cluster.js';
import { HeadCache } from './heads.js';
import { BundleSigner } from './bundle-signer.js';
import { ConfigStreams, mountConfigStream, type ConfigStreamLimits } from './config-stream.js';
import { mountBundleKeyRoutes } from './bundle-key-routes.js';
import type { ReplayLedger } from './replay.js';
import type { Broadcast } from '../store/broadcast.js';
import { silentLogger, type Logger } from '../log.js';
import { SidecarPulls } from './connections.js';
import { LineQuota } from './line-quota.js';
import { monthOf } from './read-models.js';
import { mountConfigRoutes } from './config-routes.js';
import { mountReadRoutes } from './read-routes.js';
import { mountServerRoutes } from './server-routes.js';
import { mountSidecarRoutes } from './sidecar-routes.js';
import { ServerKeyAuth, type TenantLookup } from './server-key-auth.js';
import type { ControlPlaneStore } from './store.js';
import { serverSummary } from './summary.js';
import { pageOf } from '../store/page.js';

export interface ControlPlaneOptions {
  store: ControlPlaneStore;
  auth: Authenticator;
  /** Tenants and users (the identity store satisfies both). */
  identity: TenantLookup & { getUser(id: UserId): Promise<UserRecord | null>; setTenantPlan(id: TenantId, plan: Plan): Promise<TenantRecord | null> };
  now?: () => number;
  plans?: PlanCatalogue;
  /** Default the offline provider; null for none (checkouts answer 409 billing_not_configured). */
  payments?: PaymentProvider | null;
  publicUrl?: string | undefined;
  /** Verifies Stripe's webhook events (STRIPE_WEBHOOK_SECRET). */
  stripeWebhookSecret?: string | undefined;
  /** Widgets of a tenant (the webhooks service counts them), for the billing account's usage. */
  countWidgets?: (tenantId: TenantId) => Promise<number>;
  tls?: boolean;
  /** Signatures remembered for replay detection (default 1,000,000). */
  replayEntries?: number;
  /** Limits of the config push streams (defaults CONFIG_STREAM_LIMITS); tests lower them. */
  streamLimits?: Partial<ConfigStreamLimits>;
  /** Several replicas on one database: how they tell each other of changes, and the replay record they share. Absent for a single process. */
  cluster?: { broadcast: Broadcast; replay: ReplayLedger };
  logger?: Logger;
}

/** With replicas, how old (ms) a tenant's line count may get before it is read again from the store (each replica counts only its own reports). */
export const LINE_QUOTA_REFRESH_MS = 1000;

export interface ControlPlane {
  /** For mountIdentityRoutes: server counts, spend and servers per tenant. */
  insights: TenantInsights;
  /** Call when a tenant's status or plan changes, so cached key checks and the line quota see it at once. */
  tenantChanged(id: TenantId): Promise<void>;
  /** The plan rules (limits, trial end) from the billing catalogue, for the other services. */
  plans: TenantPlans;
  /** The open config push streams (counts for status and the benchmark). */
  streams: ConfigStreams;
  /** Reads the bundle-signing keys again now (after `brainstem keys rotate` on this SQLite file; else within BUNDLE_KEY_REFRESH_MS). */
  refreshKeys(): Promise<void>;
  /** Ends every config stream and stops the key refresh (the server is closing). */
  close(): void;
}

/** The shared state of the control plane's routes: key checks, signed heads, streams, quota and the sync between replicas. */
function controlPlaneContext(options: ControlPlaneOptions, rules: TenantPlans, now: () => number): ControlPlaneContext {
  const { store, auth } = options;
  const keyAuth = new ServerKeyAuth(store, options.identity, auth, {
    now,
    limiter: auth.limiter,
    rate: auth.limits.serverKey,
    ...(options.replayEntries ? { replayEntries: options.replayEntries } : {}),
    ...(options.cluster ? { ledger: options.cluster.replay } : {}),
  });
  auth.addProbe(keyAuth.probe);
  const logger = options.logger ?? silentLogger;
  const signer = new BundleSigner(store, logger);
  const heads = new HeadCache(store, signer);
  const streams = new ConfigStreams(logger, options.streamLimits);
  // A rotation re-signs every cached head with the new key (no version changes: nothing is announced).
  signer.onChange(() => heads.resignAll());
  signer.ready().then(
    () => heads.resignAll(),
    (err: unknown) => logger.error('the bundle signing key could not be loaded; pulls wait for it', { error: String(err) }),
  );
  signer.watch();
  const sync = new ControlPlaneSync(options.cluster?.broadcast ?? null, logger);
  const quota = new LineQuota({ store, heads, now, sync }, rules, options.identity, options.cluster ? LINE_QUOTA_REFRESH_MS : null);
  sync.follow({ heads, keyAuth, quota, signer, streams });
  return {
    store,
    auth,
    keyAuth,
    heads,
    users: options.identity,
    plans: rules,
    quota,
    sync,
    pulls: new SidecarPulls(),
    signer,
    streams,
    now,
  };
}

/** Mounts every control-plane route (spec 001 §4.2–§4.3) on `server`. */
export function mountControlPlane(server: HttpServer, options: ControlPlaneOptions): ControlPlane {
  const now = options.now ?? Date.now;
  const { store, auth } = options;
  const catalogue = options.plans ?? loadPlans();
  const rules = tenantPlans(catalogue);
  const ctx = controlPlaneContext(options, rules, now);
  const { keyAuth, streams, sync, quota, signer } = ctx;
  const tenantChanged = async (id: TenantId): Promise<void> => {
    keyAuth.tenantChanged(id);
    streams.closeTenant(id);
    await sync.announce({ kind: 'tenant', tenantId: id });
    await quota.reconsider(id);
  };

  mountSidecarRoutes(server, ctx);
  mountConfigStream(server, ctx, streams);
  mountBundleKeyRoutes(server, ctx);
  mountServerRoutes(server, ctx);
  mountConfigRoutes(server, ctx);
  mountReadRoutes(server, ctx);
  mountBillingRoutes(server, {
    store,
    auth,
    plans: catalogue,
    rules,
    provider: options.payments === undefined ? new OfflineProvider() : options.payments,
    async grant(tenantId, plan) {
      await options.identity.setTenantPlan(tenantId, plan);
      await tenantChanged(tenantId);
    },
    countWidgets: options.countWidgets ?? (async () => 0),
    stripeWebhookSecret: options.stripeWebhookSecret,
    publicUrl: options.publicUrl,
    scheme: options.tls ? 'https' : 'http',
    now,
  });

  return {
    insights: tenantInsights(ctx),
    tenantChanged,
    plans: rules,
    streams,
    refreshKeys: () => signer.refresh(),
    close() {
      signer.stop();
      streams.closeAll();
    },
  };
}

/** A tenant's figures for the admin pages: servers and this month's spend. */
function tenantInsights(ctx: ControlPlaneContext): TenantInsights {
  const { store, now } = ctx;
  return {
    async stats(tenantId) {
      const m = monthOf(now());
      const [serverCount, usage] = await Promise.all([store.countServers(tenantId), store.tenantUsage(tenantId, m.firstDay, m.lastDay)]);
      return { serverCount, monthlySpendUsd: Math.round(usage.spendUsd * 1e6) / 1e6 };
    },
    async servers(tenantId, { limit, from }) {
      const page = pageOf(await store.listServers(tenantId, { limit: limit + 1, from }), limit, (s) => s.id);
      return { data: await Promise.all(page.data.map((s) => serverSummary(ctx, s))), nextCursor: page.nextCursor };
    },
  };
}

export { SqliteControlPlaneStore } from './sqlite-store.js';
export type { ControlPlaneStore } from './store.js';
