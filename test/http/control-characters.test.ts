/**
 * A name, title, address or other one-line text holding a control character (a newline, a tab,
 * an escape, DEL, a C1 control) is 422 naming the field and the character, and nothing is
 * created or changed: such a name breaks the one line it is shown on (a list, a log line, a
 * video's title card), a terminal acts on an escape, and a model key with a pasted newline
 * would make every model call fail. Text meant to span lines (a description, a greeting, the
 * agent's instructions) keeps its newlines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { widgetServer } from '../webhooks/conversations/setup.js';

const CONTROLS: [string, string, number][] = [
  ['Shop\nFront', '000A', 5],
  ['\tShop', '0009', 1],
  ['Shop\u001b[31m', '001B', 5],
  ['Sh\u007fop', '007F', 3],
  ['🏠\u0085', '0085', 2],
  ['Shop\r', '000D', 5],
];

test('names, titles and addresses with a control character are 422 naming it, and nothing is created', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'agency');
    const key = (await s.call('POST', '/v1/api-keys', { token, body: { name: 'video' } })).body.key as string;
    const widget = (await s.call('POST', '/v1/widgets', { token, body: { name: 'Shop' } })).body.id as string;
    const cases: [string, string, string, Record<string, unknown>, string][] = [
      ['POST', '/v1/properties', key, { address: '1 Main St' }, 'address'],
      ['POST', '/v1/properties', key, { address: '1 Main St' }, 'title'],
      ['POST', '/v1/properties', key, { address: '1 Main St' }, 'city'],
      ['POST', '/v1/widgets', token, {}, 'name'],
      ['PATCH', `/v1/widgets/${widget}`, token, {}, 'name'],
      ['POST', '/v1/api-keys', token, {}, 'name'],
      ['POST', '/v1/tokens', token, { scopes: ['config:read'] }, 'name'],
      ['POST', '/v1/admin/tenants', ADMIN_TOKEN, { plan: 'agency' }, 'name'],
      ['POST', '/v1/servers', token, {}, 'name'],
    ];
    for (const [method, path, credential, base, field] of cases)
      for (const [text, code, at] of CONTROLS) {
        const body = { ...base, [field]: text };
        const r = await s.call(method, path, { token: credential, body });
        assert.equal(r.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'validation_failed');
        assert.deepEqual(r.body.error.details, [
          { path: field, message: `must be one line without control characters (U+0000-U+001F, U+007F-U+009F), got U+${code} at character ${at}` },
        ]);
      }
    assert.deepEqual((await s.call('GET', '/v1/properties', { token: key })).body.data, []);
    assert.equal((await s.call('GET', '/v1/widgets', { token })).body.length, 1);
    assert.equal((await s.call('GET', `/v1/widgets/${widget}`, { token })).body.name, 'Shop');
    assert.equal((await s.call('GET', '/v1/api-keys', { token })).body.length, 1);
    assert.equal((await s.call('GET', '/v1/servers', { token })).body.length, 0);

    const multiLine = await s.call('POST', '/v1/properties', { token: key, body: { address: '1 Main St', description: 'Bright.\n\tGarden.\r\n' } });
    assert.equal(multiLine.status, 201, 'a description spans lines');
    assert.equal(multiLine.body.description, 'Bright.\n\tGarden.\r\n');
    const greeting = await s.call('PATCH', `/v1/widgets/${widget}`, {
      token,
      body: { greeting: 'Hello!\nAsk me anything.', agent: { instructions: 'Be kind.\nBe brief.' } },
    });
    assert.equal(greeting.status, 200, JSON.stringify(greeting.body));
    for (const name of ['Café ☕', 'a\u200bb', '\u202eShop', 'Zoë & Co.'])
      assert.equal((await s.call('POST', '/v1/widgets', { token, body: { name } })).status, 201, `${JSON.stringify(name)} is a name`);
  } finally {
    await s.stop();
  }
});

test("a widget's model, base URL and key with a control character are 422 and the agent settings are unchanged", async () => {
  const { s, token, widgetId } = await widgetServer();
  try {
    const before = (await s.call('GET', `/v1/widgets/${widgetId}`, { token })).body;
    for (const [field, value] of [
      ['model', 'gpt-4o-mini\n'],
      ['api_key', 'sk-test\r\n'],
      ['base_url', 'http://127.0.0.1:9/v1\n'],
    ] as const) {
      const r = await s.call('PATCH', `/v1/widgets/${widgetId}`, { token, body: { agent: { [field]: value } } });
      assert.equal(r.status, 422, `${field}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.details[0].path, `agent.${field}`);
      assert.match(r.body.error.details[0].message, /^must be one line without control characters .*, got U\+000[AD] at character \d+$/);
    }
    assert.deepEqual((await s.call('GET', `/v1/widgets/${widgetId}`, { token })).body, before);
  } finally {
    await s.stop();
  }
});

test('a lead whose name, e-mail address or phone number holds a control character is 422 and records nothing', async () => {
  const { s, token, widgetId, visitor, start } = await widgetServer();
  try {
    const c = await start();
    for (const body of [{ name: 'Ann\u001b[2J' }, { email: 'ann@example.com\n' }, { phone: '+1 555\n0100 200' }]) {
      const r = await visitor('POST', `/v1/conversations/${c.conversation_id}/lead`, { token: c.token, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal(r.body.error.details[0].path, Object.keys(body)[0]);
      assert.match(r.body.error.details[0].message, /^must be one line without control characters/);
    }
    const transcript = await s.call('GET', `/v1/widgets/${widgetId}/conversations/${c.conversation_id}`, { token });
    assert.equal(transcript.body.lead, null);
    const ok = await visitor('POST', `/v1/conversations/${c.conversation_id}/lead`, { token: c.token, body: { name: 'Ann Lee', phone: '+1 (555) 010-0200' } });
    assert.equal(ok.status, 201);
  } finally {
    await s.stop();
  }
});
