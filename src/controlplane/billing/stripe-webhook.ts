import Stripe from 'stripe';

/** Largest Stripe event body read; Stripe's checkout events are a few KiB. */
export const STRIPE_WEBHOOK_MAX_BODY = 256 * 1024;
/** Seconds a Stripe-Signature timestamp may be from now (Stripe's own default). */
export const STRIPE_SIGNATURE_TOLERANCE_S = 300;

export type StripeNotice = { kind: 'paid'; sessionId: string } | { kind: 'expired'; sessionId: string } | { kind: 'other'; type: string };

/**
 * Verifies a Stripe webhook with the `stripe` package (the Stripe-Signature scheme: HMAC-SHA256
 * of `timestamp.body` with the endpoint's whsec_ secret) and reads what billing needs from it.
 * A checkout paid at once is `checkout.session.completed` with payment_status paid (or no
 * payment required); one paid later (bank debits) ends with `async_payment_succeeded`.
 * Throws when the signature does not verify.
 */
export function readStripeEvent(rawBody: Buffer, signature: string, secret: string): StripeNotice {
  const event = Stripe.webhooks.constructEvent(rawBody, signature, secret, STRIPE_SIGNATURE_TOLERANCE_S);
  const session = event.data.object as { id?: unknown; payment_status?: unknown };
  const id = typeof session.id === 'string' ? session.id : '';
  switch (event.type) {
    case 'checkout.session.completed':
      return session.payment_status === 'unpaid' ? { kind: 'other', type: `${event.type} (unpaid)` } : { kind: 'paid', sessionId: id };
    case 'checkout.session.async_payment_succeeded':
      return { kind: 'paid', sessionId: id };
    case 'checkout.session.expired':
      return { kind: 'expired', sessionId: id };
    default:
      return { kind: 'other', type: event.type };
  }
}
