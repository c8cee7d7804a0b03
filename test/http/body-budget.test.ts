import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { BODY_BUDGET_BYTES, HttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/reply.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTest } from '../sidecar/helpers.js';

/**
 * Bodies still arriving are held in memory, each up to its route's limit, and only the
 * connection caps bounded how many: clients sending bodies just short of the limit held up to
 * 1,000 × the limit from one address (4 GiB on the sidecar's /ticks, whose buffer is made at the
 * declared length on the first piece, so a few bytes sent were enough), and twenty addresses
 * stopped the process for lack of memory. A server-wide body budget now refuses the body that
 * would pass it (503, Retry-After: 1, the connection closed), and a body gives its bytes back
 * when it is whole, refused or abandoned.
 */

interface Holder {
  socket: Socket;
  /** The first bytes of an answer, or '' when the server closed without one. */
  answer: Promise<string>;
}

/** Whether `raw` holds an answer's head and the body its Content-Length announces. */
function whole(raw: string): boolean {
  const end = raw.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: *(\d+)/i.exec(raw.slice(0, end));
  return end >= 0 && length !== null && raw.length - end - 4 >= Number(length[1]);
}

/** A client that sends a request head declaring `declared` bytes and the first `sent` of them, and holds the rest. */
function hold(port: number, path: string, declared: number, sent: number, headers = ''): Promise<Holder> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const answer = new Promise<string>((done) => {
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        if (whole(got)) done(got);
      });
      socket.on('close', () => done(got));
    });
    socket.on('error', () => {});
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n${headers}\r\n`);
      socket.write(Buffer.alloc(sent, 0x20), (err) => (err ? reject(err) : resolve({ socket, answer })));
    });
  });
}

/** Holders sent until one is refused; returns that answer, and closes every holder. */
async function untilRefused(port: number, path: string, declared: number, sent: number, most: number, headers = ''): Promise<string> {
  const holders: Holder[] = [];
  try {
    for (let i = 0; i < most; i++) {
      holders.push(await hold(port, path, declared, sent, headers));
      const refused = await Promise.race([...holders.map((h) => h.answer), new Promise<null>((r) => setImmediate(() => r(null)))]);
      if (refused !== null) return refused;
    }
    // The last ones may be answered a turn later.
    return await Promise.race(holders.map((h) => h.answer));
  } finally {
    for (const h of holders) h.socket.destroy();
  }
}

/** Sends the rest of a held body; the answer's status line. */
async function finish(h: Holder, rest: number): Promise<string> {
  h.socket.write(Buffer.alloc(rest, 0x20));
  const answer = await h.answer;
  h.socket.destroy();
  return answer.split('\r\n', 1)[0]!;
}

/**
 * Two bodies of `declared` bytes held at once (`sent` of each first), then finished: polled
 * until both are answered `status` (the server learns of earlier clients' closes on its next turns).
 */
async function untilBothAnswered(port: number, path: string, declared: number, sent: number, status: RegExp): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const a = await hold(port, path, declared, sent);
    const b = await hold(port, path, declared, sent);
    const answers = [await finish(a, declared - sent), await finish(b, declared - sent)];
    if (answers.every((line) => status.test(line))) return;
    assert.ok(attempt < 200, `the budget never came back: ${answers.join(', ')}`);
    await new Promise((r) => setImmediate(r));
  }
}

function assertRefusal(answer: string): void {
  assert.match(answer, /^HTTP\/1\.1 503 /, answer.slice(0, 200));
  assert.match(answer, /\r\nretry-after: 1\r\n/i);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'unavailable');
  assert.match(body.error.message, /request bodies/);
}

test('the default body budget is 256 MiB', () => {
  assert.equal(BODY_BUDGET_BYTES, 256 * 1024 * 1024);
});

test('bodies arriving in pieces are bounded by the server-wide budget; their bytes come back when they end (generic router)', async () => {
  const server = new HttpServer({ bodyBudget: 100_000 });
  server.post('/echo', (req) => json(200, { n: req.body.length }));
  const port = await server.listen('127.0.0.1', 0);
  try {
    // Each holds 30,000 bytes of a 40,000-byte body: the fourth cannot fit.
    assertRefusal(await untilRefused(port, '/echo', 40_000, 30_000, 20));
    // Every holder went away: their bytes are back, so two whole bodies of 40,000 fit at once.
    await untilBothAnswered(port, '/echo', 40_000, 30_000, /^HTTP\/1\.1 200 /);
    // A body in one piece is not held while it arrives, whatever the budget.
    const whole = await rawRequest(port, { method: 'POST', target: '/echo', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(whole.status, 200);
  } finally {
    await server.close(100);
  }
});

test('a route with a body shortcut takes from the same budget', async () => {
  const server = new HttpServer({ bodyBudget: 100_000 });
  server.post('/ingest', (req) => json(200, { via: 'handler', n: req.body.length }), {
    headers: ['content-length'],
    maxBody: 50_000,
    bodyShortcut: () => (body) => json(202, { via: 'shortcut', n: body.length }),
  });
  const port = await server.listen('127.0.0.1', 0);
  try {
    assertRefusal(await untilRefused(port, '/ingest', 40_000, 30_000, 20));
    await untilBothAnswered(port, '/ingest', 40_000, 30_000, /^HTTP\/1\.1 202 /);
  } finally {
    await server.close(100);
  }
});

test("the sidecar's /tick and /ticks take their body's buffer from the budget: a declared length with a few bytes sent holds it all", async () => {
  const sidecar = await startTest({ bodyBudget: 100_000 });
  try {
    // Ten bytes sent of a 40,000-byte body: the route makes its 40,000-byte buffer at once.
    assertRefusal(await untilRefused(sidecar.port, '/ticks', 40_000, 10, 20));
    assertRefusal(await untilRefused(sidecar.port, '/tick', 40_000, 10, 20));
    // Each whole body is 40,000 spaces: not JSON, so 400 (past the budget it would be 503).
    await untilBothAnswered(sidecar.port, '/ticks', 40_000, 10, /^HTTP\/1\.1 400 /);
    const r = await fetch(`${sidecar.url}/ticks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
    assert.equal(r.status, 200);
  } finally {
    await sidecar.close();
  }
});
