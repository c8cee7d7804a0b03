import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { call, messageOf } from '../api.js';
import { ErrorBox, fmtMoney, fmtPeriod, fmtTime, useInterval, useLoad } from '../ui.js';

interface Limits {
  servers: number | null;
  widgets: number | null;
  linesPerMonth: number | null;
}

interface Tier {
  id: string;
  name: string;
  priceUsd: number;
  grants: string;
  limits: Limits;
}

interface Plan {
  id: string;
  name: string;
  description: string;
  interval: 'none' | 'month' | 'year';
  priceUsd?: number;
  tiers?: Tier[];
  trialDays?: number;
  grants?: string;
  limits?: Limits;
}

interface Account {
  plan: string;
  billingPlan: string;
  tier: string | null;
  limits: Limits;
  usage: Limits & { servers: number; widgets: number; linesPerMonth: number };
  period: { start: string; end: string };
  trial: { endsAt: string; expired: boolean } | null;
  dialogueOff: boolean;
}

const LIMIT_ROWS: [keyof Limits, string][] = [
  ['servers', 'Game servers'],
  ['widgets', 'Chat widgets'],
  ['linesPerMonth', 'Dialogue lines this month'],
];

const fmtLimit = (n: number | null) => (n === null ? 'unlimited' : n.toLocaleString('en'));

/** The limits a plan or tier grants, as a short line. */
const limitsLine = (l: Limits | undefined) =>
  l ? LIMIT_ROWS.map(([k, label]) => `${label.replace(' this month', '/month')}: ${fmtLimit(l[k])}`).join(' · ') : '';

function CurrentPlan({ account }: { account: Account }) {
  return html`<section aria-labelledby="current-plan" data-plan=${account.plan}>
    <h2 id="current-plan">Current plan: ${account.plan}</h2>
    <p class="hint">
      ${account.billingPlan}${account.tier ? ` (${account.tier})` : ''}; this period ${fmtPeriod(account.period.start, account.period.end)} (UTC)
    </p>
    ${
      account.trial
        ? html`<p class=${account.trial.expired ? 'notice error' : 'notice'} role="status">
            ${
              account.trial.expired
                ? `The trial ended on ${fmtTime(account.trial.endsAt)}: publishing and new keys need a plan.`
                : `The trial ends on ${fmtTime(account.trial.endsAt)}.`
            }
          </p>`
        : null
    }
    ${
      account.dialogueOff
        ? html`<p class="notice" role="status">
            This month's dialogue lines are used up: servers get their bundle with llm_dialogue off until ${fmtTime(account.period.end)} or a plan with more
            lines.
          </p>`
        : null
    }
    <table>
      <thead>
        <tr>
          <th scope="col">Limit</th>
          <th scope="col">Used</th>
          <th scope="col">Allowed</th>
        </tr>
      </thead>
      <tbody>
        ${LIMIT_ROWS.map(
          ([k, label]) =>
            html`<tr data-limit=${k}>
              <th scope="row">${label}</th>
              <td>${account.usage[k].toLocaleString('en')}</td>
              <td>${fmtLimit(account.limits[k])}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <p class="hint">
      A new server or widget beyond the plan is refused. When the month's dialogue lines reach the limit, the next config pull of each server serves its bundle
      with llm_dialogue off (a new version in its history), until the month ends or a plan with more lines is bought.
    </p>
  </section>`;
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

/** How often an open checkout is asked for its status: paying happens in another tab. */
const CHECKOUT_POLL_MS = 3000;

const per = (i: Plan['interval']) => (i === 'month' ? ' / month' : i === 'year' ? ' / year' : '');

/** A plan with its price (or each tier's) and the limits it grants, each with a checkout button. */
function planCard(p: Plan, currency: string, checkout: (plan: string, tier?: string) => Promise<void>) {
  return html`<li class="card">
    <h2 class="h3">${p.name}</h2>
    <p>${p.description}</p>
    ${p.trialDays ? html`<p class="hint">${p.trialDays}-day free trial</p>` : null}
    ${
      p.tiers
        ? html`<ul class="plain">
            ${p.tiers.map(
              (t) =>
                html`<li>
                  <p class="row spread">
                    <span>${t.name}: ${fmtMoney(t.priceUsd, currency)}${per(p.interval)} (${t.grants} plan)</span>
                    <button type="button" onClick=${() => checkout(p.id, t.id)} aria-label=${`Check out ${p.name} ${t.name}`}>Check out</button>
                  </p>
                  <p class="hint">${limitsLine(t.limits)}</p>
                </li>`,
            )}
          </ul>`
        : html`${
              p.priceUsd
                ? html`<p class="row spread">
                    <span>${fmtMoney(p.priceUsd, currency)}${per(p.interval)} (${p.grants} plan)</span
                    ><button type="button" onClick=${() => checkout(p.id)} aria-label=${`Check out ${p.name}`}>Check out</button>
                  </p>`
                : html`<p class="hint">Free</p>`
            }
            <p class="hint">${limitsLine(p.limits)}</p>`
    }
  </li>`;
}

export function BillingPage() {
  const plans = useLoad(() => call<{ currency: string; plans: Plan[] }>('GET', '/v1/billing/plans'), []);
  const account = useLoad(() => call<Account>('GET', '/v1/billing/account'), []);
  const [error, setError] = useState<string | null>(null);
  const [session, setSession] = useState<Checkout | null>(null);

  // Paying happens in the tab the checkout opened; asking for the session while it is open
  // picks up the payment (and the plan it grants) without a reload.
  useInterval(
    () =>
      void (async () => {
        if (!session) return;
        try {
          const c = await call<Checkout>('GET', `/v1/billing/checkout/${session.id}`);
          setSession(c);
          if (c.status !== 'open') await account.reload();
        } catch (err) {
          setError(messageOf(err));
        }
      })(),
    session?.status === 'open' ? CHECKOUT_POLL_MS : null,
  );

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
    <${ErrorBox} error=${error ?? plans.error ?? account.error} />
    ${account.data ? html`<${CurrentPlan} account=${account.data} />` : null}
    ${
      session
        ? html`<p class="notice" role="status" data-checkout=${session.status}>
            ${
              session.status === 'open'
                ? html`Checkout ${session.id} (open, ${fmtTime(session.createdAt)}):
                    <a href=${session.url} target="_blank" rel="noopener">open the payment page</a>.`
                : `Checkout ${session.id} ${session.status} (${session.tier ? `${session.plan} ${session.tier}` : session.plan}).`
            }
          </p>`
        : null
    }
    <ul class="cards plans">
      ${(plans.data?.plans ?? []).map((p) => planCard(p, plans.data!.currency, checkout))}
    </ul>
  </section>`;
}
