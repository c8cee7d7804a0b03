import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface PlanLimits {
  servers: number | null;
  linesPerMonth: number | null;
}

export interface Tier {
  id: string;
  name: string;
  priceUsd: number;
  limits: PlanLimits;
}

export type Interval = 'none' | 'month' | 'year';

export interface BillingPlan {
  id: string;
  name: string;
  description: string;
  interval: Interval;
  /** Fixed price; absent when the plan is priced by tier. */
  priceUsd?: number;
  tiers?: Tier[];
  trialDays?: number;
  limits?: PlanLimits;
}

export interface PlanCatalogue {
  currency: string;
  plans: BillingPlan[];
}

/**
 * The repository's plans file. It is read at run time from the source tree (tsc does not copy
 * JSON it does not import into dist), so an operator can edit prices without a rebuild.
 */
export const DEFAULT_PLANS_FILE = fileURLToPath(new URL('../../../../src/controlplane/billing/plans.json', import.meta.url));

/** Loads and checks a plans file; a malformed one fails at start-up with the field to fix. */
export function loadPlans(file: string = DEFAULT_PLANS_FILE): PlanCatalogue {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the billing plans file ${file}: ${(err as Error).message}`);
  }
  const fail = (msg: string): never => {
    throw new Error(`billing plans file ${file}: ${msg}`);
  };
  const cat = raw as PlanCatalogue;
  if (typeof cat !== 'object' || cat === null || typeof cat.currency !== 'string' || !Array.isArray(cat.plans)) fail('needs {"currency": string, "plans": [...]}');
  const ids = new Set<string>();
  cat.plans.forEach((p, i) => {
    if (typeof p.id !== 'string' || !p.id) fail(`plans[${i}].id must be a non-empty string`);
    if (ids.has(p.id)) fail(`plans[${i}].id "${p.id}" is used twice`);
    ids.add(p.id);
    if (!['none', 'month', 'year'].includes(p.interval)) fail(`plans[${i}].interval must be none, month or year`);
    const priced = typeof p.priceUsd === 'number' && p.priceUsd >= 0;
    const tiered = Array.isArray(p.tiers) && p.tiers.length > 0;
    if (priced === tiered) fail(`plans[${i}] ("${p.id}") needs exactly one of priceUsd (a number >= 0) or tiers (a non-empty array)`);
    p.tiers?.forEach((t, j) => {
      if (typeof t.id !== 'string' || !t.id || typeof t.priceUsd !== 'number' || t.priceUsd <= 0) fail(`plans[${i}].tiers[${j}] needs an id and a priceUsd > 0`);
    });
  });
  return cat;
}

export type PriceChoice = { ok: true; plan: BillingPlan; tier: Tier | null; amountUsd: number } | { ok: false; path: string; message: string };

/** Resolves {plan, tier?} of a checkout request to a price. */
export function choosePrice(cat: PlanCatalogue, planId: string, tierId: string | undefined): PriceChoice {
  const plan = cat.plans.find((p) => p.id === planId);
  if (!plan) return { ok: false, path: 'plan', message: `must be one of ${cat.plans.map((p) => p.id).join(', ')}, got ${JSON.stringify(planId)}` };
  if (plan.tiers) {
    const names = plan.tiers.map((t) => t.id).join(', ');
    if (tierId === undefined) return { ok: false, path: 'tier', message: `is required for plan ${plan.id}: one of ${names}` };
    const tier = plan.tiers.find((t) => t.id === tierId);
    if (!tier) return { ok: false, path: 'tier', message: `must be one of ${names}, got ${JSON.stringify(tierId)}` };
    return { ok: true, plan, tier, amountUsd: tier.priceUsd };
  }
  if (tierId !== undefined) return { ok: false, path: 'tier', message: `plan ${plan.id} has no tiers` };
  if (!plan.priceUsd) return { ok: false, path: 'plan', message: `plan ${plan.id} is free and needs no checkout` };
  return { ok: true, plan, tier: null, amountUsd: plan.priceUsd };
}
