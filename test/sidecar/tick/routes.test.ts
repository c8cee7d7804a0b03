import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { encode } from '@msgpack/msgpack';
import { generateTicks } from '../../../bench/tick/scenarios.js';
import { startTest } from '../helpers.js';

const TICKS = generateTicks({ agents: 30, count: 60, seed: 16 });

/**
 * POSTs `body` in `pieces` socket writes, pausing between them so that the server reads them
 * apart (its body then arrives in several chunks); `chunked` frames it with Transfer-Encoding:
 * chunked (one HTTP chunk per piece) instead of a Content-Length. Resolves with the answer's
 * status line and body (the server closes the connection after answering: connection: close).
 */
async function postInPieces(
  port: number,
  path: string,
  type: string,
  body: Buffer,
  pieces: number,
  chunked = false,
): Promise<{ status: number; body: Buffer }> {
  const socket = connect(port, '127.0.0.1');
  const received: Buffer[] = [];
  socket.on('data', (c: Buffer) => received.push(c));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  const framing = chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`;
  socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: ${type}\r\n${framing}\r\n\r\n`);
  const size = Math.ceil(body.length / pieces);
  for (let at = 0; at < body.length; at += size) {
    await sleep(20);
    const piece = body.subarray(at, at + size);
    socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
  }
  if (chunked) socket.write('0\r\n\r\n');
  await closed;
  const raw = Buffer.concat(received);
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end).toString('latin1');
  let answer = raw.subarray(end + 4);
  const length = /\r\ncontent-length: (\d+)/i.exec(head);
  if (length) answer = answer.subarray(0, Number(length[1]));
  return { status: Number(head.split(' ')[1]), body: answer };
}

/** The same POST sent whole and sent in pieces, each to a fresh sidecar (a tick changes the brain's memory): the answers must be equal. */
async function sameAnswer(path: string, type: string, body: Buffer, workers: number, chunked: boolean): Promise<void> {
  const whole = await startTest({ workers });
  const split = await startTest({ workers });
  try {
    const expected = await postInPieces(whole.port, path, type, body, 1);
    const got = await postInPieces(split.port, path, type, body, 5, chunked);
    assert.equal(expected.status, 200, expected.body.toString());
    assert.equal(got.status, 200, got.body.toString());
    assert.ok(got.body.equals(expected.body), `${path} ${type} in pieces${chunked ? ', chunked' : ''}, ${workers} workers`);
  } finally {
    await whole.close();
    await split.close();
  }
}

test('a body that arrives in several chunks is answered as when it arrives in one, on /tick and /ticks, inline and with workers', async () => {
  const batch = Buffer.from(JSON.stringify(TICKS));
  for (const workers of [0, 1]) {
    await sameAnswer('/ticks', 'application/json', batch, workers, false);
    await sameAnswer('/tick', 'application/json', Buffer.from(JSON.stringify(TICKS[0])), workers, false);
  }
  await sameAnswer('/ticks', 'application/msgpack', Buffer.from(encode(TICKS)), 0, false);
});

test('a chunked upload (no Content-Length) is collected whole, its buffer growing as the chunks come', async () => {
  await sameAnswer('/ticks', 'application/json', Buffer.from(JSON.stringify(TICKS)), 0, true);
  await sameAnswer('/tick', 'application/json', Buffer.from(JSON.stringify(TICKS[1])), 0, true);
});

test('a body in pieces past the limit is refused 413 as it arrives, also without a Content-Length', async () => {
  const s = await startTest({ workers: 0, maxBody: 1000 });
  try {
    const big = Buffer.from(JSON.stringify({ ...TICKS[0], pad: 'x'.repeat(3000) }));
    const answer = await postInPieces(s.port, '/tick', 'application/json', big, 6, true);
    assert.equal(answer.status, 413);
    assert.equal(JSON.parse(answer.body.toString()).error.code, 'payload_too_large');
  } finally {
    await s.close();
  }
});
