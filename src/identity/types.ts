import type { TokenScope } from '../http/scope.js';
import type { RateDecision } from '../ratelimit/limiter.js';

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

export interface PersonalTokenRecord {
  id: number;
  userId: UserId;
  name: string;
  scopes: readonly TokenScope[];
  /** The first characters of the token, so a user can tell tokens apart; never the token. */
  preview: string;
  createdAt: string;
  /** ISO time after which the token stops working; null when it never expires. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/**
 * Who is calling, resolved from the bearer token. A personal access token speaks for its user
 * like a session, within its scopes (`scopes` is null for a login session, which may do anything
 * its user may). `rate` is the verdict of the rate limit the request was counted against (per
 * session or personal token; per API key), for routes that report it on every answer.
 */
export type Principal =
  | { kind: 'admin' }
  | { kind: 'session'; tenant: TenantRecord; userId: UserId; tokenHash: string; scopes: readonly TokenScope[] | null; rate: RateDecision }
  | { kind: 'apiKey'; tenant: TenantRecord; keyId: number; rate: RateDecision };
