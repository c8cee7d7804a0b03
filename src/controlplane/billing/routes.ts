import type { HttpServer, Request } from '../../http/server.js';
import { HttpError, validationFailed } from '../../http/errors.js';
import { json, text } from '../../http/reply.js';
import { Fields, idParam, readJsonObject } from '../../http/validate.js';
import type { Authenticator } from '../../identity/auth.js';
import type { ControlPlaneStore } from '../store.js';
import type { CheckoutId, CheckoutRecord } from '../types.js';
import { choosePrice, type PlanCatalogue } from './plans.js';
import { OFFLINE_COMPLETE_PATH, type PaymentProvider } from './provider.js';

export interface BillingOptions {
  store: ControlPlaneStore;
  auth: Authenticator;
  plans: PlanCatalogue;
  provider: PaymentProvider;
  /** Public origin for links (e.g. https://cp.example.com); else taken from the Host header. */
  publicUrl?: string | undefined;
  scheme: 'http' | 'https';
}

/** Spec 001 §4.3 billing: the plan catalogue and checkout sessions through a PaymentProvider. */
export function mountBillingRoutes(server: HttpServer, o: BillingOptions): void {
  const { store, auth, provider, plans } = o;

  const origin = (req: Request): string => o.publicUrl?.replace(/\/+$/, '') ?? `${o.scheme}://${req.headers.host ?? 'localhost'}`;
  const view = (c: CheckoutRecord) => ({
    id: c.id,
    status: c.status,
    url: c.url,
    plan: c.plan,
    tier: c.tier,
    amountUsd: c.amountUsd,
    currency: plans.currency,
    interval: c.interval,
    provider: c.provider,
    createdAt: c.createdAt,
    completedAt: c.completedAt,
  });

  server.get('/v1/billing/plans', async (req) => {
    await auth.session(req);
    return json(200, plans);
  });

  server.post('/v1/billing/checkout', async (req) => {
    const session = await auth.session(req);
    const f = new Fields(readJsonObject(req));
    const planId = f.string('plan', { required: true, max: 64 });
    const tierId = f.string('tier', { max: 64 });
    f.done();
    const choice = choosePrice(plans, planId!, tierId);
    if (!choice.ok) throw validationFailed([{ path: choice.path, message: choice.message }]);
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
    if (record.status === 'open' && record.provider === provider.name && provider.name !== 'offline') {
      const status = await provider.status(record.providerRef).catch(() => record!.status);
      if (status !== record.status) record = (await store.setCheckoutStatus(record.id, status)) ?? record;
    }
    return json(200, view(record));
  });

  server.get(`${OFFLINE_COMPLETE_PATH}/:ref/complete`, async (req) => {
    const record = await store.findCheckout('offline', req.params.ref ?? '');
    if (!record) throw new HttpError('not_found', 'No offline checkout session with that reference.');
    const done = record.status === 'open' ? ((await store.setCheckoutStatus(record.id, 'complete')) ?? record) : record;
    return json(200, view(done));
  });

  server.get('/v1/billing/return', async (req) => {
    const result = req.searchParams().get('result') === 'success' ? 'Payment finished' : 'Checkout cancelled';
    return text(200, `${result}; you can close this page.\n`);
  });
}
