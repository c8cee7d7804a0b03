import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startReceiver } from './receiver.js';
import { LEAD, testClock, webhookServer } from './setup.js';
import { verifyWebhook } from '../../src/public/webhooks.js';

test('after a rotation the old secret keeps verifying for 24 h, then only the new one does', async () => {
  const rx = await startReceiver();
  const clock = testClock();
  const { s, token, widgetId, addEndpoint } = await webhookServer({ now: clock.now });
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['lead.captured'] });
    const rotated = await s.call('POST', `/v1/widgets/${widgetId}/webhooks/${ep.id}/rotate-secret`, { token });
    assert.equal(rotated.status, 200);
    const fresh = rotated.body.secret as string;
    assert.match(fresh, /^whsec_/);
    assert.notEqual(fresh, ep.secret);
    assert.equal(rotated.body.previous_secret_expires_at, new Date(clock.now() + 86_400_000).toISOString());
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token })).body.secret, undefined, 'shown once');

    await s.webhooks.service.emit(widgetId, 'lead.captured', LEAD);
    await s.webhooks.dispatcher.runDue();
    const r1 = rx.received[0]!;
    const h1 = r1.headers as Record<string, string>;
    assert.equal(h1['webhook-signature']!.split(' ').length, 2);
    assert.equal(h1['x-service-signature'], `v1=${createHmac('sha256', fresh).update(r1.body).digest('hex')}`);
    assert.ok(new Webhook(fresh).verify(r1.body, h1));
    assert.ok(new Webhook(ep.secret).verify(r1.body, h1), 'old secret verifies during the overlap');
    assert.equal(verifyWebhook(r1.body, h1, ep.secret, { now: clock.now }).ok, true);
    assert.equal(verifyWebhook(r1.body, h1, fresh, { now: clock.now }).ok, true);

    clock.advance(86_400_000 - 1_000);
    await s.webhooks.service.emit(widgetId, 'lead.captured', LEAD);
    await s.webhooks.dispatcher.runDue();
    assert.equal(
      verifyWebhook(rx.received[1]!.body, rx.received[1]!.headers as Record<string, string>, ep.secret, { now: clock.now }).ok,
      true,
      'still inside 24 h',
    );

    clock.advance(1_000);
    await s.webhooks.service.emit(widgetId, 'lead.captured', LEAD);
    await s.webhooks.dispatcher.runDue();
    const r3 = rx.received[2]!;
    const h3 = r3.headers as Record<string, string>;
    assert.equal(h3['webhook-signature']!.split(' ').length, 1);
    const old = verifyWebhook(r3.body, h3, ep.secret, { now: clock.now });
    assert.equal(old.ok, false);
    assert.equal(verifyWebhook(r3.body, h3, fresh, { now: clock.now }).ok, true);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('a user-provided secret signs X-Service-Signature as given and keys Standard Webhooks with its UTF-8 bytes', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post } = await webhookServer();
  try {
    const secret = 'my shared secret ü';
    const ep = await addEndpoint({ url: rx.url, events: ['lead.captured'], secret });
    assert.equal(ep.secret, secret);
    await post('lead.captured', LEAD);
    await rx.waitFor(1);
    const r = rx.received[0]!;
    assert.equal(r.headers['x-service-signature'], `v1=${createHmac('sha256', secret).update(r.body).digest('hex')}`);
    assert.ok(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(r.body, r.headers as Record<string, string>));
    assert.equal(verifyWebhook(r.body, r.headers as Record<string, string>, secret).ok, true);
    // Without the Standard Webhooks headers the delivery is refused, unless the receiver accepts X-Service-Signature alone.
    const spec = { 'x-service-signature': String(r.headers['x-service-signature']) };
    assert.equal(verifyWebhook(r.body, spec, secret).ok, false);
    assert.equal(verifyWebhook(r.body, spec, secret, { requireTimestamp: true }).ok, false);
    assert.equal(verifyWebhook(r.body, spec, secret, { requireTimestamp: false }).ok, true);
    assert.equal(
      verifyWebhook(r.body, { ...(r.headers as Record<string, string>), 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 301) }, secret).ok,
      false,
    );
  } finally {
    await s.stop();
    await rx.close();
  }
});
