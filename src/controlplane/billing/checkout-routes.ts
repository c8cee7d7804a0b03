import { HttpError, validationFailed } from '../../http/errors.js';
import { json, text } from '../../http/reply.js';
import { Fields, idParam, readJsonObject } from '../../http/validate.js';
import type { CheckoutId } from '../types.js';
import { choosePrice } from './plans.js';
import type { BillingRouteContext } from './route-context.js';

/** Checkouts: start one with the payment provider, and read one (polling the provider while it is open). */
export function mountCheckoutRoutes({ server, o, origin, view, complete }: BillingRouteContext): void {
  const { store, auth, provider, plans } = o;
  const full = server.scoped('full');

  full.post('/v1/billing/checkout', async (req) => {
    const session = await auth.session(req);
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['plan', 'tier']);
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

  full.get('/v1/billing/checkout/:id', async (req) => {
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
}

/** Where the payment provider sends the buyer back to. */
export function mountCheckoutReturnRoute({ server }: BillingRouteContext): void {
  const anyone = server.scoped('public');
  anyone.get('/v1/billing/return', async (req) => {
    const result = req.searchParams().get('result') === 'success' ? 'Payment finished' : 'Checkout cancelled';
    return text(200, `${result}; you can close this page.\n`);
  });
}
