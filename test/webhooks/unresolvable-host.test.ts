import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardUrl, type Resolve } from '../../src/net/ssrf.js';
import { webhookServer } from './setup.js';

/**
 * Registering `https://example.com/hook` on a machine without DNS (or before the record is
 * published) was a 422 "does not resolve": a public HTTPS URL, as the spec asks for, refused.
 * Registration now admits a name with no address; every delivery still resolves and checks.
 */

const notFound: Resolve = async () => {
  throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
};
const privateOnly: Resolve = async () => [{ address: '10.0.0.5', family: 4 }];

test('a public https URL whose host does not resolve yet is registered; a private one is still refused', async () => {
  let resolve: Resolve = notFound;
  const w = await webhookServer({ allowPrivateWebhooks: false, webhooks: { resolve: (host) => resolve(host) } });
  try {
    const path = `/v1/widgets/${w.widgetId}/webhooks`;
    const ok = await w.s.call('POST', path, { token: w.token, body: { url: 'https://example.com/hook', events: ['lead.captured'] } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.url, 'https://example.com/hook');
    resolve = privateOnly;
    const refused = await w.s.call('POST', path, { token: w.token, body: { url: 'https://internal.example/hook', events: ['lead.captured'] } });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error.details[0].path, 'url');
    assert.match(refused.body.error.details[0].message, /private/);
    const plain = await w.s.call('POST', path, { token: w.token, body: { url: 'http://example.com/hook', events: ['lead.captured'] } });
    assert.equal(plain.status, 422);
  } finally {
    await w.s.stop();
  }
});

test('at delivery an unresolvable host is still refused by the guard', async () => {
  const r = await guardUrl('https://example.com/hook', { allowPrivate: false, resolve: notFound });
  assert.equal(r.ok, false);
  const admitted = await guardUrl('https://example.com/hook', { allowPrivate: false, resolve: notFound, admitUnresolved: true });
  assert.equal(admitted.ok, true);
});
