import { HttpError } from '../../http/errors.js';
import { json } from '../../http/reply.js';
import type { BillingRouteContext } from './route-context.js';
import { loadStripe } from './stripe-sdk.js';
import { readStripeEvent, STRIPE_WEBHOOK_MAX_BODY, stripeHeaderProblem } from './stripe-webhook.js';

const STRIPE_WEBHOOK_PATH = '/v1/billing/stripe/webhook';

/** Stripe's checkout events: a paid session grants its plan, an expired one is marked so. */
export function mountStripeWebhookRoute({ server, o, complete }: BillingRouteContext): void {
  const { store } = o;
  const anyone = server.scoped('public');

  anyone.post(
    STRIPE_WEBHOOK_PATH,
    async (req) => {
      const secret = o.stripeWebhookSecret;
      if (!secret) throw new HttpError('not_found', 'Stripe webhooks are not configured on this server (set STRIPE_WEBHOOK_SECRET).');
      const signature = req.headers['stripe-signature'];
      if (!signature) throw new HttpError('bad_request', 'The Stripe-Signature header is missing.');
      const stripe = await loadStripe();
      let notice;
      try {
        notice = readStripeEvent(stripe, req.body, signature, secret, o.now());
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
}
