import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAddress, guardUrl, parseIPv6, type Resolve } from '../../src/net/ssrf.js';
import { ISSUE_URLS } from '../helpers/ssrf-cases.js';

const CASES: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link_local'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'link_local'],
  ['febf::1', 'link_local'],
  ['fc00::1', 'unique_local'],
  ['fd12:3456::1', 'unique_local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:a9fe:a9fe', 'link_local'],
  ['64:ff9b::192.168.0.1', 'private'],
  ['2002:7f00:1::', 'loopback'],
  ['::127.0.0.1', 'loopback'],
  ['fe80::1%eth0', 'link_local'],
  ['::ffff:0:127.0.0.1', 'loopback'],
  ['::ffff:0:a9fe:a9fe', 'link_local'],
  ['64:ff9b::a9fe:a9fe', 'link_local'],
  ['64:ff9b:1::a00:1', 'private'],
  ['64:ff9b:1::808:808', 'private'],
  ['2002:a9fe:a9fe::', 'link_local'],
  ['2002:0a00:0001::1', 'private'],
  ['fec0::1', 'private'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
  ['::7f00:1', 'loopback'],
  // Special-purpose ranges that are never a public receiver (IANA's special-purpose registries):
  // the rest of 2001::/23 (IETF protocol assignments: benchmarking 2001:2::/48, ORCHID, anycast
  // services), documentation 3fff::/20, SRv6 segment ids 5f00::/16 (routed inside an operator's
  // network only) and the deprecated 6to4 relay anycast 192.88.99.0/24.
  ['2001:2::1', 'reserved'],
  ['2001:10::1', 'reserved'],
  ['2001:20::1', 'reserved'],
  ['2001:1ff:ffff::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['3fff:fff:ffff::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['5f00:ffff::1', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['::ffff:192.88.99.1', 'reserved'],
];

test('every address class is recognised, IPv4-mapped and other embedded forms included', () => {
  for (const [address, cls] of CASES) assert.equal(classifyAddress(address), cls, address);
  for (const pub of [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2001:200::1',
    '3fff:1000::1',
    '5f01::1',
    '192.88.100.1',
  ]) {
    assert.equal(classifyAddress(pub), 'public', pub);
  }
  assert.equal(parseIPv6('1:2:3'), null);
  assert.equal(parseIPv6('1::2::3'), null);
});

const resolveTo =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

test('URLs: https only, IP literals in any notation, every resolved address checked', async () => {
  const strict = { allowPrivate: false, resolve: resolveTo('93.184.216.34') };
  assert.equal((await guardUrl('https://example.com/hook', strict)).ok, true);
  const refused = async (url: string, resolve: Resolve = strict.resolve) => {
    const r = await guardUrl(url, { allowPrivate: false, resolve });
    assert.equal(r.ok, false, url);
    return r.ok ? '' : r.reason;
  };
  assert.match(await refused('http://example.com/hook'), /https/);
  assert.match(await refused('ftp://example.com/'), /https/);
  assert.match(await refused('not-a-url'), /valid/);
  assert.match(await refused('not a url'), /spaces or control characters/);
  assert.match(await refused('https://user:pw@example.com/'), /credentials/);
  for (const literal of [
    'https://127.0.0.1/',
    'https://0x7f.0.0.1/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://0/',
    'https://[fe80::1]/',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.1.1/',
    'https://[fd00::1]/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://10.0.0.1/',
    'https://172.16.5.4/',
    'https://192.168.0.10/',
  ]) {
    await refused(literal);
  }
  assert.match(await refused('https://internal.example/', resolveTo('93.184.216.34', '10.0.0.5')), /private/);
  assert.match(await refused('https://rebind.example/', resolveTo('::ffff:127.0.0.1')), /loopback/);
  assert.match(
    await refused('https://nowhere.invalid/', async () => {
      throw Object.assign(new Error('x'), { code: 'ENOTFOUND' });
    }),
    /does not resolve/,
  );
  const dev = await guardUrl('http://127.0.0.1:9/hook', { allowPrivate: true });
  assert.equal(dev.ok, true);
  assert.equal((await guardUrl('ftp://127.0.0.1/', { allowPrivate: true })).ok, false);
});

test('every address form of the issue is refused; with private targets allowed they pass', async () => {
  for (const url of ISSUE_URLS) {
    const r = await guardUrl(url, { allowPrivate: false, resolve: resolveTo('127.0.0.1') });
    assert.equal(r.ok, false, url);
  }
  assert.equal((await guardUrl('https://[64:ff9b::808:808]/', { allowPrivate: false })).ok, true, 'NAT64 of a public address is public');
  assert.equal((await guardUrl('https://[2002:808:808::1]/', { allowPrivate: false })).ok, true, '6to4 of a public address is public');
  for (const url of ISSUE_URLS) assert.equal((await guardUrl(url, { allowPrivate: true, resolve: resolveTo('127.0.0.1') })).ok, true, url);
});

test('a host that does not resolve is marked unresolved (worth retrying); a refused address is not', async () => {
  const missing = await guardUrl('https://nowhere.example/', { allowPrivate: false, resolve: async () => [] });
  assert.equal(missing.ok === false && missing.unresolved, true);
  const local = await guardUrl('https://inside.example/', { allowPrivate: false, resolve: resolveTo('10.1.1.1') });
  assert.equal(local.ok === false && local.unresolved, undefined);
});
