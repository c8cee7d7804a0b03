import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ISSUE_URLS } from '../helpers/ssrf-cases.js';
import { LEAD, webhookServer } from './setup.js';

test('webhook URLs in every address form of the issue are 422 at registration', async () => {
  const w = await webhookServer({ allowPrivateWebhooks: false, webhooks: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] } });
  try {
    for (const url of ISSUE_URLS) {
      const r = await w.s.call('POST', `/v1/widgets/${w.widgetId}/webhooks`, { token: w.token, body: { url, events: ['lead.captured'] } });
      assert.equal(r.status, 422, url);
      assert.equal(r.body.error.details[0].path, 'url', url);
    }
  } finally {
    await w.s.stop();
  }
});

test('DNS rebinding: a resolver that answers public at registration and 127.0.0.1 after keeps the delivery away', async () => {
  let lookups = 0;
  const w = await webhookServer({
    allowPrivateWebhooks: false,
    webhooks: { resolve: async () => [{ address: lookups++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }] },
  });
  try {
    const ep = await w.addEndpoint({ url: 'https://hooks.example.com/in', events: ['lead.captured'] });
    await w.post('lead.captured', LEAD);
    await w.s.webhooks.dispatcher.runDue();
    const d = await w.s.call('GET', `/v1/widgets/${w.widgetId}/webhooks/${ep.id}/deliveries`, { token: w.token });
    assert.match(d.body.data[0].last_error, /SSRF guard.*loopback/);
    assert.equal(d.body.data[0].last_status_code, null);
  } finally {
    await w.s.stop();
  }
});

test('a URL with spaces, tabs, newlines or control characters is 422: the URL parser would drop them, so the stored URL would not be the one called', async () => {
  const w = await webhookServer({ allowPrivateWebhooks: false, webhooks: { resolve: async () => [{ address: '93.184.216.34', family: 4 }] } });
  try {
    for (const url of [
      ' https://hooks.example.com/in',
      'https://hooks.example.com/in ',
      'https://hooks.exa\tmple.com/in',
      'https://hooks.example.com/i\nn',
      'https://hooks.example.com/\u0001',
    ]) {
      const r = await w.s.call('POST', `/v1/widgets/${w.widgetId}/webhooks`, { token: w.token, body: { url, events: ['lead.captured'] } });
      assert.equal(r.status, 422, JSON.stringify(url));
      assert.deepEqual(r.body.error.details, [{ path: 'url', message: 'must not contain spaces or control characters' }], JSON.stringify(url));
    }
    const ok = await w.s.call('POST', `/v1/widgets/${w.widgetId}/webhooks`, {
      token: w.token,
      body: { url: 'https://hooks.example.com/in?q=a%20b', events: ['lead.captured'] },
    });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.url, 'https://hooks.example.com/in?q=a%20b');
  } finally {
    await w.s.stop();
  }
});
