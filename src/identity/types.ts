import type { RateDecision } from '../http/ratelimit.js';

declare const brand: unique symbol;
export type TenantId = number & { readonly [brand]: 'TenantId' };
export type UserId = number & { readonly [brand]: 'UserId' };

/** Plans in ascending order: a route that needs a plan admits it and every plan after it. */
export const PLANS = ['trial', 'starter', 'pro', 'agency', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export function planAtLeast(plan: Plan, needed: Plan): boolean {
  return PLANS.indexOf(plan) >= PLANS.indexOf(needed);
}

export type TenantStatus = 'active' | 'suspended';

export interface TenantRecord {
  id: TenantId;
  name: string;
  plan: Plan;
  status: TenantStatus;
  createdAt: string;
}

export interface UserRecord {
  id: UserId;
  tenantId: TenantId;
  email: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: number;
  tenantId: TenantId;
  name: string;
  /** The first characters of the key, so an operator can tell keys apart; never the key. */
  preview: string;
  createdAt: string;
  revokedAt: string | null;
}

/**
 * Who is calling, resolved from the bearer token. `rate` is the verdict of the rate limit
 * the request was counted against (per session; per API key), for routes that report it on
 * every answer.
 */
export type Principal =
  | { kind: 'admin' }
  | { kind: 'session'; tenant: TenantRecord; userId: UserId; tokenHash: string; rate: RateDecision }
  | { kind: 'apiKey'; tenant: TenantRecord; keyId: number; rate: RateDecision };
