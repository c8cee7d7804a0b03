import { test } from 'node:test';
import { decode } from '@msgpack/msgpack';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Brain, DEFAULT_BUNDLE, parseTickRequest, type TickRequest, type TickResponse } from '../../../brain/index.js';
import { HttpServer } from '../../../src/http/server.js';
import type { DialogueWiring } from '../../../src/sidecar/dialogue.js';
import type { Evaluator } from '../../../src/sidecar/tick/evaluator.js';
import { silentLogger } from '../../../src/log.js';
import { TickBatch } from '../../../src/sidecar/tick/batch.js';
import { TickHandler } from '../../../src/sidecar/tick/handler.js';
import { mountTick, mountTicks } from '../../../src/sidecar/tick/routes.js';
import { MAX_BATCH_TICKS } from '../../../src/sidecar/tick/tick-array.js';
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import { fullTick, post, postTo, startTest } from '../helpers.js';

/** A tick of its own for each agent: no squad, so no agent's answer depends on another's. */
function loneTick(agent: number, time: number): Record<string, unknown> {
  const tick = fullTick(agent) as { snapshot: Record<string, unknown> };
  delete tick.snapshot.squad;
  tick.snapshot.time_s = time;
  const targets = tick.snapshot.targets as { pos: { x: number } }[];
  // Spread the situations: some agents see their hostile close, some far, some not at all.
  if (agent % 3 === 0) tick.snapshot.targets = [];
  else targets[0]!.pos.x = 1200 + (agent % 7) * 15;
  return tick;
}

/** A tick's body as uWS hands it over: an ArrayBuffer the batch must copy before the callback returns. */
function bodyOf(agent: number): ArrayBuffer {
  const bytes = Buffer.from(JSON.stringify(loneTick(agent, 1)));
  const body = new ArrayBuffer(bytes.length);
  new Uint8Array(body).set(bytes);
  return body;
}

/** A uWS response double: what end() sends is recorded in `written` as `name:body`. */
function fakeResponse(name: string, written: string[]): UwsResponse {
  const res = {
    cork(fn: () => void) {
      fn();
      return res;
    },
    writeStatus: () => res,
    writeHeader: () => res,
    end(body: Uint8Array | string) {
      written.push(`${name}:${Buffer.from(body).toString()}`);
      return res;
    },
  };
  return res as unknown as UwsResponse;
}

test('ticks arriving together are answered as one brain answers them in turn, bad ones at once', async () => {
  const sidecar = await startTest();
  try {
    const reference = new Brain(DEFAULT_BUNDLE);
    for (const time of [100, 101.5]) {
      const ticks = Array.from({ length: 120 }, (_, k) => loneTick(1000 + k, time));
      const bad = Array.from({ length: 10 }, (_, k) => {
        const tick = loneTick(5000 + k, time) as { snapshot: { self_state: Record<string, unknown> } };
        delete tick.snapshot.self_state.health;
        return tick;
      });
      const answers = await Promise.all([...ticks, ...bad].map((tick) => post(sidecar.url, tick)));
      for (let k = 0; k < ticks.length; k++) {
        const parsed = parseTickRequest(ticks[k]);
        assert.ok(parsed.ok);
        assert.equal(answers[k]!.status, 200);
        assert.deepEqual(answers[k]!.json(), reference.tick(parsed.request));
      }
      for (const answer of answers.slice(ticks.length)) {
        assert.equal(answer.status, 400);
        assert.match((answer.json() as { error: { message: string } }).error.message, /snapshot\.self_state\.health/);
      }
    }
    assert.equal(sidecar.status().ticks.ok, 240);
    assert.equal(sidecar.status().ticks.rejected, 20);
  } finally {
    await sidecar.close();
  }
});

/** An inline evaluator that answers Idle, and throws on agent 13. */
function failingOn13(): Evaluator {
  return {
    mode: 'inline',
    tick(request: TickRequest): TickResponse {
      if (request.snapshot.agent === 13) throw new Error('brain failed on purpose');
      return { agent: request.snapshot.agent, posture: 'standing', intents: [{ kind: 'Idle', reason: 'none' }] };
    },
  } as unknown as Evaluator;
}

test('a brain failure answers 500 for its own tick only, and the batch goes on', async () => {
  const ticks = new TickHandler(failingOn13());
  const server = new HttpServer();
  mountTick(server, ticks);
  const port = await server.listen('127.0.0.1', 0);
  try {
    const agents = [11, 12, 13, 14, 15, 13, 16];
    const answers = await Promise.all(agents.map((agent) => post(`http://127.0.0.1:${port}`, loneTick(agent, 5))));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 500, 200, 200, 500, 200],
    );
    assert.equal((answers[2]!.json() as { error: { code: string } }).error.code, 'internal');
    assert.deepEqual(answers[6]!.json(), { agent: 16, posture: 'standing', intents: [{ kind: 'Idle', reason: 'none' }] });
    assert.deepEqual(ticks.counters, { ok: 5, rejected: 0, failed: 2 });
  } finally {
    await server.close();
  }
});

test('a brain failure inside a POST /ticks body is an internal error in its place; the other elements are answered', async () => {
  const ticks = new TickHandler(failingOn13());
  const server = new HttpServer({ logger: silentLogger });
  mountTicks(server, ticks);
  const port = await server.listen('127.0.0.1', 0);
  try {
    for (const enc of ['json', 'msgpack'] as const) {
      const agents = [11, 13, 12, 13];
      const r = await postTo(`http://127.0.0.1:${port}/ticks`, [...agents.map((agent) => loneTick(agent, 5)), { snapshot: { agent: 20 } }], enc);
      assert.equal(r.status, 200);
      const idle = (agent: number): TickResponse => ({ agent, posture: 'standing', intents: [{ kind: 'Idle', reason: 'none' }] });
      const body = enc === 'json' ? r.json() : decode(r.bytes);
      const [a, b, c, d, e] = body as Record<string, unknown>[];
      assert.deepEqual([a, c], [idle(11), idle(12)]);
      assert.equal((b as { agent: number; error: { code: string } }).error.code, 'internal');
      assert.equal((b as { agent: number }).agent, 13);
      assert.deepEqual(b, d);
      assert.equal((e as { agent: number; error: { code: string } }).agent, 20);
      assert.equal((e as { error: { code: string } }).error.code, 'bad_request');
    }
    assert.deepEqual(ticks.counters, { ok: 4, rejected: 2, failed: 4 });
  } finally {
    await server.close();
  }
});

test('a POST /ticks reply longer than the first buffer of its writer is written whole, byte for byte as JSON.stringify', async () => {
  // Replies of ~320 bytes each: 1,024 of them pass the writer's first 64 KiB several times.
  const reason = 'r'.repeat(256);
  const evaluator = {
    mode: 'inline',
    tick: (request: TickRequest): TickResponse => ({ agent: request.snapshot.agent, posture: 'standing', intents: [{ kind: 'Idle', reason }] }),
  } as unknown as Evaluator;
  const server = new HttpServer({ logger: silentLogger });
  mountTicks(server, new TickHandler(evaluator));
  const port = await server.listen('127.0.0.1', 0);
  try {
    const agents = Array.from({ length: MAX_BATCH_TICKS }, (_, k) => 1 + k);
    const r = await postTo(
      `http://127.0.0.1:${port}/ticks`,
      agents.map((agent) => loneTick(agent, 5)),
    );
    assert.equal(r.status, 200);
    assert.equal(r.bytes.toString(), JSON.stringify(agents.map((agent) => ({ agent, posture: 'standing', intents: [{ kind: 'Idle', reason }] }))));
  } finally {
    await server.close();
  }
});

test('clients gone before their batch is answered are skipped; the rest are answered and the server stays up', async () => {
  const sidecar = await startTest();
  try {
    const body = JSON.stringify(loneTick(77, 10));
    const request = `POST /tick HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const port = Number(new URL(sidecar.url).port);
    // Sockets that send a whole tick and reset at once, among ticks that wait for their answer.
    const quitters = Array.from({ length: 20 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.on('connect', () => socket.write(request, () => socket.resetAndDestroy()));
      return new Promise((resolve) => socket.on('close', resolve));
    });
    const stayers = Array.from({ length: 20 }, (_, k) => post(sidecar.url, loneTick(200 + k, 10)));
    const answers = await Promise.all(stayers);
    await Promise.all(quitters);
    assert.ok(answers.every((a) => a.status === 200));
    const health = await fetch(`${sidecar.url}/health`);
    assert.equal(await health.text(), 'ok');
    const counters = sidecar.status().ticks;
    assert.equal(counters.failed, 0);
    assert.ok(counters.ok >= 20 && counters.ok <= 40, `ok ${counters.ok}`);
  } finally {
    await sidecar.close();
  }
});

test('a batch writes nothing to a response whose client went away, and finishes every request', async () => {
  const evaluator = {
    mode: 'inline',
    tick: (request: TickRequest): TickResponse => ({ agent: request.snapshot.agent, posture: 'standing', intents: [] }),
  } as unknown as Evaluator;
  const ticks = new TickHandler(evaluator);
  const batch = new TickBatch(ticks);
  const written: string[] = [];
  let done = 0;
  const control = { logger: silentLogger, defaultHeaders: {}, done: () => done++, hold: () => {} };
  const response = (name: string) => fakeResponse(name, written);
  const gone = { aborted: false };
  batch.add(response('a'), { aborted: false }, control, bodyOf(1), 'json');
  batch.add(response('b'), gone, control, bodyOf(2), 'json');
  batch.add(response('c'), { aborted: false }, control, bodyOf(3), 'json');
  batch.addWhole(response('d'), { aborted: false }, control, Buffer.from('{"snapshot":{}}'), 'json');
  gone.aborted = true;
  assert.deepEqual(written, [], 'nothing is answered before the turn ends');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(written.length, 3);
  assert.deepEqual(written.slice(0, 2), ['a:{"agent":1,"posture":"standing","intents":[]}', 'c:{"agent":3,"posture":"standing","intents":[]}']);
  assert.match(written[2]!, /^d:\{"error":\{"code":"bad_request".*snapshot\.agent/);
  assert.equal(done, 4);
  assert.deepEqual(ticks.counters, { ok: 3, rejected: 1, failed: 0 });

  // More body bytes in one turn than the batch's shared buffer holds: the rest get their own copies.
  written.length = 0;
  for (let agent = 100; agent < 125; agent++) {
    const bytes = Buffer.from(JSON.stringify({ ...loneTick(agent, 1), pad: 'x'.repeat(60_000) }));
    const body = new ArrayBuffer(bytes.length);
    new Uint8Array(body).set(bytes);
    batch.add(response(String(agent)), { aborted: false }, control, body, 'json');
    new Uint8Array(body).fill(0x20);
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    written,
    Array.from({ length: 25 }, (_, k) => `${100 + k}:{"agent":${100 + k},"posture":"standing","intents":[]}`),
  );

  // A response that fails as it is written does not stop the others, and every request still finishes.
  written.length = 0;
  done = 0;
  const broken = response('broken');
  (broken as unknown as { end: () => never }).end = () => {
    throw new Error('Invalid access of closed uWS.HttpResponse');
  };
  batch.add(response('x'), { aborted: false }, control, bodyOf(301), 'json');
  batch.add(broken, { aborted: false }, control, bodyOf(302), 'json');
  batch.add(response('y'), { aborted: false }, control, bodyOf(303), 'json');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    (written as string[]).map((w) => w.split(':')[0]),
    ['x', 'y'],
  );
  assert.equal(done, 3);
});

/** A handler with a dialogue tier whose brain and tier record each tick and each reply, in order, in `calls`. */
function recordingSpeaker(calls: string[]): TickHandler {
  const evaluator = {
    mode: 'inline',
    tick: (request: TickRequest): TickResponse => {
      calls.push(`tick ${request.snapshot.agent}`);
      return { agent: request.snapshot.agent, posture: 'standing', intents: [] };
    },
  } as unknown as Evaluator;
  const dialogue = {
    apply: (request: TickRequest) => calls.push(`reply ${request.snapshot.agent}`),
    needsPersona: () => false,
  } as unknown as DialogueWiring;
  return new TickHandler(evaluator, { dialogue });
}

test('with a dialogue tier, a character is replied to before its next tick in the same batch', async () => {
  const calls: string[] = [];
  const ticks = recordingSpeaker(calls);
  const batch = new TickBatch(ticks);
  const written: string[] = [];
  const control = { logger: silentLogger, defaultHeaders: {}, done: () => {}, hold: () => {} };
  const response = fakeResponse('r', written);
  for (const agent of [1, 2, 1, 3, 3]) batch.add(response, { aborted: false }, control, bodyOf(agent), 'json');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(calls, ['tick 1', 'tick 2', 'reply 1', 'reply 2', 'tick 1', 'tick 3', 'reply 1', 'reply 3', 'tick 3', 'reply 3']);
  assert.equal(written.length, 5);
});

test('with a dialogue tier, a POST /ticks body replies to a character before its next tick in the body', () => {
  const calls: string[] = [];
  const ticks = recordingSpeaker(calls);
  const items = ticks.acceptBatch(Buffer.from(JSON.stringify([1, 2, 1, 3, 3].map((agent) => loneTick(agent, 1)))), 'json');
  const body = new TickBatch(ticks).answerGroup(items, 'json', silentLogger);
  assert.deepEqual(calls, ['tick 1', 'tick 2', 'reply 1', 'reply 2', 'tick 1', 'tick 3', 'reply 1', 'reply 3', 'tick 3', 'reply 3']);
  assert.deepEqual(
    JSON.parse(Buffer.from(body).toString()),
    [1, 2, 1, 3, 3].map((agent) => ({ agent, posture: 'standing', intents: [] })),
  );
});
