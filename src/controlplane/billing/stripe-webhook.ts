import type Stripe from 'stripe';

/** Largest Stripe event body read; Stripe's checkout events are a few KiB. */
export const STRIPE_WEBHOOK_MAX_BODY = 256 * 1024;
/** Seconds a Stripe-Signature timestamp may be from now (Stripe's own default). */
export const STRIPE_SIGNATURE_TOLERANCE_S = 300;

export type StripeNotice =
  | { kind: 'paid'; sessionId: string }
  | { kind: 'expired'; sessionId: string }
  | { kind: 'other'; type: string }
  /** Signed with the endpoint's secret, but not an event billing can read (no type, or a checkout event without its session). */
  | { kind: 'malformed'; problem: string };

/**
 * Verifies a Stripe webhook with the `stripe` package (the Stripe-Signature scheme: HMAC-SHA256
 * of `timestamp.body` with the endpoint's whsec_ secret) and reads what billing needs from it.
 * A checkout paid at once is `checkout.session.completed` with payment_status paid (or no
 * payment required); one paid later (bank debits) ends with `async_payment_succeeded`.
 * Throws when the signature does not verify (or the signed body is not JSON). `stripe` is the
 * package as `loadStripe` gives it.
 */
export function readStripeEvent(stripe: typeof Stripe, rawBody: Buffer, signature: string, secret: string, nowMs: number = Date.now()): StripeNotice {
  const problem = stripeHeaderProblem(signature, nowMs);
  if (problem !== null) throw new Error(problem);
  const event: unknown = stripe.webhooks.constructEvent(rawBody, signature, secret, STRIPE_SIGNATURE_TOLERANCE_S, undefined, nowMs);
  // Signed is not the same as well formed: read every field as unknown, so a body that is JSON
  // but not an event answers 400 rather than failing inside this function.
  const type = isObject(event) && typeof event.type === 'string' ? event.type : null;
  if (type === null) return { kind: 'malformed', problem: 'the event has no type' };
  if (!CHECKOUT_EVENTS.has(type)) return { kind: 'other', type };
  const data = isObject(event) ? event.data : undefined;
  const session = isObject(data) ? data.object : undefined;
  if (!isObject(session) || typeof session.id !== 'string' || session.id === '') return { kind: 'malformed', problem: `${type} has no data.object.id` };
  switch (type) {
    case 'checkout.session.completed':
      return session.payment_status === 'unpaid' ? { kind: 'other', type: `${type} (unpaid)` } : { kind: 'paid', sessionId: session.id };
    case 'checkout.session.async_payment_succeeded':
      return { kind: 'paid', sessionId: session.id };
    default:
      return { kind: 'expired', sessionId: session.id };
  }
}

/** The events that move a checkout session. */
const CHECKOUT_EVENTS: ReadonlySet<string> = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.expired']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What can be told of a Stripe-Signature header without the body: its form (`t=<unix
 * seconds>` and at least one `v1=<hex>`) and its timestamp inside the tolerance, in the past
 * or in the future (the `stripe` package refuses only old ones: an event dated ahead would
 * stay replayable until its date). The problem in words, or null.
 */
export function stripeHeaderProblem(signature: string, nowMs: number): string | null {
  let t: number | null = null;
  let v1 = false;
  for (const part of signature.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = /^\d{1,12}$/.test(value) ? Number(value) : null;
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) v1 = true;
  }
  if (t === null || !v1) return 'Stripe-Signature must carry t=<unix seconds> and v1=<signature>';
  const skew = t - Math.floor(nowMs / 1000);
  if (skew > STRIPE_SIGNATURE_TOLERANCE_S) return `the signature is dated ${skew} s in the future (more than ${STRIPE_SIGNATURE_TOLERANCE_S} s)`;
  if (-skew > STRIPE_SIGNATURE_TOLERANCE_S) return `the signature is ${-skew} s old (more than ${STRIPE_SIGNATURE_TOLERANCE_S} s)`;
  return null;
}
