import { HttpError } from '../../http/errors.js';
import { json } from '../../http/reply.js';
import type { Request } from '../../http/server.js';
import type { CheckoutRecord } from '../types.js';
import { OFFLINE_COMPLETE_PATH, OfflineProvider } from './provider.js';
import type { BillingRouteContext } from './route-context.js';

/** The offline provider's checkout links: a GET that shows what the link is for, a POST that completes it. */
export function mountOfflineCheckoutRoutes({ server, o, view, complete }: BillingRouteContext): void {
  const { store, auth, provider, plans } = o;
  const anyone = server.scoped('public');
  const full = server.scoped('full');

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
  anyone.get(`${OFFLINE_COMPLETE_PATH}/:ref/complete`, async (req) => {
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
  full.post(
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
