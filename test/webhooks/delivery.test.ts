import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startReceiver } from './receiver.js';
import { LEAD, webhookServer } from './setup.js';
import { verifyWebhook } from '../../src/public/webhooks.js';

test('a delivery reaches a real receiver with the body and headers of spec 002, verifiable three ways', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post, widgetId } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['lead.captured'] });
    assert.match(ep.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const accepted = await post('lead.captured', LEAD);
    assert.equal(accepted.status, 202);
    assert.equal(accepted.body.deliveries, 1);
    assert.match(accepted.body.id, /^evt_/);
    await rx.waitFor(1);
    const r = rx.received[0]!;
    assert.equal(r.body, JSON.stringify({ event: 'lead.captured', widget_id: widgetId, data: LEAD }));
    assert.equal(r.headers['content-type'], 'application/json');
    assert.match(String(r.headers['user-agent']), /^brainstem-webhooks\/\d+\.\d+\.\d+/);
    assert.equal(r.headers['x-service-event'], 'lead.captured');
    assert.match(String(r.headers['x-service-delivery']), /^dlv_/);
    assert.equal(r.headers['webhook-id'], r.headers['x-service-delivery']);
    assert.match(String(r.headers['x-service-timestamp']), /^\d{10}$/);
    // Independently, with node:crypto: hex HMAC of the raw body keyed with the secret as shown.
    const hex = createHmac('sha256', ep.secret).update(r.body).digest('hex');
    assert.equal(r.headers['x-service-signature'], `v1=${hex}`);
    const key = Buffer.from(ep.secret.slice('whsec_'.length), 'base64');
    const b64 = createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
    assert.equal(r.headers['webhook-signature'], `v1,${b64}`);
    // With the standardwebhooks package, as a receiver would.
    const payload = new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>);
    assert.deepEqual(payload, { event: 'lead.captured', widget_id: widgetId, data: LEAD });
    // With our own receiver tool.
    const v = verifyWebhook(r.body, r.headers as Record<string, string>, ep.secret);
    assert.equal(v.ok, true);
    const tampered = verifyWebhook(r.body.replace('true', 'false'), r.headers as Record<string, string>, ep.secret);
    assert.equal(tampered.ok, false);
    assert.equal(verifyWebhook(r.body, r.headers as Record<string, string>, 'whsec_' + Buffer.alloc(32, 1).toString('base64')).ok, false);
  } finally {
    await s.stop();
    await rx.close();
  }
});
