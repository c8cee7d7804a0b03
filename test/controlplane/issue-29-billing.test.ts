import { test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { OfflineProvider, providerFromEnv } from '../../src/controlplane/billing/provider.js';
import { stripeHeaderProblem } from '../../src/controlplane/billing/stripe-webhook.js';
import { fakeStripe } from './fake-stripe.js';

const me = async (s: TestServer, token: string) => (await s.call('GET', '/v1/auth/me', { token })).body.tenant.plan as string;

// Issue 29: on a server without Stripe, a trial tenant became enterprise in two requests
// (checkout, then GET the link), and that GET changed state without any credential.
test('issue 29: the offline provider is the default on a loopback server only; elsewhere without Stripe a checkout is 409 billing_not_configured', async () => {
  assert.ok(providerFromEnv({}, undefined, true) instanceof OfflineProvider);
  assert.equal(providerFromEnv({}, undefined, false), null);
  assert.ok(providerFromEnv({}, 'offline', false) instanceof OfflineProvider);
  assert.throws(() => providerFromEnv({}, 'stripe', true), /STRIPE_SECRET_KEY/);
  const open = await startTestServer({ host: '0.0.0.0', insecureHttp: true });
  try {
    const t = await tenantSession(open, 'trial');
    const c = await open.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'cloud', tier: 'large' } });
    assert.equal(c.status, 409);
    assert.equal(c.body.error.code, 'billing_not_configured');
    assert.match(c.body.error.message, /--billing offline/);
    assert.equal(await me(open, t.token), 'trial');
  } finally {
    await open.stop();
  }
  const explicit = await startTestServer({ host: '0.0.0.0', insecureHttp: true, billing: 'offline' });
  try {
    const t = await tenantSession(explicit, 'trial');
    const c = await explicit.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'self-host' } });
    assert.equal(c.status, 201);
    assert.equal(c.body.provider, 'offline');
  } finally {
    await explicit.stop();
  }
});

test("issue 29: the offline link's GET changes nothing (a page with a button); its POST completes, and a session sent along must be the tenant's", async () => {
  const s = await startTestServer();
  try {
    const a = await tenantSession(s, 'trial');
    const b = await tenantSession(s, 'trial');
    const c = await s.call('POST', '/v1/billing/checkout', { token: a.token, body: { plan: 'self-host' } });
    assert.equal(c.status, 201);
    for (let i = 0; i < 3; i++) {
      const page = await fetch(c.body.url);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      const html = await page.text();
      assert.match(html, /<form method="post">/);
      assert.match(html, /self-host/);
    }
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: a.token })).body.status, 'open');
    assert.equal(await me(s, a.token), 'trial');
    // Another tenant's session cannot complete it, even with the link.
    const other = await fetch(c.body.url, { method: 'POST', headers: { authorization: `Bearer ${b.token}` } });
    assert.equal(other.status, 404);
    assert.equal(await me(s, a.token), 'trial');
    const done = await fetch(c.body.url, { method: 'POST', headers: { authorization: `Bearer ${a.token}` } });
    assert.equal(done.status, 200);
    assert.equal(((await done.json()) as { status: string }).status, 'complete');
    assert.equal(await me(s, a.token), 'enterprise');
    assert.equal((await fetch(new URL('/v1/billing/offline/off_guess/complete', s.url), { method: 'POST' })).status, 404);
  } finally {
    await s.stop();
  }
});

// Issue 29: Stripe events dated in the future (now + 400 s, now + 10 years) were accepted.
test('issue 29: a signed Stripe event dated more than 300 s in the future is refused like an old one, and grants nothing', async () => {
  const now = Date.now();
  const sec = Math.floor(now / 1000);
  const sig = (t: number) => `t=${t},v1=${'ab'.repeat(32)}`;
  assert.equal(stripeHeaderProblem(sig(sec), now), null);
  assert.equal(stripeHeaderProblem(sig(sec + 300), now), null);
  assert.match(stripeHeaderProblem(sig(sec + 301), now)!, /future/);
  assert.match(stripeHeaderProblem(sig(sec - 301), now)!, /old/);
  assert.match(stripeHeaderProblem('t=abc,v1=zz', now)!, /must carry/);

  const WHSEC = 'whsec_issue29';
  const stripeApi = await fakeStripe();
  const s = await startTestServer({
    payments: providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripeApi.url }),
    stripeWebhookSecret: WHSEC,
  });
  try {
    const stripe = new Stripe('sk_test_123');
    const t = await tenantSession(s, 'trial');
    const c = await s.call('POST', '/v1/billing/checkout', { token: t.token, body: { plan: 'self-host' } });
    const payload = JSON.stringify({
      id: 'evt_future',
      object: 'event',
      type: 'checkout.session.completed',
      created: sec,
      data: { object: { id: c.body.url.split('/').at(-1), object: 'checkout.session', payment_status: 'paid' } },
    });
    const send = (timestamp: number) =>
      fetch(`${s.url}/v1/billing/stripe/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: WHSEC, timestamp }) },
        body: payload,
      });
    for (const ahead of [400, 10 * 365 * 86_400]) {
      const r = await send(sec + ahead);
      assert.equal(r.status, 400, `dated ${ahead} s ahead`);
      const body = (await r.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'bad_request');
      assert.match(body.error.message, /future/);
      assert.equal(await me(s, t.token), 'trial');
    }
    assert.equal((await send(sec)).status, 200);
    assert.equal(await me(s, t.token), 'enterprise');
  } finally {
    await s.stop();
    await stripeApi.close();
  }
});
