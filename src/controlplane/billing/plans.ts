import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LIMIT_NAMES, type PlanLimits, type TenantPlans } from '../../identity/plan-limits.js';
import { PLANS, type Plan, type TenantRecord } from '../../identity/types.js';
import { quoteValue } from '../../http/errors.js';

export type { PlanLimits } from '../../identity/plan-limits.js';

export interface Tier {
  id: string;
  name: string;
  priceUsd: number;
  /** The tenant plan a completed checkout of this tier sets. */
  grants: Plan;
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
  /** The tenant plan this plan sets (absent when priced by tier: each tier names its own). */
  grants?: Plan;
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

const DAY_MS = 86_400_000;

/**
 * Loads and checks a plans file; a malformed one fails at start-up with the field to fix.
 * One catalogue: every billing plan (or each tier of a tiered one) names the tenant plan it
 * grants and that plan's limits, and every tenant plan is granted by exactly one entry, so
 * the limits of any tenant are defined whichever way it got its plan.
 */
export function loadPlans(file: string = DEFAULT_PLANS_FILE): PlanCatalogue {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the billing plans file ${file}: ${(err as Error).message}`);
  }
  return checkPlans(raw, file);
}

export function checkPlans(raw: unknown, file = 'plans'): PlanCatalogue {
  const fail = (msg: string): never => {
    throw new Error(`billing plans file ${file}: ${msg}`);
  };
  const cat = raw as PlanCatalogue;
  if (typeof cat !== 'object' || cat === null || typeof cat.currency !== 'string' || !Array.isArray(cat.plans))
    fail('needs {"currency": string, "plans": [...]}');
  const ids = new Set<string>();
  const granted = new Map<Plan, string>();
  const grant = (where: string, plan: unknown, limits: unknown): void => {
    if (!PLANS.includes(plan as Plan)) fail(`${where}.grants must be one of ${PLANS.join(', ')}`);
    if (granted.has(plan as Plan)) fail(`${where} grants ${String(plan)}, which ${granted.get(plan as Plan)} grants already`);
    granted.set(plan as Plan, where);
    const l = limits as Record<string, unknown> | undefined;
    if (typeof l !== 'object' || l === null) fail(`${where}.limits must be an object {${LIMIT_NAMES.join(', ')}}`);
    for (const k of LIMIT_NAMES) {
      const v = l![k];
      if (v !== null && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0))
        fail(`${where}.limits.${k} must be a non-negative integer or null (unlimited)`);
    }
  };
  cat.plans.forEach((p, i) => {
    const where = `plans[${i}]`;
    if (typeof p.id !== 'string' || !p.id) fail(`${where}.id must be a non-empty string`);
    if (ids.has(p.id)) fail(`${where}.id "${p.id}" is used twice`);
    ids.add(p.id);
    if (!['none', 'month', 'year'].includes(p.interval)) fail(`${where}.interval must be none, month or year`);
    const priced = typeof p.priceUsd === 'number' && p.priceUsd >= 0;
    const tiered = Array.isArray(p.tiers) && p.tiers.length > 0;
    if (priced === tiered) fail(`${where} ("${p.id}") needs exactly one of priceUsd (a number >= 0) or tiers (a non-empty array)`);
    if (p.trialDays !== undefined && !(Number.isInteger(p.trialDays) && p.trialDays > 0)) fail(`${where}.trialDays must be a positive integer`);
    if (priced) grant(where, p.grants, p.limits);
    p.tiers?.forEach((t, j) => {
      if (typeof t.id !== 'string' || !t.id || typeof t.priceUsd !== 'number' || t.priceUsd <= 0) fail(`${where}.tiers[${j}] needs an id and a priceUsd > 0`);
      if (ids.has(t.id)) fail(`${where}.tiers[${j}].id "${t.id}" is used twice`);
      ids.add(t.id);
      grant(`${where}.tiers[${j}]`, t.grants, t.limits);
    });
  });
  const missing = PLANS.filter((p) => !granted.has(p));
  if (missing.length > 0) fail(`no plan grants ${missing.join(', ')}; every tenant plan needs its limits`);
  return cat;
}

/** The catalogue entry that grants each tenant plan. */
function entries(cat: PlanCatalogue): Map<Plan, { plan: BillingPlan; tier: Tier | null; limits: PlanLimits }> {
  const out = new Map<Plan, { plan: BillingPlan; tier: Tier | null; limits: PlanLimits }>();
  for (const plan of cat.plans) {
    if (plan.grants && plan.limits) out.set(plan.grants, { plan, tier: null, limits: plan.limits });
    for (const tier of plan.tiers ?? []) out.set(tier.grants, { plan, tier, limits: tier.limits });
  }
  return out;
}

/** The plan rules (limits, trial end) the services apply, from the catalogue. */
export function tenantPlans(cat: PlanCatalogue): TenantPlans & { entryOf(plan: Plan): { plan: BillingPlan; tier: Tier | null } } {
  const byPlan = entries(cat);
  const entry = (plan: Plan) => byPlan.get(plan)!;
  return {
    limits: (plan) => entry(plan).limits,
    trialEndsAt: (tenant: TenantRecord) => {
      const days = entry(tenant.plan).plan.trialDays;
      return days === undefined ? null : Date.parse(tenant.createdAt) + days * DAY_MS;
    },
    entryOf: (plan) => {
      const e = entry(plan);
      return { plan: e.plan, tier: e.tier };
    },
  };
}

export type PriceChoice = { ok: true; plan: BillingPlan; tier: Tier | null; amountUsd: number; grants: Plan } | { ok: false; path: string; message: string };

/**
 * Resolves a checkout request to a price. `plan` is a billing plan (`cloud`, `self-host`) or
 * the tenant plan one grants (`agency`); `tier` alone names a tier of whichever plan has it.
 */
export function choosePrice(cat: PlanCatalogue, planId: string | undefined, tierId: string | undefined): PriceChoice {
  const all = cat.plans.flatMap((p) => [p.id, ...(p.tiers ?? []).map((t) => t.id)]);
  if (planId === undefined && tierId === undefined) return { ok: false, path: 'plan', message: `a plan or a tier is required: one of ${all.join(', ')}` };
  let plan = planId === undefined ? undefined : cat.plans.find((p) => p.id === planId);
  let tier: Tier | undefined;
  if (planId !== undefined && !plan) {
    // A tenant plan's name stands for the entry that grants it.
    const byGrant = PLANS.includes(planId as Plan) ? entries(cat).get(planId as Plan) : undefined;
    if (!byGrant)
      return {
        ok: false,
        path: 'plan',
        message: `must be one of ${cat.plans.map((p) => p.id).join(', ')} (or the plan one grants: ${PLANS.join(', ')}), got ${quoteValue(planId)}`,
      };
    plan = byGrant.plan;
    tier = byGrant.tier ?? undefined;
    if (tier && tierId !== undefined && tierId !== tier.id)
      return { ok: false, path: 'tier', message: `plan ${planId} is the ${tier.id} tier of ${plan.id}, got tier ${JSON.stringify(tierId)}` };
  }
  if (!plan) {
    plan = cat.plans.find((p) => p.tiers?.some((t) => t.id === tierId));
    if (!plan)
      return {
        ok: false,
        path: 'tier',
        message: `must be one of ${cat.plans.flatMap((p) => (p.tiers ?? []).map((t) => t.id)).join(', ')}, got ${quoteValue(tierId)}`,
      };
  }
  if (plan.tiers) {
    const names = plan.tiers.map((t) => t.id).join(', ');
    if (!tier) {
      if (tierId === undefined) return { ok: false, path: 'tier', message: `is required for plan ${plan.id}: one of ${names}` };
      tier = plan.tiers.find((t) => t.id === tierId);
      if (!tier) return { ok: false, path: 'tier', message: `must be one of ${names}, got ${quoteValue(tierId)}` };
    }
    return { ok: true, plan, tier, amountUsd: tier.priceUsd, grants: tier.grants };
  }
  if (tierId !== undefined) return { ok: false, path: 'tier', message: `plan ${plan.id} has no tiers` };
  if (!plan.priceUsd) return { ok: false, path: 'plan', message: `plan ${plan.id} is free and needs no checkout` };
  return { ok: true, plan, tier: null, amountUsd: plan.priceUsd, grants: plan.grants! };
}

/** The tenant plan a checkout of (plan, tier) grants; null when the catalogue no longer has it. */
export function grantOf(cat: PlanCatalogue, planId: string, tierId: string | null): Plan | null {
  const plan = cat.plans.find((p) => p.id === planId);
  if (!plan) return null;
  if (tierId === null) return plan.grants ?? null;
  return plan.tiers?.find((t) => t.id === tierId)?.grants ?? null;
}
