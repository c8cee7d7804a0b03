/**
 * Slow and idle clients, as the errors and configuration pages document them: a request head
 * trickled a byte at a time, a connection that never sends anything and a keep-alive connection
 * left silent after its answer are all closed by the server, unanswered (the parser's 10 s
 * timeout, which a trickle does not renew), and many of them from one address hold no request:
 * the server answers others meanwhile. No timing is asserted, only that each closes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startTestServer } from '../helpers/embedded.js';

interface Outcome {
  /** What the server sent before closing (latin1). */
  answer: string;
  /** Bytes of the head still unsent when the server closed. */
  unsent: number;
}

/**
 * Opens a connection, writes `first`, then `drip` one byte every `pauseMs` until the server
 * closes the connection; resolves with what it answered and what was left to send.
 */
function client(port: number, first: string, drip = '', pauseMs = 500): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let left = drip;
    let timer: NodeJS.Timeout | null = null;
    const next = (): void => {
      if (socket.destroyed || left === '') return;
      socket.write(left[0]!);
      left = left.slice(1);
      timer = setTimeout(next, pauseMs);
    };
    socket.on('connect', () => {
      if (first) socket.write(first);
      timer = setTimeout(next, pauseMs);
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => {
      if (timer) clearTimeout(timer);
      resolve({ answer: Buffer.concat(chunks).toString('latin1'), unsent: left.length });
    });
  });
}

test('a head trickled a byte at a time, a silent connection and a silent keep-alive connection are each closed unanswered; 200 idle connections from one address leave the server answering', async () => {
  const s = await startTestServer();
  try {
    // 120 header bytes at two a second would take a minute: the head must be whole within 10 s.
    const slowHead = client(s.port, 'GET /health HTTP/1.1\r\nhost: x\r\n', `x-pad: ${'a'.repeat(110)}\r\n\r\n`);
    const silent = client(s.port, '');
    const keptAlive = client(s.port, 'GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
    const idle = Array.from({ length: 200 }, () => client(s.port, ''));
    // Meanwhile, from the same address, requests are answered as usual.
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${s.url}/health`)).status, 200);

    const head = await slowHead;
    assert.equal(head.answer, '', 'the trickled head was never answered');
    assert.ok(head.unsent > 0, 'the server closed the connection before the head was whole');
    assert.equal((await silent).answer, '');
    const kept = await keptAlive;
    assert.match(kept.answer, /^HTTP\/1\.1 200 /, 'the request was answered, then the idle connection closed');
    assert.equal([...kept.answer.matchAll(/HTTP\/1\.1 /g)].length, 1);
    for (const c of await Promise.all(idle)) assert.equal(c.answer, '');
    assert.equal((await fetch(`${s.url}/health`)).status, 200);
  } finally {
    await s.stop();
  }
});
