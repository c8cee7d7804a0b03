import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, encode } from '@msgpack/msgpack';
import { generateTicks } from '../../../bench/tick/scenarios.js';
import { MAX_BATCH_TICKS, TICKS_MAX_BODY } from '../../../src/sidecar/tick/tick-array.js';
import { fullTick, post, postTo, startTest, type Enc } from '../helpers.js';

// Squads spanning agents and agents ticking more than once: a batch must be answered as the
// same ticks sent one by one, in order.
const TICKS = generateTicks({ agents: 12, count: 90, seed: 7 }).map((t) => {
  const snapshot = t.snapshot as { agent: number; squad?: string };
  if (snapshot.agent % 4 !== 0) snapshot.squad = `squad_${snapshot.agent % 3}`;
  else delete snapshot.squad;
  return t;
});

async function oneByOne(workers: number, enc: Enc): Promise<unknown[]> {
  const s = await startTest({ workers });
  try {
    const out: unknown[] = [];
    for (const tick of TICKS) {
      const r = await post(s.url, tick, enc);
      assert.equal(r.status, 200);
      out.push(enc === 'json' ? r.json() : decode(r.bytes));
    }
    return out;
  } finally {
    await s.close();
  }
}

async function batched(workers: number, enc: Enc, size: number): Promise<unknown[]> {
  const s = await startTest({ workers });
  try {
    const out: unknown[] = [];
    for (let at = 0; at < TICKS.length; at += size) {
      const r = await postTo(`${s.url}/ticks`, TICKS.slice(at, at + size), enc);
      assert.equal(r.status, 200, r.bytes.toString());
      assert.equal(r.contentType, enc === 'json' ? 'application/json' : 'application/msgpack');
      out.push(...(enc === 'json' ? (r.json() as unknown[]) : (decode(r.bytes) as unknown[])));
    }
    assert.equal(s.status().ticks.ok, TICKS.length);
    return out;
  } finally {
    await s.close();
  }
}

test('POST /ticks answers exactly as the same ticks sent one by one, inline and with workers, in both encodings', async () => {
  for (const enc of ['json', 'msgpack'] as const) {
    const reference = await oneByOne(0, enc);
    assert.deepEqual(await batched(0, enc, 50), reference, `${enc} inline`);
    assert.deepEqual(await batched(0, enc, 1), reference, `${enc} inline, batches of 1`);
    assert.deepEqual(await batched(2, enc, 37), reference, `${enc} 2 workers`);
  }
});

test('an invalid element gets an error in its place, with its agent when it could be read; the others are answered', async () => {
  const s = await startTest();
  try {
    const bad = fullTick(5) as { snapshot: { self_state: Record<string, unknown> } };
    delete bad.snapshot.self_state.health;
    for (const enc of ['json', 'msgpack'] as const) {
      const r = await postTo(`${s.url}/ticks`, [fullTick(4), bad, 42, { snapshot: { agent: 'x' } }, fullTick(6)], enc);
      assert.equal(r.status, 200);
      const out = (enc === 'json' ? r.json() : decode(r.bytes)) as Record<string, unknown>[];
      assert.equal(out.length, 5);
      assert.equal(out[0]!.agent, 4);
      assert.ok(Array.isArray(out[0]!.intents));
      const err = out[1] as { agent: number; error: { code: string; message: string; details: { path: string }[] } };
      assert.equal(err.agent, 5);
      assert.equal(err.error.code, 'bad_request');
      assert.match(err.error.message, /snapshot\.self_state\.health/);
      assert.equal(err.error.details[0]!.path, 'snapshot.self_state.health');
      assert.deepEqual(Object.keys(out[2]!), ['error']);
      assert.ok(Array.isArray((out[2] as { error: { details: unknown[] } }).error.details));
      assert.deepEqual(Object.keys(out[3]!), ['error']);
      assert.equal(out[4]!.agent, 6);
    }
    assert.equal(s.status().ticks.ok, 4);
    assert.equal(s.status().ticks.rejected, 6);
  } finally {
    await s.close();
  }
});

test('whole-body problems of POST /ticks are a 4xx for the request', async () => {
  const s = await startTest({ token: 'sekrit' });
  const auth = { authorization: 'Bearer sekrit' };
  try {
    const cases: [unknown, Enc, Record<string, string>, number, string][] = [
      [[fullTick(1)], 'json', {}, 401, 'unauthorized'],
      ['{"snapshot":{}}', 'json', auth, 400, 'bad_request'],
      ['[{"snapshot":', 'json', auth, 400, 'bad_request'],
      ['[1,]', 'json', auth, 400, 'bad_request'],
      ['', 'json', auth, 400, 'bad_request'],
      [encode({ a: 1 }), 'msgpack', auth, 400, 'bad_request'],
      [Buffer.from([0x92, 0x80]), 'msgpack', auth, 400, 'bad_request'],
      [Array.from({ length: MAX_BATCH_TICKS + 1 }, () => 0), 'json', auth, 413, 'payload_too_large'],
      [Array.from({ length: MAX_BATCH_TICKS + 1 }, () => 0), 'msgpack', auth, 413, 'payload_too_large'],
      [`[${' '.repeat(TICKS_MAX_BODY)}]`, 'json', auth, 413, 'payload_too_large'],
    ];
    for (const [body, enc, headers, status, code] of cases) {
      const r = await postTo(`${s.url}/ticks`, body, enc, headers);
      assert.equal(r.status, status, `${String(body).slice(0, 40)}: ${r.bytes.toString().slice(0, 200)}`);
      assert.equal((r.json() as { error: { code: string } }).error.code, code);
    }
    const r = await postTo(`${s.url}/ticks`, '[]', 'json', { ...auth, 'content-type': 'text/plain' });
    assert.equal(r.status, 415);
    const empty = await postTo(`${s.url}/ticks`, '[ ]', 'json', auth);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.json(), []);
    const most = await postTo(
      `${s.url}/ticks`,
      Array.from({ length: MAX_BATCH_TICKS }, (_, k) => fullTick(k)),
      'msgpack',
      auth,
    );
    assert.equal(most.status, 200);
    assert.equal((decode(most.bytes) as unknown[]).length, MAX_BATCH_TICKS);
  } finally {
    await s.close();
  }
});

test('a JSON body that starts with a UTF-8 byte-order mark is read as without it, on /tick and /ticks', async () => {
  const s = await startTest();
  try {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const one = await post(s.url, Buffer.concat([bom, Buffer.from(JSON.stringify(fullTick(3)))]));
    assert.equal(one.status, 200, one.bytes.toString());
    const many = await postTo(`${s.url}/ticks`, Buffer.concat([bom, Buffer.from(JSON.stringify([fullTick(3)]))]));
    assert.equal(many.status, 200, many.bytes.toString());
    // Only one mark is skipped; a second is not JSON.
    const twice = await post(s.url, Buffer.concat([bom, bom, Buffer.from(JSON.stringify(fullTick(3)))]));
    assert.equal(twice.status, 400);
  } finally {
    await s.close();
  }
});

test('the token is accepted as Authorization: Bearer, X-Brain-Token or ?token=, on /tick, /ticks and /status', async () => {
  const lines: string[] = [];
  const logger = {
    info: (m: string, f?: object) => lines.push(m + JSON.stringify(f)),
    warn: (m: string, f?: object) => lines.push(m + JSON.stringify(f)),
    error: (m: string, f?: object) => lines.push(m + JSON.stringify(f)),
  };
  const token = 'tok/en+with=odd&chars';
  const s = await startTest({ token, logger });
  try {
    const forms: [string, Record<string, string>][] = [
      ['', { authorization: `Bearer ${token}` }],
      ['', { 'x-brain-token': token }],
      [`?token=${encodeURIComponent(token)}`, {}],
    ];
    for (const [query, headers] of forms) {
      assert.equal((await postTo(`${s.url}/tick${query}`, fullTick(1), 'json', headers)).status, 200, JSON.stringify(headers) + query);
      assert.equal((await postTo(`${s.url}/ticks${query}`, [fullTick(1)], 'json', headers)).status, 200);
      assert.equal((await fetch(`${s.url}/status${query}`, { headers })).status, 200);
    }
    const wrong: [string, Record<string, string>][] = [
      ['', {}],
      ['', { authorization: 'Bearer nope' }],
      ['', { 'x-brain-token': 'nope' }],
      ['?token=nope', {}],
      // The first form present is the one judged: a wrong header is not rescued by the query.
      [`?token=${encodeURIComponent(token)}`, { 'x-brain-token': 'nope' }],
    ];
    for (const [query, headers] of wrong) {
      const r = await postTo(`${s.url}/tick${query}`, fullTick(1), 'json', headers);
      assert.equal(r.status, 401);
      assert.equal((r.json() as { error: { code: string } }).error.code, 'unauthorized');
      assert.ok(!r.bytes.toString().includes(token));
      assert.equal((await postTo(`${s.url}/ticks${query}`, [fullTick(1)], 'json', headers)).status, 401);
      assert.equal((await fetch(`${s.url}/status${query}`, { headers })).status, 401);
    }
    assert.ok(lines.every((line) => !line.includes(token) && !line.includes(encodeURIComponent(token))));
  } finally {
    await s.close();
  }
});
