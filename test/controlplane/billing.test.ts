import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { loadPlans } from '../../src/controlplane/billing/plans.js';
import { providerFromEnv, StripeProvider } from '../../src/controlplane/billing/provider.js';
import { fakeStripe } from './fake-stripe.js';

test('GET /v1/billing/plans lists cloud, self-host and trial with prices from the plans file', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const r = await s.call('GET', '/v1/billing/plans', { token });
    assert.equal(r.status, 200);
    assert.equal(r.body.currency, 'usd');
    assert.deepEqual(r.body.plans.map((p: { id: string }) => p.id).sort(), ['cloud', 'self-host', 'trial']);
    assert.deepEqual(r.body, loadPlans());
    const cloud: any = r.body.plans.find((p: any) => p.id === 'cloud');
    assert.ok(cloud.tiers.every((t: any) => t.priceUsd > 0));
    assert.equal((await s.call('GET', '/v1/billing/plans')).status, 401);
  } finally {
    await s.stop();
  }
});

test('offline checkout: 201 persisted session; its URL completes it; another tenant sees 404; bad plans are 422', async () => {
  const s = await startTestServer();
  try {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    const c = await s.call('POST', '/v1/billing/checkout', { token: a.token, body: { plan: 'cloud', tier: 'medium' } });
    assert.equal(c.status, 201);
    assert.equal(c.body.status, 'open');
    assert.equal(c.body.provider, 'offline');
    assert.equal(c.body.amountUsd, 99);
    assert.equal(c.body.interval, 'month');
    assert.ok(c.body.url.startsWith(`${s.url}/v1/billing/offline/off_`), c.body.url);
    assert.equal((await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: b.token })).status, 404);
    const done = await fetch(c.body.url, { method: 'POST' });
    assert.equal(done.status, 200);
    const after = await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token: a.token });
    assert.equal(after.body.status, 'complete');
    assert.ok(after.body.completedAt);
    assert.equal((await fetch(`${s.url}/v1/billing/offline/off_guess/complete`)).status, 404);
    const selfHost = await s.call('POST', '/v1/billing/checkout', { token: a.token, body: { plan: 'self-host' } });
    assert.equal(selfHost.body.amountUsd, 490);
    for (const [body, path] of [
      [{ plan: 'gold' }, 'plan'],
      [{ plan: 'cloud' }, 'tier'],
      [{ plan: 'cloud', tier: 'huge' }, 'tier'],
      [{ plan: 'self-host', tier: 'small' }, 'tier'],
      [{ plan: 'trial' }, 'plan'],
      [{}, 'plan'],
    ] as const) {
      const r = await s.call('POST', '/v1/billing/checkout', { token: a.token, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal(r.body.error.details[0].path, path);
    }
  } finally {
    await s.stop();
  }
});

test('Stripe checkout through the official SDK against a local Stripe wire double (STRIPE_SECRET_KEY, STRIPE_API_BASE)', async () => {
  const stripe = await fakeStripe();
  const payments = providerFromEnv({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_API_BASE: stripe.url });
  assert.ok(payments instanceof StripeProvider);
  const s = await startTestServer({ payments });
  try {
    const { token, tenantId } = await tenantSession(s);
    const c = await s.call('POST', '/v1/billing/checkout', { token, body: { plan: 'cloud', tier: 'small' } });
    assert.equal(c.status, 201);
    assert.equal(c.body.provider, 'stripe');
    assert.equal(c.body.url, 'https://checkout.stripe.test/c/pay/cs_test_1');
    assert.equal(c.body.status, 'open');
    const call = stripe.seen[0]!;
    assert.equal(call.auth, 'Bearer sk_test_123');
    assert.equal(call.form.get('mode'), 'subscription');
    assert.equal(call.form.get('client_reference_id'), String(tenantId));
    assert.equal(call.form.get('line_items[0][price_data][unit_amount]'), '2900');
    assert.equal(call.form.get('line_items[0][price_data][currency]'), 'usd');
    assert.equal(call.form.get('line_items[0][price_data][recurring][interval]'), 'month');
    assert.equal(call.form.get('metadata[plan]'), 'cloud');
    assert.ok(call.form.get('success_url')?.startsWith(s.url));
    // Completion at Stripe shows on the next read.
    stripe.sessions.get('cs_test_1')!.status = 'complete';
    const after = await s.call('GET', `/v1/billing/checkout/${c.body.id}`, { token });
    assert.equal(after.body.status, 'complete');
    const oneOff = await s.call('POST', '/v1/billing/checkout', { token, body: { plan: 'self-host' } });
    assert.equal(oneOff.status, 201);
    assert.equal(stripe.seen.at(-1)!.form.get('line_items[0][price_data][recurring][interval]'), 'year');
  } finally {
    await s.stop();
    await stripe.close();
  }
});

test('a failing payment provider is 503 unavailable, and nothing is persisted', async () => {
  const payments = new StripeProvider({ secretKey: 'sk_test_x', apiBase: 'http://127.0.0.1:1' });
  const s = await startTestServer({ payments });
  try {
    const { token } = await tenantSession(s);
    const r = await s.call('POST', '/v1/billing/checkout', { token, body: { plan: 'self-host' } });
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, 'unavailable');
    assert.equal((await s.call('GET', '/v1/billing/checkout/1', { token })).status, 404);
  } finally {
    await s.stop();
  }
});
