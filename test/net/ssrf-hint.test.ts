import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardUrl } from '../../src/net/ssrf.js';

test('every SSRF refusal that --allow-private-webhooks would admit names that flag; the others do not', async () => {
  const resolve = async () => [{ address: '10.0.0.7', family: 4 as const }];
  for (const url of [
    'http://example.com/hook',
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://internal.example/hook',
    'https://[::ffff:192.168.1.1]/x',
  ]) {
    const r = await guardUrl(url, { allowPrivate: false, resolve });
    assert.equal(r.ok, false, url);
    assert.match((r as { reason: string }).reason, /--allow-private-webhooks/, url);
  }
  for (const url of ['ftp://example.com/x', 'https://user:pw@example.com/x', 'not a url']) {
    const r = await guardUrl(url, { allowPrivate: false, resolve });
    assert.equal(r.ok, false, url);
    assert.doesNotMatch((r as { reason: string }).reason, /--allow-private-webhooks/, url);
  }
});
