import type { HttpServer, Request } from '../../http/server.js';
import type { Authenticator } from '../../identity/auth.js';
import type { TenantPlans } from '../../identity/plan-limits.js';
import type { Plan, TenantId } from '../../identity/types.js';
import type { ControlPlaneStore } from '../store.js';
import type { CheckoutRecord } from '../types.js';
import { grantOf, type PlanCatalogue } from './plans.js';
import type { PaymentProvider } from './provider.js';

export interface BillingOptions {
  store: ControlPlaneStore;
  auth: Authenticator;
  plans: PlanCatalogue;
  rules: TenantPlans & { entryOf(plan: Plan): { plan: { id: string }; tier: { id: string } | null } };
  /** null: no payment provider (checkouts answer 409 billing_not_configured). */
  provider: PaymentProvider | null;
  /** Sets a tenant's plan (a completed checkout), and tells every cache that holds it. */
  grant(tenantId: TenantId, plan: Plan): Promise<void>;
  /** Widgets of a tenant, for the usage the account shows (the webhooks service counts them). */
  countWidgets(tenantId: TenantId): Promise<number>;
  /** The signing secret of the Stripe webhook endpoint (STRIPE_WEBHOOK_SECRET); without it the route is 404. */
  stripeWebhookSecret?: string | undefined;
  /** Public origin for links (e.g. https://cp.example.com); else taken from the Host header. */
  publicUrl?: string | undefined;
  scheme: 'http' | 'https';
  now: () => number;
}

/** What the billing routes of every resource share: the options, a checkout's public view, and completing a paid one. */
export interface BillingRouteContext {
  server: HttpServer;
  o: BillingOptions;
  origin(req: Request): string;
  view(c: CheckoutRecord): ReturnType<typeof checkoutView>;
  complete(record: CheckoutRecord): Promise<CheckoutRecord>;
}

const checkoutView = (plans: PlanCatalogue, c: CheckoutRecord) => ({
  id: c.id,
  status: c.status,
  url: c.url,
  plan: c.plan,
  tier: c.tier,
  grants: grantOf(plans, c.plan, c.tier),
  amountUsd: c.amountUsd,
  currency: plans.currency,
  interval: c.interval,
  provider: c.provider,
  createdAt: c.createdAt,
  completedAt: c.completedAt,
});

export function billingRouteContext(server: HttpServer, o: BillingOptions): BillingRouteContext {
  const { store, plans } = o;
  const origin = (req: Request): string => o.publicUrl?.replace(/\/+$/, '') ?? `${o.scheme}://${req.headers.host ?? 'localhost'}`;
  const view = (c: CheckoutRecord) => checkoutView(plans, c);

  /**
   * Grants a paid session's plan, then marks it complete. In this order because a session
   * marked complete is never granted again: had the mark come first, a failure or a crash
   * between the two would leave the sale recorded and the plan never given, and the
   * provider's retry (or the next poll) would find nothing left to do. A grant done twice
   * sets the same plan twice. A session paid after a later one of the same tenant was
   * (events out of order, a bank debit settling days later) grants nothing: the plan bought
   * last stays.
   */
  const complete = async (record: CheckoutRecord): Promise<CheckoutRecord> => {
    if (record.status === 'complete') return record;
    const plan = grantOf(plans, record.plan, record.tier);
    if (plan && !(await store.laterCheckoutComplete(record.tenantId, record.id))) await o.grant(record.tenantId, plan);
    return (await store.setCheckoutStatus(record.id, 'complete')) ?? record;
  };

  return { server, o, origin, view, complete };
}
