/**
 * A name, title or address of only spaces (or tabs, newlines) is no name: it is refused with
 * 422 `must not be blank` wherever a name is required, as `POST /v1/servers` always did, and
 * nothing is created. So is one of only invisible characters (zero-width spaces and joiners,
 * a right-to-left override, U+FEFF): it shows as nothing in a list.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { widgetServer } from '../webhooks/conversations/setup.js';

test('blank names, titles and addresses are 422 must not be blank, and nothing is created', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const key = (await s.call('POST', '/v1/api-keys', { token, body: { name: 'video' } })).body.key as string;
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Shop' } })).body.id as string;
    const cases: [string, string, string, unknown, string][] = [
      ['POST', '/v1/properties', key, { address: '   ' }, 'address'],
      ['POST', '/v1/properties', key, { address: '1 Main St', title: ' \t\n' }, 'title'],
      ['POST', '/v1/widgets', token, { name: '   ' }, 'name'],
      ['PATCH', `/v1/widgets/${widget}`, token, { name: '  ' }, 'name'],
      ['POST', '/v1/api-keys', token, { name: '   ' }, 'name'],
      ['POST', '/v1/tokens', token, { name: ' ', scopes: ['config:read'] }, 'name'],
      ['POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: '   ', plan: 'agency' }, 'name'],
      ['POST', '/v1/servers', token, { name: '   ' }, 'name'],
    ];
    const invisible = ['\u200b', '\u200b\u200d\u2060', '\u202e', ' \ufeff\u00ad\u200e '];
    const all = cases.flatMap(([method, path, credential, body, field]) => [
      [method, path, credential, body, field] as const,
      ...invisible.map((blank) => [method, path, credential, { ...(body as object), [field]: blank }, field] as const),
    ]);
    for (const [method, path, credential, body, field] of all) {
      const r = await s.call(method, path, { token: credential, body });
      assert.equal(r.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'validation_failed');
      assert.deepEqual(
        r.body.error.details.filter((d: { path: string }) => d.path === field),
        [{ path: field, message: 'must not be blank' }],
      );
    }
    assert.deepEqual((await s.call('GET', '/v1/properties', { token: key })).body.data, []);
    assert.equal((await s.call('GET', '/v1/widgets', { token })).body.length, 1);
    assert.equal((await s.call('GET', `/v1/widgets/${widget}`, { token })).body.name, 'Shop');
    const ok = await s.call('POST', '/v1/properties', { token: key, body: { address: ' 1 Main St ' } });
    assert.equal(ok.status, 201, 'a name with spaces around it is still a name');
    for (const name of ['\u202eShop', '🏠', '\u0645\u0646\u0632\u0644', 'a\u200bb'])
      assert.equal((await s.call('POST', '/v1/widgets', { token, body: { name } })).status, 201, `${JSON.stringify(name)} is a name`);
  } finally {
    await s.stop();
  }
});

test('a lead whose only detail shows nothing (spaces, a zero-width space, an RTL mark) is 422 and records nothing', async () => {
  const { s, token, widgetId, visitor, start } = await widgetServer();
  try {
    const c = await start();
    for (const blank of ['   ', '\u200b', '\u202e', ' \ufeff ']) {
      const r = await visitor('POST', `/v1/conversations/${c.conversation_id}/lead`, { token: c.token, body: { name: blank } });
      assert.equal(r.status, 422, JSON.stringify(blank));
      assert.equal(r.body.error.details[0].message, 'give at least a name, an e-mail address or a phone number');
    }
    const transcript = await s.call('GET', `/v1/widgets/${widgetId}/conversations/${c.conversation_id}`, { token });
    assert.equal(transcript.body.lead, null);
    const r = await visitor('POST', `/v1/conversations/${c.conversation_id}/lead`, { token: c.token, body: { name: '\u202eAnn' } });
    assert.equal(r.status, 201);
  } finally {
    await s.stop();
  }
});
