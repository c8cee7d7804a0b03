/**
 * Requests whose framing two readers could take two ways, over raw sockets against a real
 * embedded server and a real sidecar: a second request hidden in the first one's body is never
 * answered. And pipelining, which uWS supports behind an answer given at once: a HEAD answer
 * left uWS waiting for its body (endWithoutBody with a length), so its connection never timed
 * out and a request pipelined behind it closed the connection with neither answered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestServer } from '../helpers/embedded.js';
import { fullTick, startTest } from '../sidecar/helpers.js';

/** The status codes the server answered on one connection, in order, once it closed it. */
function exchange(port: number, bytes: string): Promise<string[]> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () =>
      resolve(
        [
          ...Buffer.concat(chunks)
            .toString('latin1')
            .matchAll(/HTTP\/1\.1 (\d{3})/g),
        ].map((m) => m[1]!),
      ),
    );
  });
}

const HIDDEN = 'GET /hidden-request HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n';

function cases(post: string, body: string): [string, string, string[]][] {
  const head = `POST ${post} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n`;
  return [
    // uWS frames by the first length; a proxy taking the last would have sent HIDDEN as body.
    ['two lengths, the first short', `${head}content-length: ${body.length}\r\ncontent-length: ${body.length + HIDDEN.length}\r\n\r\n${body}${HIDDEN}`, []],
    ['a length and chunked', `${head}content-length: ${body.length + 5 + HIDDEN.length}\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n${HIDDEN}`, []],
    ['chunked and a length', `${head}transfer-encoding: chunked\r\ncontent-length: 4\r\n\r\n0\r\n\r\n${HIDDEN}`, []],
    ['a chunk shorter than its data', `${head}transfer-encoding: chunked\r\n\r\n1\r\n${body}\r\n0\r\n\r\n${HIDDEN}`, []],
    ['a chunk size past 64 bits', `${head}transfer-encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n${HIDDEN}`, []],
    // Answered at once, so the next request on the connection is read and answered too.
    ['HEAD, then a GET behind it', `HEAD /health HTTP/1.1\r\nhost: x\r\n\r\nGET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`, ['200', '200']],
    ['three GETs', `${'GET /health HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(2)}GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`, ['200', '200', '200']],
    ['HEAD with connection: close', 'HEAD /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', ['200']],
  ];
}

async function probe(port: number, post: string, body: string): Promise<void> {
  const list = cases(post, body);
  const answers = await Promise.all(list.map(([, bytes]) => exchange(port, bytes)));
  assert.deepEqual(
    answers.map((statuses, i) => `${list[i]![0]}: ${statuses.join(',')}`),
    list.map(([what, , statuses]) => `${what}: ${statuses.join(',')}`),
  );
  assert.deepEqual(await exchange(port, 'GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), ['200'], 'the server goes on');
}

test('embedded server: no request hidden in another is answered; HEAD and GETs pipeline', async () => {
  const s = await startTestServer();
  try {
    await probe(s.port, '/v1/auth/login', '{"email":"a@example.com","password":"x"}');
  } finally {
    await s.stop();
  }
});

test('sidecar: no request hidden in another is answered; HEAD and GETs pipeline', async () => {
  const s = await startTest();
  try {
    await probe(Number(new URL(s.url).port), '/tick', JSON.stringify(fullTick(3)));
  } finally {
    await s.close();
  }
});
