import test from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from 'uWebSockets.js';
import { ConnectionCounter, type Peer } from '../../src/http/connections.js';
import { seededRandom } from '../../src/random.js';

// The caps count requests cheaply: below half the per-address cap no address is read at all
// (reading it off uWS cost a twentieth of a tick). Whatever the interleaving, no address may
// ever hold more open requests than the cap, and one under it is never refused for its address
// once the uncounted requests are gone.

function request(address: number, reads: { n: number }): HttpResponse {
  return {
    getRemoteAddress: () => {
      reads.n++;
      return new Uint8Array([127, 0, 0, address]).buffer;
    },
  } as unknown as HttpResponse;
}

test('no address ever holds more than its cap, whatever the order of arrivals and departures', () => {
  const random = seededRandom(7);
  const reads = { n: 0 };
  const counter = new ConnectionCounter({ perAddress: 10, total: 1000 });
  const open: { address: number; peer: Peer }[] = [];
  for (let step = 0; step < 20_000; step++) {
    if (open.length > 0 && random() < 0.45) {
      const [gone] = open.splice(Math.floor(random() * open.length), 1);
      counter.release(gone!.peer);
    } else {
      const address = Math.floor(random() * 3);
      try {
        open.push({ address, peer: counter.admit(request(address, reads)) });
      } catch {
        // refused: over the address's cap
      }
    }
    for (const a of [0, 1, 2]) assert.ok(open.filter((o) => o.address === a).length <= 10, `step ${step}: address ${a} over the cap`);
  }
  for (const o of open) counter.release(o.peer);
  assert.deepEqual(counter.snapshot(), { open: 0, addresses: 0 });
  // Requests did get counted by address when many were open.
  assert.ok(reads.n > 0);
});

test('a few open requests read no address; an address under its cap is admitted once the uncounted ones are gone', () => {
  const reads = { n: 0 };
  const counter = new ConnectionCounter({ perAddress: 1000, total: 20_000 });
  const peers = Array.from({ length: 499 }, () => counter.admit(request(1, reads)));
  assert.equal(reads.n, 0, 'below half the cap nothing is read');
  for (const p of peers) counter.release(p);
  const many = Array.from({ length: 999 }, () => counter.admit(request(1, reads)));
  assert.ok(reads.n > 0);
  // 999 open from one address: the 1,000th is admitted, the 1,001st refused.
  many.push(counter.admit(request(1, reads)));
  assert.throws(() => counter.admit(request(1, reads)), /Too many open connections/);
  for (const p of many) counter.release(p);
  assert.deepEqual(counter.snapshot(), { open: 0, addresses: 0 });
});

test('an IPv6 client is capped by its /64: other addresses of the same /64 share the cap, another /64 does not', () => {
  const counter = new ConnectionCounter({ perAddress: 4, total: 1000 });
  const v6 = (prefix: number, host: number): HttpResponse =>
    ({
      getRemoteAddress: () => new Uint8Array([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, prefix, 0, 0, 0, 0, 0, 0, (host >> 8) & 0xff, host & 0xff]).buffer,
    }) as unknown as HttpResponse;
  for (let host = 1; host <= 4; host++) counter.admit(v6(1, host));
  assert.throws(() => counter.admit(v6(1, 999)), /Too many open connections/);
  assert.doesNotThrow(() => counter.admit(v6(2, 1)));
});
