/**
 * Issue 29: on `brainstem up` (the local stack) a webhook receiver on this machine, such as
 * `webhooks listen`, is admitted without --allow-private-webhooks; private addresses and plain
 * http beyond this machine still are not. `serve` keeps refusing loopback.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardUrl, type Resolve } from '../../src/net/ssrf.js';

const to =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));

test("allowPrivate 'loopback' admits this machine over http or https, and nothing else that is not public", async () => {
  const loopback = { allowPrivate: 'loopback' as const };
  for (const [url, resolve] of [
    ['http://127.0.0.1:8765/', undefined],
    ['http://127.8.9.10/hook', undefined],
    ['http://[::1]:8765/', undefined],
    ['http://[::ffff:127.0.0.1]/x', undefined],
    ['https://127.0.0.1/hook', undefined],
    ['http://localhost:8765/', to('127.0.0.1', '::1')],
    ['http://receiver.localhost/', to('127.0.0.1')],
    ['https://example.com/hook', to('93.184.216.34')],
  ] as const) {
    const r = await guardUrl(url, { ...loopback, ...(resolve ? { resolve } : {}) });
    assert.equal(r.ok, true, `${url}: ${JSON.stringify(r)}`);
  }
  for (const [url, resolve, reason] of [
    ['http://10.0.0.7/hook', undefined, /private address \(10\.0\.0\.7\); only public and loopback addresses are allowed; .*--allow-private-webhooks/],
    ['https://192.168.1.2/hook', undefined, /private address/],
    ['http://[fd00::1]/hook', undefined, /unique-local address/],
    ['http://169.254.169.254/latest/meta-data', undefined, /link-local address/],
    ['http://example.com/hook', to('93.184.216.34'), /must use https beyond this machine/],
    ['http://localhost/hook', to('127.0.0.1', '10.1.1.1'), /private address \(10\.1\.1\.1\)/],
    ['http://mixed.example/hook', to('127.0.0.1', '93.184.216.34'), /must use https beyond this machine/],
    ['http://0.0.0.0:8765/', undefined, /unspecified address/],
    ['ftp://127.0.0.1/x', undefined, /must use http or https/],
  ] as const) {
    const r = await guardUrl(url, { ...loopback, ...(resolve ? { resolve } : {}) });
    assert.equal(r.ok, false, url);
    assert.match((r as { reason: string }).reason, reason, url);
  }
});

test('without it (serve), loopback stays refused; with --allow-private-webhooks everything private is admitted', async () => {
  for (const url of ['http://127.0.0.1:8765/', 'https://127.0.0.1/', 'https://[::1]/'])
    assert.equal((await guardUrl(url, { allowPrivate: false })).ok, false, url);
  assert.equal((await guardUrl('https://localhost/', { allowPrivate: false, resolve: to('127.0.0.1') })).ok, false);
  for (const url of ['http://127.0.0.1:8765/', 'http://10.0.0.7/', 'http://[fd00::1]/'])
    assert.equal((await guardUrl(url, { allowPrivate: true })).ok, true, url);
});

test("'loopback' at registration: a name that does not resolve is admitted over https only (plain http cannot be shown to stay on this machine)", async () => {
  const nxdomain: Resolve = async () => {
    throw Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' });
  };
  const registration = { allowPrivate: 'loopback' as const, admitUnresolved: true, resolve: nxdomain };
  const http = await guardUrl('http://hooks.example.com/x', registration);
  assert.equal(http.ok, false);
  assert.match((http as { reason: string }).reason, /must use https beyond this machine/);
  assert.equal((await guardUrl('http://hooks.example.com/x', { ...registration, resolve: to() })).ok, false);
  assert.equal((await guardUrl('https://hooks.example.com/x', registration)).ok, true);
  assert.equal((await guardUrl('http://receiver.localhost/x', registration)).ok, true);
});
