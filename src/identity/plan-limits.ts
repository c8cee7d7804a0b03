import { HttpError } from '../http/errors.js';
import type { Plan, TenantRecord } from './types.js';

/** What a plan allows; null is unlimited. Every limit here is enforced (see requireRoom and the line quota). */
export interface PlanLimits {
  /** Game servers on the control plane. */
  servers: number | null;
  /** Chat widgets. */
  widgets: number | null;
  /** Dialogue lines spoken per calendar month (UTC), summed over the tenant's servers. */
  linesPerMonth: number | null;
}

export const LIMIT_NAMES = ['servers', 'widgets', 'linesPerMonth'] as const satisfies readonly (keyof PlanLimits)[];

/**
 * The plan rules every service applies to a tenant, built from the billing catalogue (so the
 * services need not know prices) and handed to each service where they are wired together.
 */
export interface TenantPlans {
  limits(plan: Plan): PlanLimits;
  /** When the tenant's trial ends (ms), or null when it is not on a plan that expires. */
  trialEndsAt(tenant: TenantRecord): number | null;
}

/** 403 plan_expired once a trial is over: publishes and new credentials need a bought plan. */
export function requireCurrentPlan(plans: TenantPlans, tenant: TenantRecord, now: number, action: string): void {
  const ends = plans.trialEndsAt(tenant);
  if (ends !== null && now >= ends) {
    throw new HttpError(
      'plan_expired',
      `The ${tenant.plan} plan ended on ${new Date(ends).toISOString()}; ${action} needs a plan (POST /v1/billing/checkout).`,
    );
  }
}

/** 403 plan_limit when the tenant already has as many of `what` as its plan allows. */
export function requireRoom(plans: TenantPlans, tenant: TenantRecord, what: 'servers' | 'widgets', count: number): void {
  const limit = plans.limits(tenant.plan)[what];
  if (limit !== null && count >= limit) throw noRoom(tenant, what, limit, count);
}

/**
 * The 403 plan_limit of a tenant with `count` of `what` against a `limit` of its plan: thrown
 * by requireRoom, and when the store, counting again as it inserts, finds the last place taken.
 */
export function noRoom(tenant: TenantRecord, what: 'servers' | 'widgets', limit: number, count = limit): HttpError {
  return new HttpError('plan_limit', `The ${tenant.plan} plan allows at most ${limit} ${limit === 1 ? what.slice(0, -1) : what}; the tenant has ${count}.`);
}
