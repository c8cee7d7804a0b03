import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { LEAD, webhookServer } from './setup.js';

const LOCAL = 'http://127.0.0.1:9/hook';

test('widgets are tenant-owned; a new widget has no endpoints; widget keys are shown once', async () => {
  const { s, token, widgetId, widgetKey } = await webhookServer();
  try {
    assert.match(widgetId, /^wid_[0-9a-z]+$/);
    assert.match(widgetKey, /^bwk_/);
    const got = await s.call('GET', `/v1/widgets/${widgetId}`, { token });
    assert.deepEqual(Object.keys(got.body).sort(), ['created_at', 'id', 'name']);
    assert.deepEqual((await s.call('GET', `/v1/widgets/${widgetId}/webhooks`, { token })).body, []);
    assert.equal((await s.call('GET', '/v1/widgets', { token })).body.length, 1);
    const other = await tenantSession(s);
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}`, { token: other.token })).status, 404);
    assert.equal((await s.call('GET', `/v1/widgets/${widgetId}/webhooks`, { token: other.token })).status, 404);
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/events`, { token: other.token, body: { event: 'lead.captured', data: LEAD } })).status, 404);
    assert.deepEqual((await s.call('GET', '/v1/widgets', { token: other.token })).body, []);
    assert.equal((await s.call('GET', '/v1/widgets')).status, 401);
    const bad = await s.call('POST', '/v1/widgets', { token, body: { name: '' } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, 'validation_failed');
    assert.equal(bad.body.error.details[0].path, 'name');

    const k = await s.call('POST', `/v1/widgets/${widgetId}/keys`, { token });
    assert.equal(k.status, 201);
    assert.match(k.body.key, /^bwk_/);
    const keys = await s.call('GET', `/v1/widgets/${widgetId}/keys`, { token });
    assert.equal(keys.body.length, 2);
    assert.ok(keys.body.every((x: any) => x.key === undefined));
    // A widget key posts events for its widget only, and is a 403 on every other route.
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/events`, { token: k.body.key, body: { event: 'lead.captured', data: LEAD } })).status, 202);
    const elsewhere = await s.call('GET', `/v1/widgets/${widgetId}/webhooks`, { token: k.body.key });
    assert.equal(elsewhere.status, 403);
    assert.equal(elsewhere.body.error.code, 'forbidden');
    assert.equal((await s.call('GET', '/v1/auth/me', { token: k.body.key })).status, 403);
    const w2 = await s.call('POST', '/v1/widgets', { token, body: { name: 'second' } });
    assert.equal((await s.call('POST', `/v1/widgets/${w2.body.id}/events`, { token: k.body.key, body: { event: 'lead.captured', data: LEAD } })).status, 403);
    assert.equal((await s.call('DELETE', `/v1/widgets/${widgetId}/keys/${k.body.id}`, { token })).status, 204);
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/events`, { token: k.body.key, body: { event: 'lead.captured', data: LEAD } })).status, 401);
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/events`, { token: 'bwk_unknown', body: { event: 'lead.captured', data: LEAD } })).status, 401);
  } finally {
    await s.stop();
  }
});

test('endpoint fields: url ≤ 512, secret ≤ 4096, events a non-empty subset without duplicates, enabled boolean', async () => {
  const { s, token, widgetId } = await webhookServer();
  const base = `/v1/widgets/${widgetId}/webhooks`;
  const create = (body: unknown) => s.call('POST', base, { token, body });
  const paths = (r: { body: any }) => r.body.error.details.map((d: any) => d.path);
  try {
    const prefix = 'http://127.0.0.1:9/';
    const url512 = prefix + 'a'.repeat(512 - prefix.length);
    assert.equal(url512.length, 512);
    const ok = await create({ url: url512, events: ['lead.captured'] });
    assert.equal(ok.status, 201);
    assert.match(ok.body.id, /^ep_/);
    assert.equal(ok.body.enabled, true);
    assert.match(ok.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const long = await create({ url: url512 + 'a', events: ['lead.captured'] });
    assert.equal(long.status, 422);
    assert.deepEqual(paths(long), ['url']);
    assert.equal((await create({ url: LOCAL, secret: 's'.repeat(4096), events: ['lead.captured'] })).status, 201);
    const big = await create({ url: LOCAL, secret: 's'.repeat(4097), events: ['lead.captured'] });
    assert.equal(big.status, 422);
    assert.deepEqual(paths(big), ['secret']);
    assert.deepEqual(paths(await create({ url: LOCAL, events: [] })), ['events']);
    assert.deepEqual(paths(await create({ url: LOCAL, events: ['lead.captured', 'lead.captured'] })), ['events[1]']);
    assert.deepEqual(paths(await create({ url: LOCAL, events: ['lead.created'] })), ['events[0]']);
    assert.deepEqual(paths(await create({ url: LOCAL, events: 'lead.captured' })), ['events']);
    assert.deepEqual(paths(await create({ url: LOCAL, events: ['lead.captured'], enabled: 'yes' })), ['enabled']);
    assert.deepEqual(paths(await create({ url: LOCAL, events: ['lead.captured'], secret: '' })), ['secret']);
    assert.equal((await create({ url: LOCAL, events: ['lead.captured'], secret: 'whsec_***' })).status, 201, 'a secret is never refused for its form');
    assert.deepEqual(paths(await create({ url: LOCAL, events: ['lead.captured'], colour: 'red' })), ['colour']);
    assert.deepEqual(paths(await create({ events: ['lead.captured'] })), ['url']);
    assert.deepEqual(paths(await create({ url: 'ftp://x/', events: ['x'] })).sort(), ['events[0]', 'url']);
    const all = await create({ url: LOCAL, events: ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'], enabled: false });
    assert.equal(all.status, 201);
    assert.equal(all.body.enabled, false);

    const id = ok.body.id;
    const got = await s.call('GET', `${base}/${id}`, { token });
    assert.equal(got.body.secret, undefined);
    assert.equal(got.body.url, url512);
    const patched = await s.call('PATCH', `${base}/${id}`, { token, body: { events: ['conversation.ended'], enabled: false } });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.events, ['conversation.ended']);
    assert.equal(patched.body.disabled_reason, 'user');
    assert.deepEqual(paths(await s.call('PATCH', `${base}/${id}`, { token, body: { secret: 'x'.repeat(4097) } })), ['secret']);
    assert.deepEqual(paths(await s.call('PATCH', `${base}/${id}`, { token, body: { url: url512 + 'b' } })), ['url']);
    assert.equal((await s.call('GET', base, { token })).body.length, 4);
    assert.equal((await s.call('DELETE', `${base}/${id}`, { token })).status, 204);
    assert.equal((await s.call('GET', `${base}/${id}`, { token })).status, 404);
    assert.equal((await s.call('DELETE', `${base}/${id}`, { token })).status, 404);
    assert.equal((await s.call('GET', base, { token })).body.length, 3);
  } finally {
    await s.stop();
  }
});

test('without --allow-private-webhooks, private and plain-http URLs are a 422 at registration', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const w = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    for (const url of [
      'http://127.0.0.1:9/hook',
      'https://127.0.0.1/hook',
      'https://[::1]/',
      'https://10.0.0.1/',
      'https://169.254.169.254/',
      'https://localhost/',
      'https://0x7f000001/',
    ]) {
      const r = await s.call('POST', `/v1/widgets/${w.body.id}/webhooks`, { token, body: { url, events: ['lead.captured'] } });
      assert.equal(r.status, 422, url);
      assert.equal(r.body.error.code, 'validation_failed');
      assert.equal(r.body.error.details[0].path, 'url');
    }
  } finally {
    await s.stop();
  }
});

test('events: 202 with the delivery count; bad data and personal data are 422 and never stored', async () => {
  const { s, token, widgetId, addEndpoint, post } = await webhookServer();
  try {
    await addEndpoint({ url: LOCAL, events: ['lead.captured'], enabled: false });
    await addEndpoint({ url: LOCAL, events: ['lead.captured', 'conversation.started'] });
    await addEndpoint({ url: LOCAL, events: ['conversation.started'] });
    assert.deepEqual((await post('lead.captured', LEAD)).body.deliveries, 1);
    assert.deepEqual((await post('conversation.started', { conversation_id: 'ses_2' })).body.deliveries, 2);
    const pii = await post('lead.captured', { ...LEAD, email: 'jane@example.com' });
    assert.equal(pii.status, 422);
    assert.equal(pii.body.error.code, 'validation_failed');
    assert.equal(pii.body.error.details[0].path, 'data.email');
    const phone = await post('escalation.triggered', { conversation_id: 'ses_3', reason: 'ring +1 (555) 123-4567' });
    assert.equal(phone.status, 422);
    assert.equal(phone.body.error.details[0].path, 'data.reason');
    assert.equal((await post('conversation.paused', { conversation_id: 'ses_3' })).status, 422);
    const stray = await s.call('POST', `/v1/widgets/${widgetId}/events`, { token, body: { event: 'lead.captured', data: LEAD, email: 'a@b.co' } });
    assert.equal(stray.status, 422);
    const stored = s.db.prepare('SELECT body FROM webhook_events').all() as { body: string }[];
    assert.equal(stored.length, 2);
    assert.ok(stored.every((r) => !r.body.includes('@') && !r.body.includes('555')));
    assert.equal((await s.call('POST', `/v1/widgets/${widgetId}/events`, { token, body: 'nope', headers: { 'content-type': 'text/plain' } })).status, 415);
    await assert.rejects(s.webhooks.service.emit(widgetId, 'lead.captured', { ...LEAD, phone: '0612345678' }), (err: any) => err.code === 'validation_failed');
    await assert.rejects(s.webhooks.service.emit('wid_nope', 'lead.captured', LEAD), (err: any) => err.code === 'not_found');
  } finally {
    await s.stop();
  }
});

// The issue: PATCH {"url": null} (or events, enabled, secret) answered 200 with the endpoint
// unchanged, as if null had been applied; none of them can be unset.
test('PATCH of an endpoint: a null field is 422 naming it, and nothing changes', async () => {
  const { s, token, widgetId, addEndpoint } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: LOCAL, events: ['lead.captured'] });
    const path = `/v1/widgets/${widgetId}/webhooks/${ep.id}`;
    for (const key of ['url', 'secret', 'events', 'enabled']) {
      const r = await s.call('PATCH', path, { token, body: { [key]: null, enabled: key === 'enabled' ? null : false } });
      assert.equal(r.status, 422, key);
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        [key],
      );
      assert.match(r.body.error.details[0].message, /must not be null/);
    }
    const after = await s.call('GET', path, { token });
    assert.deepEqual([after.body.url, after.body.events, after.body.enabled], [LOCAL, ['lead.captured'], true]);
    assert.equal((await s.call('PATCH', path, { token, body: {} })).status, 200);
  } finally {
    await s.stop();
  }
});
