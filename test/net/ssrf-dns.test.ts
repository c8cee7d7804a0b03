/**
 * How the SSRF guard asks DNS: straight to the name servers (c-ares, Node's dns.Resolver), with a
 * time limit, never through getaddrinfo on libuv's four shared worker threads. A receiver's name
 * whose name server never answers (a tenant may register one) held a worker thread for each
 * lookup until the system resolver gave up; a few such deliveries or registrations at once held
 * all four, and every file read, password hash and other tenant's lookup waited behind them.
 * A name DNS does not know (only in /etc/hosts, such as localhost) is looked up the system's way,
 * one at a time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { pbkdf2 } from 'node:crypto';
import { dnsResolve, guardUrl } from '../../src/net/ssrf.js';

/** A name server on 127.0.0.1: `answer` decides each query's reply (null: never answer). */
async function nameServer(
  answer: (name: string, type: number) => { rcode: number; a?: string } | null,
): Promise<{ server: string; queries: number; close(): void }> {
  const socket: Socket = createSocket('udp4');
  const state = { queries: 0 };
  socket.on('message', (q, from) => {
    state.queries++;
    // The question: labels from byte 12, then its type and class.
    let i = 12;
    const labels: string[] = [];
    while (q[i]! > 0) {
      labels.push(q.subarray(i + 1, i + 1 + q[i]!).toString('latin1'));
      i += q[i]! + 1;
    }
    const type = q.readUInt16BE(i + 1);
    const reply = answer(labels.join('.'), type);
    if (reply === null) return;
    const head = Buffer.from(q.subarray(0, i + 5));
    head[2] = 0x81 | (q[2]! & 0x01 ? 0x01 : 0); // QR, RD echoed
    head[3] = 0x80 | reply.rcode; // RA, RCODE
    head.writeUInt16BE(0, 8);
    head.writeUInt16BE(0, 10);
    if (reply.a && type === 1) {
      head.writeUInt16BE(1, 6);
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(1, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(4, 10);
      reply.a.split('.').forEach((b, k) => (rr[12 + k] = Number(b)));
      socket.send(Buffer.concat([head, rr]), from.port, from.address);
    } else {
      head.writeUInt16BE(0, 6);
      socket.send(head, from.port, from.address);
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    get queries() {
      return state.queries;
    },
    close: () => socket.close(),
  };
}

test("a name server that never answers: each lookup ends refused as unresolved, and libuv's worker threads stay free meanwhile", async () => {
  const ns = await nameServer(() => null);
  try {
    const resolve = dnsResolve({ servers: [ns.server], timeoutMs: 3000, tries: 1 });
    const pending = Array.from({ length: 8 }, (_, i) => guardUrl(`https://hook${i}.blackhole.example/`, { allowPrivate: false, resolve }));
    while (ns.queries < 8) await new Promise((r) => setImmediate(r));
    // Eight jobs on the worker threads finish while the eight lookups are still waiting.
    let settled = 0;
    for (const p of pending) void p.then(() => settled++);
    await Promise.all(Array.from({ length: 8 }, () => new Promise((done) => pbkdf2('x', 'y', 1, 32, 'sha256', done))));
    assert.equal(settled, 0, 'the thread-pool jobs did not wait for the lookups');
    for (const r of await Promise.all(pending)) {
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.unresolved, true);
      assert.match(!r.ok ? r.reason : '', /does not resolve \(ETIMEOUT\)/);
    }
  } finally {
    ns.close();
  }
});

test('answers are judged as before: a public address admitted, a private one refused (rebinding), and a name DNS does not know looked up the system way (localhost)', async () => {
  let next = '93.184.216.34';
  const ns = await nameServer((name) => (name === 'hooks.example.com' ? { rcode: 0, a: next } : { rcode: 3 }));
  try {
    const resolve = dnsResolve({ servers: [ns.server], timeoutMs: 3000, tries: 1 });
    const ok = await guardUrl('https://hooks.example.com/x', { allowPrivate: false, resolve });
    assert.equal(ok.ok, true);
    assert.deepEqual(ok.ok && ok.addresses, [{ address: '93.184.216.34', family: 4 }]);
    next = '10.0.0.7';
    const rebound = await guardUrl('https://hooks.example.com/x', { allowPrivate: false, resolve });
    assert.equal(rebound.ok, false);
    assert.match(!rebound.ok ? rebound.reason : '', /private address \(10\.0\.0\.7\)/);
    // localhost is never asked of DNS: the system's lookup (/etc/hosts) finds it.
    const local = await guardUrl('http://localhost:9/', { allowPrivate: 'loopback', resolve });
    assert.equal(local.ok, true);
    assert.ok(local.ok && local.addresses.some((a) => a.address === '127.0.0.1' || a.address === '::1'));
    const none = await guardUrl('https://nothing.example.com/', { allowPrivate: false, resolve });
    assert.equal(none.ok, false);
    assert.equal(!none.ok && none.unresolved, true);
  } finally {
    ns.close();
  }
});
