import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startReceiver } from './receiver.js';
import { LEAD, webhookServer } from './setup.js';

/**
 * DESIGN lists `{url, secret?, events[], enabled}` for PATCH of an endpoint too, but a PATCH
 * carrying `secret` was a 422. It now sets the signing secret (as a rotation to that value).
 */
test('PATCH of an endpoint sets its secret (≤ 4096): later deliveries are signed with it', async () => {
  const rx = await startReceiver();
  const { s, token, widgetId, addEndpoint } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, secret: 'first secret', events: ['lead.captured'] });
    const path = `/v1/widgets/${widgetId}/webhooks/${ep.id}`;
    const tooLong = await s.call('PATCH', path, { token, body: { secret: 's'.repeat(4097) } });
    assert.equal(tooLong.status, 422);
    assert.deepEqual(
      tooLong.body.error.details.map((d: { path: string }) => d.path),
      ['secret'],
    );
    const patched = await s.call('PATCH', path, { token, body: { secret: 'second secret', enabled: true } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.secret, undefined, 'a secret is never echoed back');
    assert.equal(patched.body.enabled, true);

    await s.webhooks.service.emit(widgetId, 'lead.captured', LEAD);
    await s.webhooks.dispatcher.runDue();
    const got = rx.received[0]!;
    assert.equal(got.headers['x-service-signature'], `v1=${createHmac('sha256', 'second secret').update(got.body).digest('hex')}`);
  } finally {
    await s.stop();
    await rx.close();
  }
});
