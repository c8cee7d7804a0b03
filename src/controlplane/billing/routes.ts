import type { HttpServer, Request } from '../../http/server.js';
import { HttpError, validationFailed } from '../../http/errors.js';
import { json, text } from '../../http/reply.js';
import { Fields, idParam, readJsonObject } from '../../http/validate.js';
import type { Authenticator } from '../../identity/auth.js';
import type { TenantPlans } from '../../identity/plan-limits.js';
import type { Plan, TenantId, TenantRecord } from '../../identity/types.js';
import { monthOf } from '../read-models.js';
import type { ControlPlaneStore } from '../store.js';
import type { CheckoutId, CheckoutRecord } from '../types.js';
import { choosePrice, grantOf, type PlanCatalogue } from './plans.js';
import { OFFLINE_COMPLETE_PATH, OfflineProvider, type PaymentProvider } from './provider.js';
import { readStripeEvent, STRIPE_WEBHOOK_MAX_BODY, stripeHeaderProblem } from './stripe-webhook.js';

export const STRIPE_WEBHOOK_PATH = '/v1/billing/stripe/webhook';

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

/** Spec 001 §4.3 billing: the plan catalogue, checkouts that grant a plan, and the tenant's account. */
export function mountBillingRoutes(server: HttpServer, o: BillingOptions): void {
  const { store, auth, provider, plans, rules } = o;

  const origin = (req: Request): string => o.publicUrl?.replace(/\/+$/, '') ?? `${o.scheme}://${req.headers.host ?? 'localhost'}`;
  const view = (c: CheckoutRecord) => ({
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

  const account = async (tenant: TenantRecord) => {
    const m = monthOf(o.now());
    const [servers, widgets, usage] = await Promise.all([
      store.listServers(tenant.id),
      o.countWidgets(tenant.id),
      store.tenantUsage(tenant.id, m.firstDay, m.lastDay),
    ]);
    const limits = rules.limits(tenant.plan);
    const ends = rules.trialEndsAt(tenant);
    const entry = rules.entryOf(tenant.plan);
    return {
      plan: tenant.plan,
      billingPlan: entry.plan.id,
      tier: entry.tier?.id ?? null,
      limits,
      usage: { servers: servers.length, widgets: widgets, linesPerMonth: usage.linesSpoken },
      period: { start: new Date(m.start).toISOString(), end: new Date(m.end).toISOString() },
      trial: ends === null ? null : { endsAt: new Date(ends).toISOString(), expired: o.now() >= ends },
      dialogueOff: limits.linesPerMonth !== null && usage.linesSpoken >= limits.linesPerMonth,
    };
  };

  server.get('/v1/billing/plans', async (req) => {
    await auth.session(req);
    return json(200, plans);
  });

  server.get('/v1/billing/account', async (req) => {
    const session = await auth.session(req);
    return json(200, await account(session.tenant));
  });

  server.post('/v1/billing/checkout', async (req) => {
    const session = await auth.session(req);
    const f = new Fields(readJsonObject(req));
    const planId = f.string('plan', { max: 64 });
    const tierId = f.string('tier', { max: 64 });
    f.done();
    const choice = choosePrice(plans, planId, tierId);
    if (!choice.ok) throw validationFailed([{ path: choice.path, message: choice.message }]);
    if (provider === null)
      throw new HttpError(
        'billing_not_configured',
        'This server takes no payments: set STRIPE_SECRET_KEY to take them through Stripe, or start it with --billing offline to grant plans without payment (for a private or test server).',
      );
    let created;
    try {
      created = await provider.create({
        tenantId: session.tenant.id,
        plan: choice.plan.id,
        planName: choice.plan.name,
        tier: choice.tier?.id ?? null,
        amountUsd: choice.amountUsd,
        currency: plans.currency,
        interval: choice.plan.interval,
        origin: origin(req),
      });
    } catch (err) {
      throw new HttpError('unavailable', `The payment provider (${provider.name}) could not start a checkout: ${(err as Error).message}`);
    }
    const record = await store.createCheckout({
      tenantId: session.tenant.id,
      provider: provider.name,
      providerRef: created.ref,
      status: created.status,
      url: created.url,
      plan: choice.plan.id,
      tier: choice.tier?.id ?? null,
      amountUsd: choice.amountUsd,
      interval: choice.plan.interval,
    });
    return json(201, view(record));
  });

  server.get('/v1/billing/checkout/:id', async (req) => {
    const session = await auth.session(req);
    const id = idParam(req.params.id, 'checkout session') as CheckoutId;
    let record = await store.getCheckout(id);
    if (!record || record.tenantId !== session.tenant.id) throw new HttpError('not_found', `No checkout session with id ${id}.`);
    // Polling is the fallback for a missed webhook: the provider's word completes the session too.
    if (record.status === 'open' && provider !== null && record.provider === provider.name) {
      const status = await provider.status(record.providerRef).catch(() => record!.status);
      if (status === 'complete') record = await complete(record);
      else if (status !== record.status) record = (await store.setCheckoutStatus(record.id, status)) ?? record;
    }
    return json(200, view(record));
  });

  /** The open offline checkout a link names, or why it cannot be completed. */
  const offlineCheckout = async (req: Request): Promise<CheckoutRecord> => {
    const ref = req.params.ref ?? '';
    const record = await store.findCheckout('offline', ref);
    if (!record) throw new HttpError('not_found', 'No offline checkout session with that reference.');
    return record;
  };
  const offlineOnly = (): OfflineProvider => {
    // Completing the link is the whole payment, which only a server without a payment processor
    // accepts: a link left open from before one was configured must not grant a plan for nothing.
    if (provider instanceof OfflineProvider) return provider;
    if (provider === null) throw new HttpError('billing_not_configured', 'This server takes no payments: an offline checkout link no longer completes.');
    throw new HttpError('conflict', `This server takes payments through ${provider.name}: an offline checkout link no longer completes; start a new checkout.`);
  };

  // Opening the link (a GET: link previews, prefetchers and crawlers open links too) changes
  // nothing: it shows what the checkout is for and a button that POSTs to the same address.
  server.get(`${OFFLINE_COMPLETE_PATH}/:ref/complete`, async (req) => {
    const record = await offlineCheckout(req);
    if (record.status !== 'open') return json(200, view(record));
    offlineOnly();
    const what = record.tier ? `${record.plan} ${record.tier}` : record.plan;
    return {
      status: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        'referrer-policy': 'no-referrer',
      },
      body: offlinePage(record.id, escapeHtml(what), record.amountUsd, escapeHtml(plans.currency)),
    };
  });

  // The completion itself: the link's reference (an unguessable secret only the tenant was
  // given) authorises it, and a session sent along must be the tenant's own.
  server.post(
    `${OFFLINE_COMPLETE_PATH}/:ref/complete`,
    async (req) => {
      if (req.headers.authorization !== undefined) {
        const session = await auth.session(req);
        const record = await offlineCheckout(req);
        if (record.tenantId !== session.tenant.id) throw new HttpError('not_found', 'No offline checkout session with that reference.');
      }
      const record = await offlineCheckout(req);
      if (record.status !== 'open') return json(200, view(record));
      offlineOnly().complete(record.providerRef);
      return json(200, view(await complete(record)));
    },
    { body: 'none' },
  );

  server.post(
    STRIPE_WEBHOOK_PATH,
    async (req) => {
      const secret = o.stripeWebhookSecret;
      if (!secret) throw new HttpError('not_found', 'Stripe webhooks are not configured on this server (set STRIPE_WEBHOOK_SECRET).');
      const signature = req.headers['stripe-signature'];
      if (!signature) throw new HttpError('bad_request', 'The Stripe-Signature header is missing.');
      let notice;
      try {
        notice = readStripeEvent(req.body, signature, secret, o.now());
      } catch (err) {
        throw new HttpError('bad_request', `The Stripe-Signature does not verify: ${(err as Error).message}`);
      }
      if (notice.kind === 'malformed') throw new HttpError('bad_request', `The Stripe event cannot be read: ${notice.problem}.`);
      if (notice.kind === 'other') return json(200, { received: true, handled: false });
      const record = await store.findCheckout('stripe', notice.sessionId);
      // An unknown session (another system's, or deleted here) is acknowledged, or Stripe retries it for days.
      if (!record) return json(200, { received: true, handled: false });
      if (notice.kind === 'paid') await complete(record);
      else if (record.status === 'open') await store.setCheckoutStatus(record.id, 'expired');
      return json(200, { received: true, handled: true });
    },
    {
      maxBody: STRIPE_WEBHOOK_MAX_BODY,
      // Stripe signs the body, so the signature itself is checked after it is read; its form and
      // date are checked before (a refusal here is the 400 the handler would give).
      credentials: (req) => {
        if (!o.stripeWebhookSecret) return;
        const signature = req.headers['stripe-signature'];
        if (!signature) throw new HttpError('bad_request', 'The Stripe-Signature header is missing.');
        const problem = stripeHeaderProblem(signature, o.now());
        if (problem !== null) throw new HttpError('bad_request', `The Stripe-Signature does not verify: ${problem}.`);
      },
    },
  );

  server.get('/v1/billing/return', async (req) => {
    const result = req.searchParams().get('result') === 'success' ? 'Payment finished' : 'Checkout cancelled';
    return text(200, `${result}; you can close this page.\n`);
  });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page an offline checkout link shows: what it is for, and the button that completes it (a form POST, no script). */
function offlinePage(id: number, what: string, amount: number, currency: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Offline checkout ${id}</title></head>
<body>
<h1>Offline checkout ${id}</h1>
<p>This server takes no real payments (the offline provider). Completing this checkout grants the plan <strong>${what}</strong> (listed at ${amount} ${currency.toUpperCase()}) without payment.</p>
<form method="post"><button type="submit">Complete the checkout</button></form>
</body></html>
`;
}
