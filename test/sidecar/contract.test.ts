import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, encode } from '@msgpack/msgpack';
import { TICK_MAX_BODY } from '../../src/sidecar/tick/handler.js';
import { fullTick, post, startTest } from './helpers.js';

const POSTURES = ['standing', 'crouched', 'prone'];

function assertTickShape(value: unknown, agent: number): void {
  const r = value as { agent: unknown; posture: unknown; intents: unknown };
  assert.equal(r.agent, agent);
  assert.ok(POSTURES.includes(r.posture as string), `posture ${String(r.posture)}`);
  assert.ok(Array.isArray(r.intents));
  for (const intent of r.intents as Record<string, unknown>[]) {
    assert.equal(typeof intent.kind, 'string');
    for (const v of Object.values(intent)) {
      const ok = v === null || ['string', 'number', 'boolean'].includes(typeof v) || (typeof v === 'object' && Object.keys(v as object).join() === 'x,y,z');
      assert.ok(ok, `intent fields are scalars or {x,y,z}: ${JSON.stringify(intent)}`);
    }
  }
}

function assertError(body: unknown, code: string): { code: string; message: string; details?: { path: string; message: string }[] } {
  const e = (body as { error: { code: string; message: string; details?: { path: string; message: string }[] } }).error;
  assert.equal(e.code, code);
  assert.equal(typeof e.message, 'string');
  return e;
}

test('GET /health answers ok in plain text', async () => {
  const s = await startTest();
  try {
    const res = await fetch(`${s.url}/health`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await res.text(), 'ok');
  } finally {
    await s.close();
  }
});

test('POST /tick answers {agent, posture, intents} in JSON and in MessagePack', async () => {
  const s = await startTest();
  try {
    const j = await post(s.url, fullTick(17));
    assert.equal(j.status, 200);
    assert.equal(j.contentType, 'application/json');
    assertTickShape(j.json(), 17);
    const m = await post(s.url, fullTick(18), 'msgpack');
    assert.equal(m.status, 200);
    assert.equal(m.contentType, 'application/msgpack');
    assertTickShape(decode(m.bytes), 18);
    const charset = await post(s.url, fullTick(19), 'json', { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(charset.status, 200);
  } finally {
    await s.close();
  }
});

test('400 names the bad field, in the error shape, for both encodings', async () => {
  const s = await startTest();
  try {
    const bad = fullTick() as any;
    bad.snapshot.targets[0].pos.x = 'far';
    const j = await post(s.url, bad);
    assert.equal(j.status, 400);
    const e = assertError(j.json(), 'bad_request');
    assert.equal(e.details?.[0]?.path, 'snapshot.targets[0].pos.x');
    assert.equal(typeof e.details?.[0]?.message, 'string');
    const m = await post(s.url, bad, 'msgpack');
    assert.equal(m.status, 400);
    assert.equal(m.contentType, 'application/json');
    assert.equal(assertError(m.json(), 'bad_request').details?.[0]?.path, 'snapshot.targets[0].pos.x');
    const malformed = await post(s.url, '{"snapshot":');
    assert.equal(malformed.status, 400);
    assertError(malformed.json(), 'bad_request');
    const empty = await post(s.url, '');
    assert.equal(empty.status, 400);
  } finally {
    await s.close();
  }
});

test('415 for any other content type, 413 over the body limit', async () => {
  const s = await startTest();
  try {
    const plain = await post(s.url, JSON.stringify(fullTick()), 'json', { 'content-type': 'text/plain' });
    assert.equal(plain.status, 415);
    assertError(plain.json(), 'unsupported_media_type');
    const none = await fetch(`${s.url}/tick`, { method: 'POST', body: new Uint8Array(encode(fullTick())) });
    assert.equal(none.status, 415);
    const big = fullTick() as any;
    big.pad = 'x'.repeat(TICK_MAX_BODY);
    const large = await post(s.url, big);
    assert.equal(large.status, 413);
    assertError(large.json(), 'payload_too_large');
  } finally {
    await s.close();
  }
});

test('404 and 405 in the error shape', async () => {
  const s = await startTest();
  try {
    const nf = await fetch(`${s.url}/nope`);
    assert.equal(nf.status, 404);
    assertError(await nf.json(), 'not_found');
    const na = await fetch(`${s.url}/tick`);
    assert.equal(na.status, 405);
    assert.equal(na.headers.get('allow'), 'POST');
    assertError(await na.json(), 'method_not_allowed');
  } finally {
    await s.close();
  }
});

test('with a token, /tick needs the bearer and /health stays open', async () => {
  const s = await startTest({ token: 's3cret-token' });
  try {
    const missing = await post(s.url, fullTick());
    assert.equal(missing.status, 401);
    assertError(missing.json(), 'unauthorized');
    const wrong = await post(s.url, fullTick(), 'json', { authorization: 'Bearer s3cret-tokem' });
    assert.equal(wrong.status, 401);
    const basic = await post(s.url, fullTick(), 'json', { authorization: 'Basic s3cret-token' });
    assert.equal(basic.status, 401);
    const ok = await post(s.url, fullTick(), 'json', { authorization: 'Bearer s3cret-token' });
    assert.equal(ok.status, 200);
    const lower = await post(s.url, fullTick(), 'msgpack', { authorization: 'bearer s3cret-token' });
    assert.equal(lower.status, 200);
    // Authentication comes before any look at the body.
    const unauthBad = await post(s.url, 'not json');
    assert.equal(unauthBad.status, 401);
    const health = await fetch(`${s.url}/health`);
    assert.equal(health.status, 200);
  } finally {
    await s.close();
  }
});

test('counters and latency percentiles follow the ticks answered', async () => {
  const s = await startTest();
  try {
    for (let i = 0; i < 5; i++) assert.equal((await post(s.url, fullTick(i))).status, 200);
    assert.equal((await post(s.url, { snapshot: {} })).status, 400);
    const status = s.status();
    assert.deepEqual(status.ticks, { ok: 5, rejected: 1, failed: 0 });
    assert.equal(status.latency.count, 5);
    assert.ok(status.latency.p50_us <= status.latency.p99_us);
    assert.deepEqual(status.evaluator, { mode: 'inline', workers: 0 });
    assert.equal(status.config.source, 'defaults');
  } finally {
    await s.close();
  }
});
