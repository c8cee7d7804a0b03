import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ed from '@noble/ed25519';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Received } from './receiver.js';
import { testClock, webhookServer } from './setup.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { verifyServiceSignature } from '../../src/signing/webhook.js';
import { verifyWebhook, verifyWebhookV1a } from '../../src/public/webhooks.js';

/** Verifies every `v1a,` signature of a delivery with @noble/ed25519 (not node:crypto, which signs); answers the kids that verified. */
async function nobleVerified(r: Received, jwks: { keys: { kid: string; x: string }[] }): Promise<string[]> {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const message = new TextEncoder().encode(`${id}.${ts}.${r.body}`);
  const out: string[] = [];
  for (const part of String(r.headers['webhook-signature']).split(' ')) {
    const [version, b64] = part.split(',');
    if (version !== 'v1a') continue;
    for (const k of jwks.keys) {
      if (await ed.verifyAsync(Buffer.from(b64!, 'base64'), message, Buffer.from(k.x, 'base64url'))) out.push(k.kid);
    }
  }
  return out;
}

const versions = (r: Received) =>
  String(r.headers['webhook-signature'])
    .split(' ')
    .map((p) => p.split(',')[0]);

test('v1a: ed25519 signatures verified by @noble/ed25519 with the JWKS; X-Service-Signature stays HMAC; hmac, v1a and both schemes', async () => {
  const rx = await startReceiver();
  const { s, addEndpoint, post } = await webhookServer();
  try {
    const hmac = await addEndpoint({ url: rx.url, events: ['conversation.started'] });
    const v1a = await addEndpoint({ url: `${rx.url}?v1a`, events: ['conversation.started'], signature_scheme: 'v1a' });
    const both = await addEndpoint({ url: `${rx.url}?both`, events: ['conversation.started'], signature_scheme: 'both' });
    assert.equal((v1a as any).signature_scheme, 'v1a');
    const keys = await s.call('GET', '/v1/webhooks/keys');
    assert.equal(keys.status, 200, 'the JWKS is public');
    assert.equal(keys.body.keys.length, 1);
    const [jwk] = keys.body.keys;
    assert.equal(jwk.kty, 'OKP');
    assert.equal(jwk.crv, 'Ed25519');
    assert.equal(jwk.alg, 'EdDSA');
    assert.match(jwk.kid, /^whk_/);
    assert.equal(jwk.whpk, `whpk_${Buffer.from(jwk.x, 'base64url').toString('base64')}`);

    await post('conversation.started', { conversation_id: 'ses_v1a' });
    await s.webhooks.dispatcher.runDue();
    await rx.waitFor(3);
    const by = (suffix: string) => rx.received.find((r) => r.path === `/hook${suffix}`)!;
    for (const [r, secret] of [
      [by(''), hmac.secret],
      [by('?v1a'), v1a.secret],
      [by('?both'), both.secret],
    ] as const) {
      assert.ok(
        verifyServiceSignature(r.body, String(r.headers['x-service-signature']), secret),
        'X-Service-Signature is HMAC with the endpoint secret, whatever the scheme',
      );
    }
    assert.deepEqual(versions(by('')), ['v1']);
    assert.deepEqual(versions(by('?v1a')), ['v1a']);
    assert.deepEqual(versions(by('?both')).sort(), ['v1', 'v1a']);
    assert.deepEqual(await nobleVerified(by(''), keys.body), []);
    assert.deepEqual(await nobleVerified(by('?v1a'), keys.body), [jwk.kid]);
    assert.deepEqual(await nobleVerified(by('?both'), keys.body), [jwk.kid]);
    // The official library (1.x verifies v1 only; it skips the v1a entry of a `both` delivery).
    assert.doesNotThrow(() => new Webhook(both.secret).verify(by('?both').body, by('?both').headers as Record<string, string>));
    assert.throws(() => new Webhook(v1a.secret).verify(by('?v1a').body, by('?v1a').headers as Record<string, string>), /No matching signature/);
    // Our own receiver helper, with the JWKS or the whpk_ form.
    assert.equal(verifyWebhookV1a(by('?v1a').body, by('?v1a').headers, keys.body).ok, true);
    assert.equal(verifyWebhookV1a(by('?both').body, by('?both').headers, jwk.whpk).ok, true);
    assert.equal(verifyWebhookV1a(`${by('?v1a').body} `, by('?v1a').headers, keys.body).ok, false, 'a changed body fails');
    assert.equal(verifyWebhookV1a(by('').body, by('').headers, keys.body).ok, false, 'an hmac delivery carries no v1a signature');
    const hmacOnly = verifyWebhook(by('?v1a').body, by('?v1a').headers, v1a.secret);
    assert.equal(hmacOnly.ok, false);
    assert.match(hmacOnly.ok ? '' : hmacOnly.message, /only v1a .*verifyWebhookV1a/, 'the HMAC verifier says where to look');
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('v1a key rotation: both keys served and signing during the overlap, the old one gone after it; admin only', async () => {
  const rx = await startReceiver();
  const clock = testClock();
  const { s, token, widgetId, addEndpoint } = await webhookServer({ now: clock.now });
  // In-process: a day later the session has expired.
  const post = (event: string, data: Record<string, unknown>) => s.webhooks.service.emit(widgetId, event, data);
  try {
    await addEndpoint({ url: rx.url, events: ['conversation.started'], signature_scheme: 'v1a' });
    const before = (await s.call('GET', '/v1/webhooks/keys')).body;
    assert.equal((await s.call('POST', '/v1/admin/webhooks/keys/rotate', { token })).status, 403, 'a session cannot rotate');
    const rotated = await s.call('POST', '/v1/admin/webhooks/keys/rotate', { token: ADMIN_TOKEN });
    assert.equal(rotated.status, 200);
    assert.equal(rotated.body.keys.length, 2);
    const old = rotated.body.keys.find((k: any) => k.kid === before.keys[0].kid);
    const fresh = rotated.body.keys.find((k: any) => k.kid !== before.keys[0].kid);
    assert.equal(old.expires_at, new Date(clock.now() + 24 * 3_600_000).toISOString());
    assert.equal(fresh.expires_at, undefined);

    await post('conversation.started', { conversation_id: 'ses_r1' });
    await s.webhooks.dispatcher.runDue();
    await rx.waitFor(1);
    // A receiver holding only the old key, and one that fetched the new JWKS, both verify.
    assert.deepEqual((await nobleVerified(rx.received[0]!, rotated.body)).sort(), [old.kid, fresh.kid].sort());
    assert.equal(verifyWebhookV1a(rx.received[0]!.body, rx.received[0]!.headers, before, { now: clock.now }).ok, true);

    clock.advance(24 * 3_600_000 + 1);
    const after = (await s.call('GET', '/v1/webhooks/keys')).body;
    assert.deepEqual(
      after.keys.map((k: any) => k.kid),
      [fresh.kid],
    );
    await post('conversation.started', { conversation_id: 'ses_r2' });
    await s.webhooks.dispatcher.runDue();
    await rx.waitFor(2);
    assert.deepEqual(await nobleVerified(rx.received[1]!, rotated.body), [fresh.kid]);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('signature_scheme is validated (422 naming it) and can be changed by PATCH', async () => {
  const { s, token, widgetId, addEndpoint } = await webhookServer();
  try {
    const bad = await s.call('POST', `/v1/widgets/${widgetId}/webhooks`, {
      token,
      body: { url: 'http://127.0.0.1:9/x', events: ['lead.captured'], signature_scheme: 'ed25519' },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.details[0].path, 'signature_scheme');
    const ep = await addEndpoint({ url: 'http://127.0.0.1:9/x', events: ['lead.captured'] });
    assert.equal((ep as any).signature_scheme, 'hmac');
    const patched = await s.call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token, body: { signature_scheme: 'both' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.signature_scheme, 'both');
    const nul = await s.call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token, body: { signature_scheme: null } });
    assert.equal(nul.status, 422);
  } finally {
    await s.stop();
  }
});
