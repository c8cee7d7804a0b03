import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signRequest } from '../../src/signing/request.js';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { testImage } from '../video/helpers.js';
import { embeddedTarget, faultLogger, fuzzFields, type BodyRoute } from './field-fuzz-harness.js';

const SEED = Number(process.env.FIELD_FUZZ_SEED ?? 11);
const PER_ROUTE = Number(process.env.FIELD_FUZZ_PER_ROUTE ?? 40);

const RAISED = { limit: 1_000_000, windowMs: 60_000 };

test(`every JSON field of every route answers hostile values in the error shape and a refusal changes nothing (seed ${SEED})`, async () => {
  const faults: string[] = [];
  const s = await startTestServer({
    allowPrivateWebhooks: true,
    logger: faultLogger(faults),
    limits: {
      session: RAISED,
      apiKey: RAISED,
      tenantApiKeys: RAISED,
      serverKey: RAISED,
      widgetKey: RAISED,
      widgetVisitor: RAISED,
      widgetAddress: RAISED,
      widgetConversationMessages: RAISED,
      widgetConversationsPerWidget: RAISED,
      widgetMessagesPerWidget: RAISED,
      loginAttemptsPerAddress: RAISED,
      telemetryReports: { limit: 1_000_000, windowMs: 1000 },
    },
  });
  try {
    const { tenantId, token, email } = await tenantSession(s, 'enterprise');
    const ok = async (method: string, path: string, credential: string | undefined, body?: unknown) => {
      const r = await s.call(method, path, { ...(credential ? { token: credential } : {}), ...(body !== undefined ? { body } : {}) });
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const server = await ok('POST', '/v1/servers', token, { name: 'fuzz' });
    const serverKey = await ok('POST', `/v1/servers/${server.id}/keys`, token);
    const bundle = await ok('GET', `/v1/servers/${server.id}/config`, token);
    const apiKey = (await ok('POST', '/v1/api-keys', token, { name: 'fuzz' })).key as string;
    const widget = await ok('POST', '/v1/widgets', token, { name: 'fuzz' });
    const endpoint = await ok('POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: 'http://127.0.0.1:9/hook', events: ['lead.captured'] });
    const property = await ok('POST', '/v1/properties', apiKey, { title: 'Flat', address: '1 Road', city: 'Paris', price: 1, currency: 'EUR', bedrooms: 1 });
    const png = testImage('png', '64x48').toString('base64');
    const photos = await ok('POST', `/v1/properties/${property.id}/photos`, apiKey, { photos: [{ filename: 'a.png', data_base64: png, room: 'kitchen' }] });
    const conversation = await ok('POST', `/v1/widgets/${widget.id}/conversations`, undefined, {});
    const other = await ok('POST', `/v1/widgets/${widget.id}/conversations`, undefined, {});

    const bearer = (credential: string) => () => ({ authorization: `Bearer ${credential}` });
    const session = bearer(token);
    const api = bearer(apiKey);
    const visitor = bearer(conversation.token);
    const signed = (method: string, path: string, body: string) => ({
      authorization: `Bearer ${serverKey.key}`,
      ...signRequest(serverKey.key, { method, target: path, body }),
    });
    const routes: BodyRoute[] = [
      { method: 'POST', path: '/v1/admin/tenants', headers: bearer(ADMIN_TOKEN), body: { name: 'T', plan: 'agency' } },
      { method: 'PATCH', path: `/v1/admin/tenants/${tenantId}`, headers: bearer(ADMIN_TOKEN), body: { plan: 'enterprise' } },
      {
        method: 'POST',
        path: `/v1/admin/tenants/${tenantId}/users`,
        headers: bearer(ADMIN_TOKEN),
        body: { email: 'x@example.com', password: 'long enough pass' },
      },
      { method: 'POST', path: '/v1/auth/login', headers: () => ({}), body: { email, password: 'wrong password' } },
      { method: 'POST', path: '/v1/servers', headers: session, body: { name: 'S' } },
      { method: 'PUT', path: `/v1/servers/${server.id}/config`, headers: session, body: bundle },
      { method: 'POST', path: `/v1/servers/${server.id}/config/rollback`, headers: session, body: { version: 1 } },
      { method: 'POST', path: '/v1/billing/checkout', headers: session, body: { plan: 'cloud', tier: 'small' } },
      { method: 'POST', path: '/v1/api-keys', headers: session, body: { name: 'K' } },
      { method: 'POST', path: '/v1/tokens', headers: session, body: { name: 'T', scopes: ['config:read'], expires_in_days: 30 } },
      { method: 'POST', path: '/v1/widgets', headers: session, body: { name: 'W' } },
      {
        method: 'PATCH',
        path: `/v1/widgets/${widget.id}`,
        headers: session,
        body: {
          name: 'W',
          color: '#112233',
          greeting: 'Hi',
          allowed_origins: ['https://shop.example'],
          agent: { instructions: 'Be nice', knowledge: 'Open 9-5', model: 'm', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-1' },
        },
      },
      {
        method: 'POST',
        path: `/v1/widgets/${widget.id}/webhooks`,
        headers: session,
        body: {
          url: 'http://127.0.0.1:9/h2',
          secret: 'whsec_abcdefghijklmnopqrstuvwxyz012345',
          events: ['lead.captured'],
          enabled: true,
          signature_scheme: 'standard',
          rate_limit: 10,
        },
      },
      {
        method: 'PATCH',
        path: `/v1/widgets/${widget.id}/webhooks/${endpoint.id}`,
        headers: session,
        body: { url: 'http://127.0.0.1:9/h3', events: ['lead.captured', 'conversation.started'], enabled: true, rate_limit: 5 },
      },
      { method: 'POST', path: `/v1/widgets/${widget.id}/webhooks/${endpoint.id}/recover`, headers: session, body: { since: '2026-01-01T00:00:00Z' } },
      { method: 'PUT', path: '/v1/webhooks/operational-endpoint', headers: session, body: { endpoint_id: endpoint.id } },
      {
        method: 'POST',
        path: `/v1/widgets/${widget.id}/events`,
        headers: bearer(widget.key),
        body: { event: 'lead.captured', data: { conversation_id: 'c1', email: 'a@example.com' } },
      },
      { method: 'POST', path: `/v1/widgets/${widget.id}/conversations/${other.conversation_id}/reply`, headers: session, body: { text: 'hello' } },
      { method: 'POST', path: `/v1/widgets/${widget.id}/conversations`, headers: () => ({}), body: { visitor_id: conversation.visitor_id } },
      {
        method: 'POST',
        path: `/v1/conversations/${conversation.conversation_id}/lead`,
        headers: visitor,
        body: { name: 'Ann', email: 'ann@example.com', phone: '+33 6 12 34 56 78' },
      },
      { method: 'POST', path: `/v1/conversations/${conversation.conversation_id}/escalate`, headers: visitor, body: { reason: 'help' } },
      {
        method: 'POST',
        path: '/v1/properties',
        headers: api,
        body: { title: 'T', address: 'A', city: 'C', price: 1, currency: 'EUR', bedrooms: 1, bathrooms: 1.5, area: 50, description: 'D' },
      },
      {
        method: 'POST',
        path: `/v1/properties/${property.id}/photos`,
        headers: api,
        body: { photos: [{ filename: 'b.png', data_base64: png, room: 'exterior' }] },
      },
      { method: 'PATCH', path: `/v1/properties/${property.id}/photos/${photos.data[0].id}`, headers: api, body: { room: 'living' } },
      {
        method: 'POST',
        path: '/v1/videos',
        headers: api,
        body: {
          property_id: 999_999,
          template: 'tour',
          formats: ['16:9', '1:1'],
          callback_url: 'http://127.0.0.1:9/cb',
          branded: true,
          captions: false,
          photo_ids: [1],
          photo_order: 'room',
        },
      },
      { method: 'PUT', path: '/v1/branding', headers: api, body: { primary_color: '#112233', secondary_color: '#445566', font: 'sans' } },
      {
        method: 'POST',
        path: '/v1/telemetry',
        headers: signed,
        body: {
          serverId: String(server.id),
          ts: new Date().toISOString(),
          botCount: 2,
          playersOnline: 3,
          linesSpoken: 4,
          spendUsd: 0.1,
          events: [{ kind: 'spoke', count: 4 }],
          latency: { p50: 1, p99: 2 },
          economy: { ttsUsd: 0.1, llmUsd: 0.2 },
          roster: [{ agent: 1, name: 'Bob', alignment: 'friendly', goal: 'idle', state: 'ok' }],
          map: [{ agent: 1, name: 'Bob', alignment: 'friendly', goal: 'idle', state: 'ok', x: 1, z: 2, health: 50 }],
          dialogue: { source: 'scripted' },
        },
      },
    ];
    const target = embeddedTarget(s);
    const problems = await fuzzFields(target, routes, faults, { seed: SEED, perRoute: PER_ROUTE }).finally(() => target.close());
    assert.deepEqual(problems, []);
    assert.equal(await (await fetch(`${s.url}/health`)).text(), 'ok');
  } finally {
    await s.stop();
  }
});
