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

test('a URL with a #fragment is 422 at registration and on PATCH: a fragment is never sent, so the endpoint would not get what was written', async () => {
  const w = await webhookServer({ allowPrivateWebhooks: false, webhooks: { resolve: async () => [{ address: '93.184.216.34', family: 4 }] } });
  try {
    const message = 'must not carry a fragment (#…): a fragment is never sent with the request';
    for (const url of ['https://hooks.example.com/in#part', 'https://hooks.example.com/in#', 'https://hooks.example.com#x']) {
      const r = await w.s.call('POST', `/v1/widgets/${w.widgetId}/webhooks`, { token: w.token, body: { url, events: ['lead.captured'] } });
      assert.equal(r.status, 422, url);
      assert.deepEqual(r.body.error.details, [{ path: 'url', message }], url);
    }
    const ep = await w.addEndpoint({ url: 'https://hooks.example.com/in', events: ['lead.captured'] });
    const patched = await w.s.call('PATCH', `/v1/widgets/${w.widgetId}/webhooks/${ep.id}`, {
      token: w.token,
      body: { url: 'https://hooks.example.com/other#x' },
    });
    assert.equal(patched.status, 422);
    assert.deepEqual(patched.body.error.details, [{ path: 'url', message }]);
    const kept = await w.s.call('GET', `/v1/widgets/${w.widgetId}/webhooks/${ep.id}`, { token: w.token });
    assert.equal(kept.body.url, 'https://hooks.example.com/in');
  } finally {
    await w.s.stop();
  }
});

test('a URL with a non-ASCII host or path is stored as it is called: the host in its xn-- form, the path percent-encoded', async () => {
  const asked: string[] = [];
  const w = await webhookServer({
    allowPrivateWebhooks: false,
    webhooks: {
      resolve: async (host) => {
        asked.push(host);
        return [{ address: '93.184.216.34', family: 4 }];
      },
    },
  });
  try {
    const r = await w.s.call('POST', `/v1/widgets/${w.widgetId}/webhooks`, {
      token: w.token,
      body: { url: 'https://bücher.example/häuser?q=1', events: ['lead.captured'] },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.url, 'https://xn--bcher-kva.example/h%C3%A4user?q=1');
    assert.deepEqual(asked, ['xn--bcher-kva.example']);
    const listed = await w.s.call('GET', `/v1/widgets/${w.widgetId}/webhooks`, { token: w.token });
    assert.equal(listed.body[0]?.url ?? listed.body.data?.[0]?.url, 'https://xn--bcher-kva.example/h%C3%A4user?q=1');
    // The written form is within the limit, the called one is not: the limit holds for what is stored.
    const long = `https://bücher.example/${'ä'.repeat(200)}`;
    const tooLong = await w.s.call('POST', `/v1/widgets/${w.widgetId}/webhooks`, { token: w.token, body: { url: long, events: ['lead.captured'] } });
    assert.equal(tooLong.status, 422);
    assert.equal(tooLong.body.error.details[0].path, 'url');
    assert.match(tooLong.body.error.details[0].message, /^must be at most 512 characters as called/);
  } finally {
    await w.s.stop();
  }
});
