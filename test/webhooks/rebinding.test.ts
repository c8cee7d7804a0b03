import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver } from './receiver.js';
import { LEAD, webhookServer } from './setup.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';

test('a delivery connects to the address the guard resolved, not to a fresh DNS answer', async () => {
  const rx = await startReceiver();
  // 'receiver.test' does not exist in real DNS: the delivery can only arrive if the pinned address is used.
  const { s, addEndpoint, post } = await webhookServer({ webhooks: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] } });
  try {
    await addEndpoint({ url: `http://receiver.test:${rx.port}/hook`, events: ['lead.captured'] });
    await post('lead.captured', LEAD);
    await rx.waitFor(1);
    assert.equal(rx.received[0]!.headers.host, `receiver.test:${rx.port}`);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('the guard runs again at delivery: a host that now resolves to a private address is not contacted', async () => {
  let answer = '93.184.216.34';
  const s = await startTestServer({ webhooks: { resolve: async () => [{ address: answer, family: 4 }] } });
  try {
    const { token } = await tenantSession(s);
    const w = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    const ep = await s.call('POST', `/v1/widgets/${w.body.id}/webhooks`, { token, body: { url: 'https://hooks.example.com/in', events: ['lead.captured'] } });
    assert.equal(ep.status, 201);
    answer = '127.0.0.1';
    await s.webhooks.service.emit(w.body.id, 'lead.captured', LEAD);
    await s.webhooks.dispatcher.runDue();
    const d = await s.call('GET', `/v1/widgets/${w.body.id}/webhooks/${ep.body.id}/deliveries`, { token });
    assert.equal(d.body.data[0].status, 'pending');
    assert.match(d.body.data[0].last_error, /SSRF guard.*loopback/);
    assert.equal(d.body.data[0].last_status_code, null);
  } finally {
    await s.stop();
  }
});

test("a suspended tenant's widget key is 403 tenant_suspended", async () => {
  const { s, widgetId, widgetKey } = await webhookServer();
  try {
    const tenants = await s.call('GET', '/v1/admin/tenants', { token: 'bsa_test_admin_token' });
    await s.call('POST', `/v1/admin/tenants/${tenants.body[0].id}/suspend`, { token: 'bsa_test_admin_token' });
    const r = await s.call('POST', `/v1/widgets/${widgetId}/events`, { token: widgetKey, body: { event: 'lead.captured', data: LEAD } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'tenant_suspended');
    assert.equal((await s.call('GET', '/v1/auth/me', { token: widgetKey })).body.error.code, 'tenant_suspended');
  } finally {
    await s.stop();
  }
});

test('the guard runs at every attempt: a host name that rebinds to a private address between two attempts is refused the second time', async () => {
  const db = openDatabase(':memory:');
  try {
    const store = new SqliteWebhookStore(db);
    const { widget } = await store.createWidget(1 as never, 'w', { hash: 'h', preview: 'p' });
    const ep = await store.createEndpoint(widget.id, {
      url: 'https://hooks.example.com/in',
      secret: 'whsec_YmVuY2g=',
      events: ['lead.captured'],
      enabled: true,
    });
    let answer = '93.184.216.34';
    const sent: string[] = [];
    const dispatcher = new Dispatcher({
      store,
      allowPrivate: false,
      resolve: async () => [{ address: answer, family: 4 }],
      send: async (req) => {
        sent.push(req.addresses[0]!.address);
        return { kind: 'response', status: 204, retryAfter: null, excerpt: '', durationMs: 1 };
      },
    });
    await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, null);
    await dispatcher.runDue();
    assert.deepEqual(sent, ['93.184.216.34']);
    answer = '127.0.0.1';
    const [second] = (await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, null)).deliveries;
    await dispatcher.runDue();
    assert.deepEqual(sent, ['93.184.216.34'], 'the rebound name is not contacted');
    assert.match((await store.getDelivery(ep.id, second!))?.lastError ?? '', /SSRF guard.*loopback/);
  } finally {
    db.close();
  }
});
