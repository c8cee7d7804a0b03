import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { standardKey } from '../../src/signing/webhook.js';
import { startReceiver } from './receiver.js';
import { LEAD, webhookServer } from './setup.js';

const KEY = Buffer.alloc(32, 7);
const PADDED = `whsec_${KEY.toString('base64')}`;
const UNPADDED = PADDED.replace(/=+$/, '');

/**
 * Regression: a secret is any well-formed string of 1–4096 characters. `whsec_` alone, unpadded
 * base64, base64url and `whsec_` + any text were refused with 422; a lone surrogate was stored
 * as U+FFFD, so deliveries were signed with a key its owner did not have.
 */
test('every form of secret is accepted; whsec_ + base64 (padded or not) keys Standard Webhooks with the decoded bytes, any other with its UTF-8 bytes', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post } = await webhookServer();
  try {
    const forms = [PADDED, UNPADDED, 'whsec_', 'whsec_***', 'whsec_AAAA-_-_', `whsec_${KEY.toString('base64url')}`, 'ünïcødé 🔑 secret', 'x'];
    for (const [i, secret] of forms.entries()) await addEndpoint({ url: `${rx.url}/ep${i}`, secret, events: ['lead.captured'] });
    assert.equal((await post('lead.captured', LEAD)).status, 202);
    await rx.waitFor(forms.length);
    for (const [i, secret] of forms.entries()) {
      const got = rx.received.find((r) => r.path.endsWith(`/ep${i}`));
      assert.ok(got, `${i} in ${rx.received.map((r) => r.path)}`);
      assert.equal(got.headers['x-service-signature'], `v1=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(got.body).digest('hex')}`, secret);
      const decoded = secret === PADDED || secret === UNPADDED;
      assert.deepEqual(standardKey(secret), decoded ? KEY : Buffer.from(secret, 'utf8'), secret);
      const headers = {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      };
      // The Standard Webhooks library itself: a whsec_ + base64 secret as given, any other as raw bytes.
      const receiver = decoded ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
      assert.deepEqual(receiver.verify(got.body, headers), JSON.parse(got.body), secret);
    }
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('a secret with a lone surrogate is 422 on create and on PATCH, and changes nothing; 4096 code points pass, 4097 do not', async () => {
  const { s, token, widgetId, addEndpoint } = await webhookServer();
  try {
    const base = `/v1/widgets/${widgetId}/webhooks`;
    const url = 'http://127.0.0.1:9/hook';
    for (const secret of ['abc\ud800', '\udc00', 'x\udbff\udbffy']) {
      const r = await s.call('POST', base, { token, body: { url, secret, events: ['lead.captured'] } });
      assert.equal(r.status, 422, JSON.stringify(secret));
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        ['secret'],
      );
    }
    assert.deepEqual((await s.call('GET', base, { token })).body, []);
    const ep = await addEndpoint({ url, secret: 'kept', events: ['lead.captured'] });
    const patch = await s.call('PATCH', `${base}/${ep.id}`, { token, body: { secret: '\ud83d', enabled: false } });
    assert.equal(patch.status, 422);
    assert.equal((await s.call('GET', `${base}/${ep.id}`, { token })).body.enabled, true, 'a refused PATCH changes nothing');
    assert.equal((await s.call('POST', base, { token, body: { url, secret: '🔑'.repeat(4096), events: ['lead.captured'] } })).status, 201);
    assert.equal((await s.call('POST', base, { token, body: { url, secret: '🔑'.repeat(4097), events: ['lead.captured'] } })).status, 422);
  } finally {
    await s.stop();
  }
});
