/**
 * A JSON body field the route does not know is a 422 naming it, and nothing changes: a typo
 * of an optional field (`tier` as `teir`) or an extra a client assumed would be stored
 * (`role` on a new user) must not pass silently. Every control-plane, identity and widget
 * route that reads a JSON body; the property body (documented as ignoring extras), the tick
 * and the telemetry report are covered by their own pages' rules.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';

test('an unknown field in a JSON body is 422 validation_failed naming it, and nothing is created or changed', async () => {
  const s = await startTestServer();
  try {
    const { token, tenantId, email } = await tenantSession(s, 'agency');
    const server = (await s.call('POST', '/v1/servers', { token, body: { name: 'one' } })).body.id as number;
    const before = {
      tenants: (await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN })).body.length,
      servers: (await s.call('GET', '/v1/servers', { token })).body.length,
      widgets: (await s.call('GET', '/v1/widgets', { token })).body.length,
      versions: (await s.call('GET', `/v1/servers/${server}/config/versions`, { token })).body.length,
    };
    const cases: [string, string, string | undefined, Record<string, unknown>, string][] = [
      ['POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'x', plan: 'agency', region: 'eu' }, 'region'],
      ['POST', `/v1/admin/tenants/${tenantId}/users`, ADMIN_TOKEN, { email: 'new@example.com', password: 'long enough', role: 'admin' }, 'role'],
      ['POST', '/v1/auth/login', undefined, { email, password: 'correct horse battery', remember: true }, 'remember'],
      ['POST', '/v1/servers', token, { name: 'two', region: 'eu' }, 'region'],
      ['POST', `/v1/servers/${server}/config/rollback`, token, { version: 1, force: true }, 'force'],
      ['POST', '/v1/billing/checkout', token, { plan: 'cloud', teir: 'small' }, 'teir'],
      ['POST', '/v1/widgets', token, { name: 'Shop', colour: '#fff' }, 'colour'],
    ];
    for (const [method, path, credential, body, field] of cases) {
      const r = await s.call(method, path, { ...(credential ? { token: credential } : {}), body });
      assert.equal(r.status, 422, `${method} ${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'validation_failed');
      assert.ok(
        r.body.error.details.some((d: { path: string; message: string }) => d.path === field && d.message.startsWith('is not a known field (known: ')),
        `${method} ${path}: ${JSON.stringify(r.body.error.details)}`,
      );
    }
    assert.deepEqual(
      {
        tenants: (await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN })).body.length,
        servers: (await s.call('GET', '/v1/servers', { token })).body.length,
        widgets: (await s.call('GET', '/v1/widgets', { token })).body.length,
        versions: (await s.call('GET', `/v1/servers/${server}/config/versions`, { token })).body.length,
      },
      before,
    );
    const login = await s.call('POST', '/v1/auth/login', { body: { email: 'new@example.com', password: 'long enough' } });
    assert.equal(login.status, 401, 'the refused user was not created');
  } finally {
    await s.stop();
  }
});

// Regression: the unknown key was named whole in the detail's path, so a key of 20,000
// characters came back whole (twice for a widget's agent), on every route that names them.
test('an unknown key is named cut at 64 characters, then …, on every reader of a JSON body', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } })).body;
    const apiKey = (await s.call('POST', '/v1/api-keys', { token, body: { name: 'k' } })).body.key as string;
    const property = (await s.call('POST', '/v1/properties', { token: apiKey, body: { address: '1 Road' } })).body.id as number;
    const key = `k${'é'.repeat(20_000)}`;
    const cut = `k${'é'.repeat(63)}…`;
    const cases: [string, string, string, unknown, string][] = [
      ['POST', '/v1/servers', token, { name: 'a', [key]: 1 }, cut],
      ['PATCH', `/v1/widgets/${widget.id}`, token, { agent: { [key]: 1 } }, `agent.${cut}`],
      ['POST', `/v1/widgets/${widget.id}/events`, widget.key, { event: 'lead.captured', data: {}, [key]: 1 }, cut],
      ['POST', `/v1/properties/${property}/photos`, apiKey, { photos: [{ data_base64: 'AA==', [key]: 1 }] }, `photos[0].${cut}`],
    ];
    for (const [method, path, credential, body, named] of cases) {
      const r = await s.call(method, path, { token: credential, body });
      assert.equal(r.status, 422, `${method} ${path}: ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.ok(JSON.stringify(r.body).length < 1000, `${method} ${path}: an answer of ${JSON.stringify(r.body).length} characters`);
      assert.ok(
        r.body.error.details.some((d: { path: string }) => d.path === named),
        `${method} ${path}: ${JSON.stringify(r.body.error.details).slice(0, 300)}`,
      );
    }
  } finally {
    await s.stop();
  }
});
