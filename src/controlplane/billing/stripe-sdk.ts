import type Stripe from 'stripe';

let stripeModule: Promise<typeof Stripe> | undefined;
/**
 * The `stripe` package, loaded the first time a server uses Stripe: it costs every process
 * that imports the control plane (each CLI command, each test file) about a tenth of a
 * second of CPU, and most never take a payment.
 */
export function loadStripe(): Promise<typeof Stripe> {
  return (stripeModule ??= import('stripe').then((m) => m.default));
}
