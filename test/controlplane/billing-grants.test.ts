import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Stripe from 'stripe';
import { tempDir } from '../helpers/paths.js';
import { ADMIN_TOKEN, startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { checkPlans, loadPlans, tenantPlans } from '../../src/controlplane/billing/plans.js';
import { providerFromEnv } from '../../src/controlplane/billing/provider.js';
import { STRIPE_WEBHOOK_MAX_BODY } from '../../src/controlplane/billing/stripe-webhook.js';
import { QUOTA_PUBLISHER } from '../../src/controlplane/line-quota.js';
import { PLANS } from '../../src/identity/types.js';
import { fakeStripe } from './fake-stripe.js';
import { report, serverWithKey, signed } from './helpers.js';
import { freshDatabase } from '../helpers/postgres.js';

const WHSEC = 'whsec_test_billing_secret';
const DAY = 86_400_000;

/** Posts `event` to the server's Stripe webhook, signed the way Stripe signs (the stripe package's test header). */
function stripeSender(url: string) {
  const stripe = new Stripe('sk_test_123');
  return (event: Record<string, unknown>, secret = WHSEC, headers: Record<string, string> = {}) => {
    const payload = JSON.stringify(event);
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret });
    return fetch(`${url}/v1/billing/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature, ...headers },
      body: payload,
    });
  };
}

/** A server that takes payments through Stripe (a fake Stripe API as the peer) and verifies its webhook with WHSEC, for `fn`. */
async function withStripe(fn: (s: TestServer, send: ReturnType<typeof stripeSender>) => Promise<void>): Promise<void> {
  const stripeApi = await fakeStripe();
  const s = await startTestServer({
    payments: providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripeApi.url }),
    stripeWebhookSecret: WHSEC,
  });
  try {
    await fn(s, stripeSender(s.url));
  } finally {
    await s.stop();
    await stripeApi.close();
  }
}

/** A Stripe event as its webhook sends it. */
const event = (type: string, object: Record<string, unknown>) => ({
  id: `evt_${type}`,
  object: 'event',
  type,
  api_version: '2024-06-20',
  created: Math.floor(Date.now() / 1000),
  data: { object },
});

const me = async (s: TestServer, token: string) => (await s.call('GET', '/v1/auth/me', { token })).body.tenant.plan as string;

test('one catalogue: every tenant plan is granted by exactly one plan or tier, with its limits; a file that breaks this fails at start', () => {
  const cat = loadPlans();
  const rules = tenantPlans(cat);
  assert.deepEqual(
    PLANS.map((p) => rules.limits(p).servers),
    [1, 3, 10, 50, null],
  );
  assert.deepEqual(rules.limits('trial'), { servers: 1, widgets: 1, linesPerMonth: 5000 });
  assert.equal(cat.plans.find((p) => p.id === 'trial')!.trialDays, 14);
  const dup = structuredClone(cat);
  dup.plans[1]!.tiers![0]!.grants = 'pro';
  assert.throws(() => checkPlans(dup), /grants pro, which .* grants already/);
  const gap = structuredClone(cat);
  gap.plans.pop();
  assert.throws(() => checkPlans(gap), /no plan grants enterprise/);
  const bad = structuredClone(cat);
  (bad.plans[0]!.limits as unknown as Record<string, unknown>).widgets = -1;
  assert.throws(() => checkPlans(bad), /limits\.widgets must be a non-negative integer or null/);
});

test('checkout takes {plan} or {tier} (or the tenant plan it grants); the offline link completes it and grants the plan, so agency can be bought', async () => {
  const s = await startTestServer();
  try {
    const t = await tenantSession(s, 'trial');
    assert.equal((await s.call('POST', '/v1/api-keys', { token: t.token, body: { name: 'k' } })).body.error.code, 'plan_required');
    const small = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { tier: 'small' } });
    assert.equal(small.status, 201, JSON.stringify(small.body));
    assert.deepEqual([small.body.plan, small.body.tier, small.body.grants, small.body.amountUsd], ['cloud', 'small', 'starter', 29]);
    const agency = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'agency' } });
    assert.deepEqual([agency.body.plan, agency.body.tier, agency.body.grants], ['cloud', 'large', 'agency']);
    assert.equal((await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'enterprise' } })).body.plan, 'self-host');
    for (const [body, path] of [
      [{ tier: 'huge' }, 'tier'],
      [{ plan: 'agency', tier: 'small' }, 'tier'],
      [{ plan: 'gold' }, 'plan'],
      [{}, 'plan'],
    ] as const) {
      const r = await s.call('POST', '/v1/billing/checkout', { token: t.token, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal(r.body.error.details[0].path, path);
    }
    assert.equal(await me(s, t.token), 'trial', 'an open checkout grants nothing');
    const done = await fetch(agency.body.url, { method: 'POST' });
    assert.equal(done.status, 200);
    assert.equal(((await done.json()) as { status: string }).status, 'complete');
    assert.equal(await me(s, t.token), 'agency');
    assert.equal((await s.call('GET', `/v1/billing/checkout/${agency.body.id}`, { token: t.token })).body.status, 'complete');
    assert.equal((await s.call('POST', '/v1/api-keys', { token: t.token, body: { name: 'k' } })).status, 201, 'the bought plan opens the property-video API');
    // The other open session stays open until its own link is opened.
    assert.equal((await s.call('GET', `/v1/billing/checkout/${small.body.id}`, { token: t.token })).body.status, 'open');
  } finally {
    await s.stop();
  }
});

test('Stripe: POST /v1/billing/stripe/webhook verifies checkout.session.completed with the stripe package and grants the plan; bad signatures are 400', () =>
  withStripe(async (s, send) => {
    const t = await tenantSession(s, 'trial');
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { tier: 'large' } });
    assert.equal(c.status, 201);
    const sessionId = c.body.url.split('/').at(-1);
    const forged = await send(event('checkout.session.completed', { id: sessionId, object: 'checkout.session', payment_status: 'paid' }), 'whsec_wrong');
    assert.equal(forged.status, 400);
    assert.equal(((await forged.json()) as { error: { code: string } }).error.code, 'bad_request');
    const unsigned = await fetch(`${s.url}/v1/billing/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unsigned.status, 400);
    assert.equal(await me(s, t.token), 'trial', 'a forged event changes nothing');
    const unpaid = await send(event('checkout.session.completed', { id: sessionId, object: 'checkout.session', payment_status: 'unpaid' }));
    assert.deepEqual(await unpaid.json(), { received: true, handled: false });
    assert.equal(await me(s, t.token), 'trial', 'a delayed payment is not a sale yet');
    const unknown = await send(event('checkout.session.completed', { id: 'cs_other_system', object: 'checkout.session', payment_status: 'paid' }));
    assert.deepEqual(await unknown.json(), { received: true, handled: false });
    const paid = await send(event('checkout.session.completed', { id: sessionId, object: 'checkout.session', payment_status: 'paid' }));
    assert.equal(paid.status, 200);
    assert.deepEqual(await paid.json(), { received: true, handled: true });
    assert.equal(await me(s, t.token), 'agency');
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: t.token })).body.status, 'complete');
    assert.equal((await send(event('customer.created', { id: 'cus_1', object: 'customer' }))).status, 200);
  }));

test('Stripe events of two checkouts out of order: the plan bought last stays (an older session paid after a newer one grants nothing)', () =>
  withStripe(async (s, send) => {
    const t = await tenantSession(s, 'trial');
    const older = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'pro' } });
    const newer = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'agency' } });
    assert.equal(older.status, 201);
    assert.equal(newer.status, 201);
    const sessionOf = (c: { body: { url: string } }) => c.body.url.split('/').at(-1);
    assert.equal((await send(event('checkout.session.completed', { id: sessionOf(newer), object: 'checkout.session', payment_status: 'paid' }))).status, 200);
    assert.equal(await me(s, t.token), 'agency');
    // The older one's bank debit settles afterwards: recorded as paid, its plan not granted over the newer.
    assert.equal((await send(event('checkout.session.async_payment_succeeded', { id: sessionOf(older), object: 'checkout.session' }))).status, 200);
    assert.equal(await me(s, t.token), 'agency');
    assert.equal((await s.call('GET', `/v1/billing/checkout/${older.body.id}`, { token: t.token })).body.status, 'complete');
  }));

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: checkouts completed out of order (offline links): the plan of the checkout started last stays`, async () => {
    const s = await startTestServer(backend === 'postgres' ? { database: { kind: 'postgres', url: await freshDatabase() } } : {});
    try {
      const t = await tenantSession(s, 'trial');
      const older = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'agency' } });
      const newer = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'pro' } });
      assert.equal((await fetch(newer.body.url, { method: 'POST' })).status, 200);
      assert.equal((await fetch(older.body.url, { method: 'POST' })).status, 200);
      assert.equal(await me(s, t.token), 'pro');
    } finally {
      await s.stop();
    }
  });
}

test("a paid Stripe event whose plan grant fails leaves the session open, and Stripe's retry grants the plan (it was marked complete first, and the plan never came)", () =>
  withStripe(async (s, send) => {
    const db = new Database(join(s.dir, 'test.db'));
    try {
      const t = await tenantSession(s, 'trial');
      const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { tier: 'large' } });
      const paid = event('checkout.session.completed', { id: c.body.url.split('/').at(-1), object: 'checkout.session', payment_status: 'paid' });
      // The tenant's plan cannot be written at the moment of the grant (a real database failure, as a full disk would give).
      db.exec(`CREATE TRIGGER no_plan_change BEFORE UPDATE OF plan ON tenants BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
      const failed = await send(paid);
      assert.equal(failed.status, 500);
      assert.equal(((await failed.json()) as { error: { code: string } }).error.code, 'internal');
      assert.equal(await me(s, t.token), 'trial');
      assert.equal(
        (await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: t.token })).body.status,
        'open',
        'a session whose plan was not granted is not complete',
      );
      db.exec('DROP TRIGGER no_plan_change');
      const retry = await send(paid);
      assert.equal(retry.status, 200);
      assert.deepEqual(await retry.json(), { received: true, handled: true });
      assert.equal(await me(s, t.token), 'agency');
      assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: t.token })).body.status, 'complete');
    } finally {
      db.close();
    }
  }));

test('Stripe webhook, hostile: duplicates, a late expiry, an old signature, signed bodies that are not events, a huge body, a wrong method: never a 5xx, the plan granted once', () =>
  withStripe(async (s, send) => {
    const stripe = new Stripe('sk_test_123');
    const signedRaw = (payload: string, extra: { timestamp?: number } = {}) =>
      fetch(`${s.url}/v1/billing/stripe/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: WHSEC, ...extra }) },
        body: payload,
      });
    const refused = async (r: Response, status: number, code: string) => {
      assert.equal(r.status, status);
      const body = (await r.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
      return body.error.message;
    };
    const t = await tenantSession(s, 'trial');
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { tier: 'large' } });
    const sessionId = c.body.url.split('/').at(-1);
    const paid = event('checkout.session.completed', { id: sessionId, object: 'checkout.session', payment_status: 'paid' });

    // Signed with the right secret ten minutes ago (a captured event replayed later).
    const old = JSON.stringify(paid);
    await refused(await signedRaw(old, { timestamp: Math.floor(Date.now() / 1000) - 600 }), 400, 'bad_request');
    // Signed, but not an event billing can read.
    await refused(await signedRaw('not json'), 400, 'bad_request');
    assert.match(await refused(await signedRaw('{}'), 400, 'bad_request'), /no type/);
    assert.match(await refused(await signedRaw('[1,2]'), 400, 'bad_request'), /no type/);
    assert.match(await refused(await signedRaw('null'), 400, 'bad_request'), /no type/);
    for (const data of [undefined, null, {}, { object: null }, { object: { id: 42 } }, { object: [] }]) {
      const body = JSON.stringify({ ...event('checkout.session.completed', {}), data });
      assert.match(await refused(await signedRaw(body), 400, 'bad_request'), /no data\.object\.id/, `data ${JSON.stringify(data)}`);
    }
    await refused(await send(paid, WHSEC, { 'stripe-signature': 't=abc,v1=zz' }), 400, 'bad_request');
    const huge = await fetch(`${s.url}/v1/billing/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: 'x'.repeat(STRIPE_WEBHOOK_MAX_BODY + 1),
    });
    await refused(huge, 413, 'payload_too_large');
    await refused(await fetch(`${s.url}/v1/billing/stripe/webhook`), 405, 'method_not_allowed');
    assert.equal(await me(s, t.token), 'trial', 'nothing refused changed the plan');
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: t.token })).body.status, 'open');

    assert.deepEqual(await (await send(paid)).json(), { received: true, handled: true });
    assert.equal(await me(s, t.token), 'agency');
    // The admin moves the tenant to another plan; Stripe then delivers the same event again, and a late expiry.
    assert.equal((await s.call('PATCH', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN, body: { plan: 'pro' } })).status, 200);
    assert.equal((await send(paid)).status, 200);
    assert.equal((await send(event('checkout.session.async_payment_succeeded', { id: sessionId, object: 'checkout.session' }))).status, 200);
    assert.equal((await send(event('checkout.session.expired', { id: sessionId, object: 'checkout.session' }))).status, 200);
    assert.equal(await me(s, t.token), 'pro', 'a repeated event grants nothing again');
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: t.token })).body.status, 'complete', 'a late expiry does not undo a sale');
  }));

// The issue: an offline checkout link left open from before Stripe was configured still
// completed, and granted its plan for nothing, on the server that now takes payments through Stripe.
test('an offline checkout link left open from before Stripe was configured is 409 and grants nothing on the Stripe server', async () => {
  const dir = tempDir();
  const db = join(dir.path, 'switch.db');
  const stripeApi = await fakeStripe();
  let s = await startTestServer({ db });
  try {
    const t = await tenantSession(s, 'trial');
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'self-host' } });
    assert.equal(c.body.provider, 'offline');
    const link = new URL(c.body.url).pathname;
    await s.stop();
    s = await startTestServer({ db, payments: providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripeApi.url }) });
    const login = await s.call('POST', '/v1/auth/login', { body: { email: t.email, password: 'correct horse battery' } });
    const opened = await s.call('GET', link);
    assert.equal(opened.status, 409);
    assert.equal(opened.body.error.code, 'conflict');
    assert.match(opened.body.error.message, /takes payments through stripe/);
    assert.equal(await me(s, login.body.token), 'trial');
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: login.body.token })).body.status, 'open');
  } finally {
    await s.stop();
    await stripeApi.close();
    dir.dispose();
  }
});

test('Stripe webhook without STRIPE_WEBHOOK_SECRET is 404; polling still completes and grants (a missed webhook)', async () => {
  const stripeApi = await fakeStripe();
  const payments = providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripeApi.url });
  const s = await startTestServer({ payments });
  try {
    const t = await tenantSession(s, 'trial');
    const r = await fetch(`${s.url}/v1/billing/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: '{}',
    });
    assert.equal(r.status, 404);
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'self-host' } });
    stripeApi.sessions.get(c.body.url.split('/').at(-1))!.status = 'complete';
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: t.token })).body.status, 'complete');
    assert.equal(await me(s, t.token), 'enterprise');
  } finally {
    await s.stop();
    await stripeApi.close();
  }
});

test('plan limits are enforced: a trial tenant gets 1 server and 1 widget, then 403 plan_limit naming the limit; a bought plan lifts it', async () => {
  const s = await startTestServer();
  try {
    const t = await tenantSession(s, 'trial');
    assert.equal((await s.call('POST', '/v1/servers', { token: t.token, body: { name: 'one' } })).status, 201);
    const second = await s.call('POST', '/v1/servers', { token: t.token, body: { name: 'two' } });
    assert.equal(second.status, 403);
    assert.equal(second.body.error.code, 'plan_limit');
    assert.match(second.body.error.message, /at most 1 server\b/);
    assert.equal((await s.call('GET', '/v1/servers', { token: t.token })).body.length, 1, 'nothing was created');
    assert.equal((await s.call('POST', '/v1/widgets', { token: t.token, body: { name: 'w1' } })).status, 201);
    const w2 = await s.call('POST', '/v1/widgets', { token: t.token, body: { name: 'w2' } });
    assert.equal(w2.status, 403);
    assert.equal(w2.body.error.code, 'plan_limit');
    assert.match(w2.body.error.message, /at most 1 widget\b/);
    await s.call('PATCH', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN, body: { plan: 'starter' } });
    assert.equal((await s.call('POST', '/v1/servers', { token: t.token, body: { name: 'two' } })).status, 201);
    const account = await s.call('GET', '/v1/billing/account', { token: t.token });
    assert.equal(account.status, 200);
    assert.deepEqual([account.body.plan, account.body.billingPlan, account.body.tier], ['starter', 'cloud', 'small']);
    assert.deepEqual(account.body.limits, { servers: 3, widgets: 3, linesPerMonth: 100000 });
    assert.deepEqual(account.body.usage, { servers: 2, widgets: 1, linesPerMonth: 0 });
    assert.equal(account.body.trial, null);
  } finally {
    await s.stop();
  }
});

test('a trial ends after its days: publishes and new keys are 403 plan_expired, reads and the sidecar go on; a bought plan resumes', async () => {
  let now = Date.parse('2026-11-01T00:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const t = await tenantSession(s, 'trial');
    const a = await serverWithKey(s, t.token);
    const head = (await s.call('GET', `/v1/servers/${a.serverId}/config`, { token: t.token })).body;
    assert.equal((await s.call('GET', '/v1/billing/account', { token: t.token })).body.trial.endsAt, '2026-11-15T00:00:00.000Z');
    now += 14 * DAY;
    // Sessions last 12 h: log in again on the day the trial ends.
    t.token = (await s.call('POST', '/v1/auth/login', { body: { email: t.email, password: 'correct horse battery' } })).body.token;
    const account = (await s.call('GET', '/v1/billing/account', { token: t.token })).body;
    assert.equal(account.trial.expired, true);
    for (const [method, path, body] of [
      ['PUT', `/v1/servers/${a.serverId}/config`, head],
      ['POST', `/v1/servers/${a.serverId}/config/rollback`, { version: 1 }],
      ['POST', `/v1/servers/${a.serverId}/keys`, undefined],
      ['POST', '/v1/widgets', { name: 'w' }],
    ] as const) {
      const r = await s.call(method, path, { token: t.token, ...(body ? { body } : {}) });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.error.code, 'plan_expired');
    }
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/config/versions`, { token: t.token })).body.length, 1, 'nothing was published');
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`, { at: now })).status, 200, 'the sidecar keeps its config');
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { tier: 'small' } });
    await fetch(c.body.url, { method: 'POST' });
    assert.equal((await s.call('PUT', `/v1/servers/${a.serverId}/config`, { token: t.token, body: head })).status, 200);
  } finally {
    await s.stop();
  }
});

test("lines over the month's quota: the next pull serves a new version with llm_dialogue off; a plan with room (or a new month) brings it back", async () => {
  let now = Date.parse('2026-11-10T12:00:00Z');
  // Several reports at one frozen instant: more than the default 2 a second per server.
  const s = await startTestServer({ now: () => now, limits: { telemetryReports: { limit: 100, windowMs: 1000 } } });
  try {
    const t = await tenantSession(s, 'trial');
    const a = await serverWithKey(s, t.token);
    const pull = (n: number, etag?: string) =>
      signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=${n}`, { at: now, ...(etag ? { headers: { 'if-none-match': etag } } : {}) });
    assert.equal((await pull(1)).headers.get('etag'), '"v1"');
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry?n=1', { at: now, body: report(a.serverId, { linesSpoken: 4999 }) })).status, 202);
    assert.equal((await pull(2, '"v1"')).status, 304, 'under the quota nothing changes');
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry?n=2', { at: now, body: report(a.serverId, { linesSpoken: 1 }) })).status, 202);
    const off = await pull(3, '"v1"');
    assert.equal(off.status, 200);
    assert.equal(off.headers.get('etag'), '"v2"');
    assert.equal(off.body.version, 2);
    assert.equal(off.body.policy.llm_dialogue, false);
    const history = (await s.call('GET', `/v1/servers/${a.serverId}/config/versions`, { token: t.token })).body;
    assert.equal(history[0].publishedBy, QUOTA_PUBLISHER);
    assert.match(history[0].note, /5000 lines this month reached the plan's 5000/);
    assert.equal((await s.call('GET', '/v1/billing/account', { token: t.token })).body.dialogueOff, true);
    // A user turning dialogue back on while over quota is held off again at the next report.
    const head = off.body;
    const on = await s.call('PUT', `/v1/servers/${a.serverId}/config`, { token: t.token, body: { ...head, policy: { ...head.policy, llm_dialogue: true } } });
    assert.equal(on.status, 200);
    await signed(s, a.key, 'POST', '/v1/telemetry?n=3', { at: now, body: report(a.serverId, { linesSpoken: 0 }) });
    assert.equal((await pull(4, '"v3"')).body.policy.llm_dialogue, false);
    // A new month: the quota is renewed and dialogue comes back with the next report.
    now = Date.parse('2026-12-01T00:00:10Z');
    await signed(s, a.key, 'POST', '/v1/telemetry?n=4', { at: now, body: report(a.serverId, { linesSpoken: 3 }) });
    const back = await pull(5, '"v4"');
    assert.equal(back.status, 200);
    assert.equal(back.body.version, 5);
    assert.equal(back.body.policy.llm_dialogue, true);
  } finally {
    await s.stop();
  }
});

test('line quota: buying a plan with room lifts the hold at once', async () => {
  const s = await startTestServer();
  try {
    const t = await tenantSession(s, 'trial');
    const a = await serverWithKey(s, t.token);
    await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { linesSpoken: 6000 }) });
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/config`, { token: t.token })).body.policy.llm_dialogue, false);
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { tier: 'small' } });
    await fetch(c.body.url, { method: 'POST' });
    const head = (await s.call('GET', `/v1/servers/${a.serverId}/config`, { token: t.token })).body;
    const before = (await s.call('GET', `/v1/servers/${a.serverId}/config/versions/1`, { token: t.token })).body.bundle;
    assert.equal(head.version, 3);
    assert.deepEqual(head.policy, before.policy, 'as before the hold');
  } finally {
    await s.stop();
  }
});
