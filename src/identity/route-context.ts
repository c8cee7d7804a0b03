import type { PageRead } from '../store/page.js';
import { HttpError } from '../http/errors.js';
import type { HttpServer } from '../http/server.js';
import { idParam } from '../http/validate.js';
import type { Authenticator } from './auth.js';
import { HashGate } from './hash-gate.js';
import type { IdentityStore } from './store.js';
import { planAtLeast, type Plan, type TenantId, type TenantRecord } from './types.js';

/**
 * What other services know about a tenant (servers, spend): the control plane provides it
 * when it is wired in; without it a tenant has no servers.
 */
export interface TenantInsights {
  stats(tenantId: TenantId): Promise<{ serverCount: number; monthlySpendUsd: number }>;
  /** One page of the tenant's servers (by id, past `page.from`) and the position of its last when more follow. */
  servers(tenantId: TenantId, page: PageRead): Promise<{ data: unknown[]; nextCursor: number | null }>;
}

const NO_INSIGHTS: TenantInsights = {
  stats: async () => ({ serverCount: 0, monthlySpendUsd: 0 }),
  servers: async () => ({ data: [], nextCursor: null }),
};

export interface IdentityRoutesOptions {
  store: IdentityStore;
  auth: Authenticator;
  insights?: TenantInsights;
  /** Told after a tenant's status or plan changes, so other services drop what they cached of it. */
  onTenantChange?: (id: TenantId) => void | Promise<void>;
  now?: () => number;
}

/** What the identity routes of every resource share: one password-hash gate for logins and new users alike. */
export interface IdentityRouteContext {
  server: HttpServer;
  options: IdentityRoutesOptions;
  store: IdentityStore;
  auth: Authenticator;
  now: () => number;
  hashes: HashGate;
  insights(): TenantInsights;
  tenantView(t: TenantRecord): Promise<TenantView>;
}

export interface TenantView {
  id: TenantId;
  name: string;
  plan: Plan;
  serverCount: number;
  monthlySpendUsd: number;
  status: TenantRecord['status'];
  createdAt: TenantRecord['createdAt'];
}

export function identityRouteContext(server: HttpServer, options: IdentityRoutesOptions): IdentityRouteContext {
  const { store, auth } = options;
  const insights = (): TenantInsights => options.insights ?? NO_INSIGHTS;
  const { limits } = auth;
  return {
    server,
    options,
    store,
    auth,
    now: options.now ?? Date.now,
    hashes: new HashGate(limits.passwordHashConcurrency, limits.passwordHashQueue),
    insights,
    tenantView: async (t) => {
      const stats = await insights().stats(t.id);
      return {
        id: t.id,
        name: t.name,
        plan: t.plan,
        serverCount: stats.serverCount,
        monthlySpendUsd: stats.monthlySpendUsd,
        status: t.status,
        createdAt: t.createdAt,
      };
    },
  };
}

export async function tenantOr404(store: IdentityStore, id: string | undefined): Promise<TenantRecord> {
  const tenant = await store.getTenant(idParam(id, 'tenant') as TenantId);
  if (!tenant) throw new HttpError('not_found', `No tenant with id ${id}.`);
  return tenant;
}

export function requirePlan(plan: Plan, needed: Plan): void {
  if (!planAtLeast(plan, needed)) throw new HttpError('plan_required', `This needs the ${needed} plan or higher; the tenant is on ${plan}.`);
}
