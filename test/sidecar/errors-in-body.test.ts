import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { decode, encode } from '@msgpack/msgpack';
import { HttpError } from '../../src/http/errors.js';
import { errorsInBodyOf } from '../../src/http/errors-in-body.js';
import { HttpServer } from '../../src/http/server.js';
import { TICK_MAX_BODY } from '../../src/sidecar/tick/handler.js';
import { MAX_BATCH_TICKS } from '../../src/sidecar/tick/tick-array.js';
import { fullTick, postTo, startTest, type Answer, type Enc } from './helpers.js';

const TOKEN = 'bst_errors-in-body-test';

/** The error an answer carries: its status must be 200, its body decoded in the request's encoding. */
function errorIn(a: Answer, enc: Enc): { code: string; message: string; details?: unknown[] } {
  assert.equal(a.status, 200, `status ${a.status}: ${a.bytes.toString()}`);
  assert.equal(a.contentType, enc === 'json' ? 'application/json' : 'application/msgpack');
  const body = (enc === 'json' ? a.json() : decode(a.bytes)) as { error?: { code: string; message: string; details?: unknown[] } };
  assert.ok(body.error, `no error in ${JSON.stringify(body)}`);
  return body.error;
}

const auth = { authorization: `Bearer ${TOKEN}` };

for (const workers of [0, 1]) {
  const mode = workers === 0 ? 'inline' : 'with a worker';
  test(`?errors=body answers every refusal of /tick and /ticks 200 with the error body, ${mode}, JSON and MessagePack`, async () => {
    const s = await startTest({ token: TOKEN, workers, stateFile: null });
    try {
      for (const enc of ['json', 'msgpack'] as const) {
        for (const route of ['/tick', '/ticks']) {
          const good = route === '/tick' ? fullTick(5) : [fullTick(5)];
          // 401: no token, a wrong one in each form, and the right one after a wrong header.
          assert.equal(errorIn(await postTo(`${s.url}${route}?errors=body`, good, enc), enc).code, 'unauthorized');
          assert.equal(errorIn(await postTo(`${s.url}${route}?errors=body&token=wrong`, good, enc), enc).code, 'unauthorized');
          assert.equal(errorIn(await postTo(`${s.url}${route}?token=wrong&errors=body`, good, enc), enc).code, 'unauthorized');
          assert.equal(errorIn(await postTo(`${s.url}${route}?errors=body`, good, enc, { 'x-brain-token': 'wrong' }), enc).code, 'unauthorized');
          // 400: not a tick (/tick), not an array (/ticks), not decodable at all.
          const bad = errorIn(await postTo(`${s.url}${route}?errors=body`, route === '/tick' ? { snapshot: {} } : { not: 'an array' }, enc, auth), enc);
          assert.equal(bad.code, 'bad_request');
          if (route === '/tick') assert.ok(Array.isArray(bad.details) && bad.details.length > 0, 'the details of a 400 are kept');
          assert.equal(errorIn(await postTo(`${s.url}${route}?errors=body&token=${TOKEN}`, Buffer.from([0xc1, 0x7b]), enc), enc).code, 'bad_request');
          // 413: a declared body over the limit, and (/ticks) more elements than the cap.
          const big = route === '/tick' ? Buffer.alloc(TICK_MAX_BODY + 1, 0x20) : Buffer.alloc(4 * 1024 * 1024 + 1, 0x20);
          assert.equal(errorIn(await postTo(`${s.url}${route}?errors=body`, big, enc, auth), enc).code, 'payload_too_large');
          if (route === '/ticks') {
            const many = Array.from({ length: MAX_BATCH_TICKS + 1 }, () => fullTick(6));
            assert.equal(errorIn(await postTo(`${s.url}${route}?errors=body`, many, enc, auth), enc).code, 'payload_too_large');
          }
          // The same refusal without the parameter keeps its status.
          assert.equal((await postTo(`${s.url}${route}`, good, enc)).status, 401);
          assert.equal((await postTo(`${s.url}${route}?errors=status`, good, enc)).status, 401);
          assert.equal((await postTo(`${s.url}${route}?errors=bodyx`, good, enc)).status, 401);
          // A good request with the parameter is answered as without it: a reply, not an error.
          const flagged = await postTo(`${s.url}${route}?token=${TOKEN}&errors=body`, good, enc);
          assert.equal(flagged.status, 200);
          const body = (enc === 'json' ? flagged.json() : decode(flagged.bytes)) as { agent?: number; intents?: unknown[] } | { agent?: number }[];
          const reply = Array.isArray(body) ? body[0]! : body;
          assert.equal(reply.agent, 5, JSON.stringify(body));
          assert.ok(!('error' in reply));
        }
      }
      // 415: the Content-Type is neither JSON nor MessagePack, so the error body is JSON.
      const media = await postTo(`${s.url}/tick?errors=body`, 'x', 'json', { ...auth, 'content-type': 'text/plain' });
      assert.equal(errorIn(media, 'json').code, 'unsupported_media_type');
      // Percent-encoded and among other parameters, it still counts.
      assert.equal(errorIn(await postTo(`${s.url}/tick?a=1&errors=%62ody`, fullTick(), 'json'), 'json').code, 'unauthorized');
      // Every other route a mod may call: /status, /metrics, a wrong path, a wrong method.
      for (const [path, code] of [
        ['/status?errors=body', 'unauthorized'],
        ['/metrics?errors=body', 'unauthorized'],
        ['/tik?errors=body', 'not_found'],
        ['/tick?errors=body', 'method_not_allowed'],
      ] as const) {
        const res = await fetch(`${s.url}${path}`);
        assert.equal(res.status, 200, path);
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, code, path);
      }
      assert.equal((await fetch(`${s.url}/status`)).status, 401);
      // Refusals are counted as refusals, whatever status carried them.
      assert.ok(s.status().ticks.rejected > 0);
    } finally {
      await s.close();
    }
  });
}

/** A keep-alive connection that sends requests one at a time and reads each whole answer. */
class KeepAlive {
  private readonly socket: Socket;
  private buffered = Buffer.alloc(0);
  private waiter: (() => void) | null = null;

  private closed = false;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiter?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  /** Reads up to and including `text` (uWS's `100 Continue`, sent once it has taken a request's headers). */
  async consume(text: string): Promise<void> {
    for (;;) {
      const at = this.buffered.indexOf(text);
      if (at >= 0) {
        this.buffered = this.buffered.subarray(at + text.length);
        return;
      }
      await this.more();
    }
  }

  private async more(): Promise<void> {
    if (this.closed) throw new Error('the server closed the connection');
    await new Promise<void>((resolve) => (this.waiter = resolve));
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  async answer(): Promise<{ status: number; headers: string; body: Buffer }> {
    for (;;) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buffered.subarray(0, end).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.subarray(end + 4, end + 4 + length);
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(head.slice(9, 12)), headers: head, body };
        }
      }
      await this.more();
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

test('?errors=body: a tick arriving while the sidecar shuts down gets 200 with 503 unavailable in the body (without it, 503)', async () => {
  const s = await startTest({ stateFile: null });
  const held = new KeepAlive(s.port);
  const plain = new KeepAlive(s.port);
  const flagged = new KeepAlive(s.port);
  try {
    const body = JSON.stringify(fullTick(3));
    const request = (target: string, b: string): string =>
      `POST ${target} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
    // Two connections answered once, so they are open when the listening socket closes.
    plain.write(request('/tick', body));
    flagged.write(request('/tick', body));
    assert.equal((await plain.answer()).status, 200);
    assert.equal((await flagged.answer()).status, 200);
    // A tick whose body has not all arrived holds the server open while it closes; uWS says
    // `100 Continue` once it has taken the request (and counted it in flight).
    const head = request('/tick', body).replace('\r\n\r\n', '\r\nexpect: 100-continue\r\n\r\n');
    held.write(head.slice(0, head.length - 10));
    await held.consume('HTTP/1.1 100 Continue\r\n\r\n');
    const closing = s.close();
    plain.write(request('/tick', body));
    flagged.write(request('/tick?errors=body', body));
    const refused = await plain.answer();
    assert.equal(refused.status, 503);
    const inBody = await flagged.answer();
    assert.equal(inBody.status, 200);
    assert.equal((JSON.parse(inBody.body.toString()) as { error: { code: string } }).error.code, 'unavailable');
    held.write(head.slice(head.length - 10));
    assert.equal((await held.answer()).status, 200);
    await closing;
  } finally {
    held.close();
    plain.close();
    flagged.close();
    await s.close();
  }
});

test('errorsInBodyOf: only errors=body turns it on; the error body follows a MessagePack request', () => {
  assert.equal(errorsInBodyOf(undefined, 'application/json'), null);
  assert.equal(errorsInBodyOf('', 'application/json'), null);
  assert.equal(errorsInBodyOf('token=x', 'application/json'), null);
  assert.equal(errorsInBodyOf('errors=body', 'application/json'), 'json');
  assert.equal(errorsInBodyOf('errors=body', undefined), 'json');
  assert.equal(errorsInBodyOf('errors=body', 'text/plain'), 'json');
  assert.equal(errorsInBodyOf('token=x&errors=body', 'application/msgpack'), 'msgpack');
  assert.equal(errorsInBodyOf('errors=body', 'application/x-msgpack'), 'msgpack');
  assert.equal(errorsInBodyOf('xerrors=body', 'application/json'), null);
  assert.equal(errorsInBodyOf('errors=Body', 'application/json'), null);
  assert.equal(errorsInBodyOf('errors=status', 'application/json'), null);
  assert.equal(errorsInBodyOf('errors=%62ody', 'application/json'), 'json');
});

test('a server not built to honour ?errors=body (the control plane, the APIs) keeps its statuses', async () => {
  const server = new HttpServer();
  server.get('/x', () => {
    throw new HttpError('forbidden');
  });
  server.post('/y', () => ({ status: 200, body: 'ok' }), { maxBody: 4 });
  const port = await server.listen('127.0.0.1', 0);
  try {
    assert.equal((await fetch(`http://127.0.0.1:${port}/x?errors=body`)).status, 403);
    assert.equal((await fetch(`http://127.0.0.1:${port}/y?errors=body`, { method: 'POST', body: 'too long' })).status, 413);
    assert.equal((await fetch(`http://127.0.0.1:${port}/z?errors=body`)).status, 404);
  } finally {
    await server.close();
  }
  // The sidecar's own server answers a MessagePack caller's refusal in MessagePack.
  const s = await startTest({ token: TOKEN, stateFile: null });
  try {
    const a = await postTo(`${s.url}/tick?errors=body`, encode(fullTick()), 'msgpack');
    assert.equal(errorIn(a, 'msgpack').code, 'unauthorized');
  } finally {
    await s.close();
  }
});
