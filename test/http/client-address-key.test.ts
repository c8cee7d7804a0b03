/**
 * The per-client-address limits (login attempts, widget visitor calls) count an IPv6 client by
 * its /64: a host handed a /64 can send from 2^64 addresses, so counting each address alone let
 * one client past every such limit. IPv4, plain or IPv4-mapped as a dual-stack socket reports
 * it, counts by the address.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientAddressKey } from '../../src/http/ratelimit.js';

test('IPv6 addresses of one /64 share a key, in every text form; other /64s and IPv4 addresses have their own', () => {
  const one = [
    '2001:0db8:0001:0002:0000:0000:0000:0001', // as uWebSockets.js reports it
    '2001:db8:1:2::1',
    '2001:db8:1:2:ffff:ffff:ffff:ffff',
    '[2001:db8:1:2::abcd]',
    '2001:db8:1:2::1%eth0',
    '2001:DB8:1:2:a:b:1.2.3.4',
  ];
  for (const a of one) assert.equal(clientAddressKey(a), '2001:db8:1:2::/64', a);
  assert.equal(clientAddressKey('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  assert.equal(clientAddressKey('0000:0000:0000:0000:0000:0000:0000:0001'), '0:0:0:0::/64');
  assert.equal(clientAddressKey('::1'), '0:0:0:0::/64');
  // IPv4, plain and mapped, by the address: the mapped form is not one /64 for every IPv4 client.
  assert.equal(clientAddressKey('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
  assert.equal(clientAddressKey('::ffff:203.0.113.9'), '203.0.113.9');
  assert.notEqual(clientAddressKey('::ffff:203.0.113.9'), clientAddressKey('::ffff:203.0.113.10'));
  assert.equal(clientAddressKey('203.0.113.9'), '203.0.113.9');
  // Not an address: its own key, never merged with another.
  for (const odd of ['', 'x:y', '1::2::3', '1:2:3:4:5:6:7:8:9', '::ffff:300.1.1.1']) assert.equal(clientAddressKey(odd), odd, odd);
});
