import { json } from '../../http/reply.js';
import type { TenantRecord } from '../../identity/types.js';
import { monthOf } from '../read-models.js';
import type { BillingRouteContext } from './route-context.js';

/** The plan catalogue and the tenant's account (plan, limits, usage this month, trial). */
export function mountAccountRoutes({ server, o }: BillingRouteContext): void {
  const { store, auth, plans, rules } = o;
  const full = server.scoped('full');

  const account = async (tenant: TenantRecord) => {
    const m = monthOf(o.now());
    const [servers, widgets, usage] = await Promise.all([
      store.countServers(tenant.id),
      o.countWidgets(tenant.id),
      store.tenantUsage(tenant.id, m.firstDay, m.lastDay),
    ]);
    const limits = rules.limits(tenant.plan);
    const ends = rules.trialEndsAt(tenant);
    const entry = rules.entryOf(tenant.plan);
    return {
      plan: tenant.plan,
      billingPlan: entry.plan.id,
      tier: entry.tier?.id ?? null,
      limits,
      usage: { servers, widgets, linesPerMonth: usage.linesSpoken },
      period: { start: new Date(m.start).toISOString(), end: new Date(m.end).toISOString() },
      trial: ends === null ? null : { endsAt: new Date(ends).toISOString(), expired: o.now() >= ends },
      dialogueOff: limits.linesPerMonth !== null && usage.linesSpoken >= limits.linesPerMonth,
    };
  };

  full.get('/v1/billing/plans', async (req) => {
    await auth.session(req);
    return json(200, plans);
  });

  full.get('/v1/billing/account', async (req) => {
    const session = await auth.session(req);
    return json(200, await account(session.tenant));
  });
}
