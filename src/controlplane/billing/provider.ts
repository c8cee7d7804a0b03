import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { loadStripe } from './stripe-sdk.js';
import type { CheckoutStatus } from '../types.js';
import type { Interval } from './plans.js';

export interface CheckoutRequest {
  tenantId: number;
  plan: string;
  planName: string;
  tier: string | null;
  amountUsd: number;
  currency: string;
  interval: Interval;
  /** This server's public origin, for return and completion links. */
  origin: string;
}

/** Where checkouts are paid. Implementations: the offline provider and Stripe. */
export interface PaymentProvider {
  readonly name: string;
  create(request: CheckoutRequest): Promise<{ ref: string; url: string; status: CheckoutStatus }>;
  /** The provider's current status of a session. */
  status(ref: string): Promise<CheckoutStatus>;
}

export const OFFLINE_COMPLETE_PATH = '/v1/billing/offline';

/**
 * For development and self-hosting without a payment processor: the checkout URL is a link
 * on this server; opening it (GET) marks the session complete. The reference in the link is
 * an unguessable secret, which is what authorises the completion.
 */
export class OfflineProvider implements PaymentProvider {
  readonly name = 'offline';
  /** References completed through their link, for status(); the store keeps them across restarts. */
  private readonly completed = new Set<string>();

  async create(request: CheckoutRequest): Promise<{ ref: string; url: string; status: CheckoutStatus }> {
    const ref = `off_${randomBytes(18).toString('base64url')}`;
    return { ref, url: `${request.origin}${OFFLINE_COMPLETE_PATH}/${ref}/complete`, status: 'open' };
  }

  /** The link of `ref` was opened: the session is paid. */
  complete(ref: string): void {
    this.completed.add(ref);
  }

  async status(ref: string): Promise<CheckoutStatus> {
    return this.completed.has(ref) ? 'complete' : 'open';
  }
}

export interface StripeProviderOptions {
  secretKey: string;
  /** Another API origin (a test double or a proxy), e.g. http://127.0.0.1:12111. */
  apiBase?: string | undefined;
  successUrl?: string | undefined;
  cancelUrl?: string | undefined;
}

/** Stripe Checkout through the official SDK. */
export class StripeProvider implements PaymentProvider {
  readonly name = 'stripe';
  private readonly config: Stripe.StripeConfig = { maxNetworkRetries: 1, telemetry: false, timeout: 20_000 };
  private client: Promise<Stripe> | undefined;

  constructor(private readonly options: StripeProviderOptions) {
    if (options.apiBase) {
      const u = new URL(options.apiBase);
      this.config.host = u.hostname;
      this.config.port = u.port || (u.protocol === 'https:' ? 443 : 80);
      this.config.protocol = u.protocol === 'https:' ? 'https' : 'http';
    }
  }

  /** The SDK's client, made on the first checkout (the package is loaded then, see loadStripe). */
  private stripe(): Promise<Stripe> {
    return (this.client ??= loadStripe().then((S) => new S(this.options.secretKey, this.config)));
  }

  async create(r: CheckoutRequest): Promise<{ ref: string; url: string; status: CheckoutStatus }> {
    const recurring = r.interval === 'none' ? undefined : { interval: r.interval };
    const session = await (
      await this.stripe()
    ).checkout.sessions.create({
      mode: recurring ? 'subscription' : 'payment',
      client_reference_id: String(r.tenantId),
      metadata: { tenantId: String(r.tenantId), plan: r.plan, tier: r.tier ?? '' },
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: r.currency,
            unit_amount: Math.round(r.amountUsd * 100),
            product_data: { name: r.tier ? `${r.planName} (${r.tier})` : r.planName },
            ...(recurring ? { recurring } : {}),
          },
        },
      ],
      success_url: this.options.successUrl ?? `${r.origin}/v1/billing/return?result=success`,
      cancel_url: this.options.cancelUrl ?? `${r.origin}/v1/billing/return?result=cancel`,
    });
    if (!session.url) throw new Error(`Stripe returned checkout session ${session.id} without a url`);
    return { ref: session.id, url: session.url, status: stripeStatus(session.status) };
  }

  async status(ref: string): Promise<CheckoutStatus> {
    return stripeStatus((await (await this.stripe()).checkout.sessions.retrieve(ref)).status);
  }
}

function stripeStatus(s: string | null): CheckoutStatus {
  return s === 'complete' ? 'complete' : s === 'expired' ? 'expired' : 'open';
}

/**
 * The payment provider of a server: `billing` when given (`--billing`), else Stripe when
 * STRIPE_SECRET_KEY is set (STRIPE_API_BASE points it elsewhere), else the offline provider
 * on a loopback server only (a developer's machine, `brainstem up`): on a server others can
 * reach, a free plan for two requests is no default. null: no provider (checkouts answer
 * 409 billing_not_configured). STRIPE_WEBHOOK_SECRET (read by the billing routes) verifies
 * Stripe's webhook events.
 */
export function providerFromEnv(env: NodeJS.ProcessEnv = process.env, billing?: 'stripe' | 'offline', loopback = true): PaymentProvider | null {
  if (billing === 'offline') return new OfflineProvider();
  if (!env.STRIPE_SECRET_KEY) {
    if (billing === 'stripe') throw new Error('--billing stripe needs STRIPE_SECRET_KEY in the environment');
    return loopback ? new OfflineProvider() : null;
  }
  return new StripeProvider({
    secretKey: env.STRIPE_SECRET_KEY,
    apiBase: env.STRIPE_API_BASE,
    successUrl: env.STRIPE_SUCCESS_URL,
    cancelUrl: env.STRIPE_CANCEL_URL,
  });
}
