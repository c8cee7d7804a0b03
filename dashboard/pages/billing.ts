import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, messageOf } from '../api.js';
import { ErrorBox, fmtTime, useLoad } from '../ui.js';

interface Tier {
  id: string;
  name: string;
  priceUsd: number;
}

interface Plan {
  id: string;
  name: string;
  description: string;
  interval: 'none' | 'month' | 'year';
  priceUsd?: number;
  tiers?: Tier[];
  trialDays?: number;
}

interface Checkout {
  id: string;
  status: string;
  url: string;
  plan: string;
  tier: string | null;
  amountUsd: number;
  createdAt: string;
}

const per = (i: Plan['interval']) => (i === 'month' ? ' / month' : i === 'year' ? ' / year' : '');

export function BillingPage() {
  const plans = useLoad(() => call<{ currency: string; plans: Plan[] }>('GET', '/v1/billing/plans'), []);
  const [error, setError] = useState<string | null>(null);
  const [session, setSession] = useState<Checkout | null>(null);

  const checkout = async (plan: string, tier?: string) => {
    setError(null);
    try {
      const c = await call<Checkout>('POST', '/v1/billing/checkout', { body: tier ? { plan, tier } : { plan } });
      setSession(c);
      window.open(c.url, '_blank', 'noopener');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return html`<section>
    <h1>Billing</h1>
    <${ErrorBox} error=${error ?? plans.error} />
    ${session ? html`<p class="notice" role="status">Checkout ${session.id} (${session.status}, ${fmtTime(session.createdAt)}): <a href=${session.url} target="_blank" rel="noopener">open the payment page</a>.</p>` : null}
    <ul class="cards plans">
      ${(plans.data?.plans ?? []).map((p) => html`<li class="card">
        <h2 class="h3">${p.name}</h2>
        <p>${p.description}</p>
        ${p.trialDays ? html`<p class="hint">${p.trialDays}-day free trial</p>` : null}
        ${p.tiers
          ? html`<ul class="plain">${p.tiers.map((t) => html`<li class="row spread"><span>${t.name}: $${t.priceUsd}${per(p.interval)}</span>
              <button type="button" onClick=${() => checkout(p.id, t.id)} aria-label=${`Check out ${p.name} ${t.name}`}>Check out</button></li>`)}</ul>`
          : p.priceUsd
            ? html`<p class="row spread"><span>$${p.priceUsd}${per(p.interval)}</span><button type="button" onClick=${() => checkout(p.id)} aria-label=${`Check out ${p.name}`}>Check out</button></p>`
            : html`<p class="hint">Free</p>`}
      </li>`)}
    </ul>
  </section>`;
}
