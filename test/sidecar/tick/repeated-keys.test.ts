import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode } from '@msgpack/msgpack';
import { readTickJson, readTicksJson } from '../../../src/sidecar/tick/tick-json.js';
import { readTickMsgpack, readTicksMsgpack } from '../../../src/sidecar/tick/tick-msgpack.js';
import { exactTick } from '../../../src/sidecar/tick/tick-exact.js';
import { fullTick, post, postTo, startTest } from '../helpers.js';

/**
 * A tick that gives one key twice is read as JSON.parse reads it: the last one counts, in
 * JSON and in MessagePack alike, on the fast readers and the exact path, for /tick and /ticks.
 * (Refusing it, as the other routes' JSON bodies are, would cost the hottest route a check of
 * every key.) MessagePack took the last silently too; this holds the two encodings together.
 */

/** An object as its members in order, so that a key can be given twice. */
class Members {
  constructor(readonly list: [string, unknown][]) {}
}

/** The members of a plain value, with `extra` given first at `path` (a dotted path to an object): the key then appears twice. */
function withEarlier(value: unknown, path: string[], extra: [string, unknown]): unknown {
  if (Array.isArray(value)) return value.map((v) => withEarlier(v, [], ['', null]));
  if (value === null || typeof value !== 'object') return value;
  const list: [string, unknown][] = Object.entries(value).map(([k, v]) => [
    k,
    path[0] === k ? withEarlier(v, path.slice(1), extra) : withEarlier(v, [], ['', null]),
  ]);
  if (path.length === 0 && extra[0] !== '') list.unshift(extra);
  return new Members(list);
}

function toJson(v: unknown): string {
  if (v instanceof Members) return `{${v.list.map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(',')}}`;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  return JSON.stringify(v);
}

function str(s: string): Buffer {
  const b = Buffer.from(s);
  return Buffer.concat([b.length < 32 ? Buffer.from([0xa0 | b.length]) : Buffer.from([0xd9, b.length]), b]);
}

/** MessagePack of a value built of Members, arrays, strings, numbers, booleans and null. */
function toMsgpack(v: unknown): Buffer {
  if (v instanceof Members)
    return Buffer.concat([Buffer.from([0xde, v.list.length >> 8, v.list.length & 0xff]), ...v.list.flatMap(([k, x]) => [str(k), toMsgpack(x)])]);
  if (Array.isArray(v)) return Buffer.concat([Buffer.from([0xdc, v.length >> 8, v.length & 0xff]), ...v.map(toMsgpack)]);
  if (typeof v === 'string') return str(v);
  if (typeof v === 'boolean') return Buffer.from([v ? 0xc3 : 0xc2]);
  if (v === null) return Buffer.from([0xc0]);
  const f = Buffer.alloc(9);
  f[0] = 0xcb;
  f.writeDoubleBE(v as number, 1);
  return f;
}

/** Each object of a tick, with a key of it given an earlier, different value. */
const REPEATS: { path: string[]; extra: [string, unknown] }[] = [
  { path: ['snapshot'], extra: ['agent', 99] },
  { path: ['snapshot'], extra: ['time_s', 1] },
  { path: ['snapshot', 'self_state'], extra: ['health', 1] },
  { path: ['snapshot', 'self_state', 'pos'], extra: ['x', 5] },
  { path: ['profile'], extra: ['name', 'Someone else'] },
  { path: ['profile', 'traits'], extra: ['openness', 0.1] },
  { path: [], extra: ['snapshot', { agent: 5, time_s: 1, self_state: { pos: { x: 0, y: 0, z: 0 }, health: 1 } }] },
];

test('a repeated key in a tick: the last counts, in JSON and MessagePack, on the fast and exact paths alike', () => {
  const plain = fullTick(17);
  const expected = exactTick(Buffer.from(JSON.stringify(plain)), 'json');
  for (const { path, extra } of REPEATS) {
    const doubled = withEarlier(plain, path, extra);
    const json = Buffer.from(toJson(doubled));
    const msgpack = toMsgpack(doubled);
    const at = [...path, extra[0]].join('.');
    assert.ok(json.toString().split(`"${extra[0]}":`).length > 2, `${at} is given twice`);
    assert.deepStrictEqual(exactTick(json, 'json'), expected, `exact JSON, ${at}`);
    assert.deepStrictEqual(exactTick(msgpack, 'msgpack'), expected, `exact MessagePack, ${at}`);
    const fastJson = readTickJson(json);
    const fastMsgpack = readTickMsgpack(msgpack);
    if (fastJson !== null) assert.deepStrictEqual(fastJson, expected, `fast JSON, ${at}`);
    if (fastMsgpack !== null) assert.deepStrictEqual(fastMsgpack, expected, `fast MessagePack, ${at}`);
    const batchJson = readTicksJson(Buffer.from(`[${toJson(doubled)}]`), 10);
    const batchMsgpack = readTicksMsgpack(Buffer.concat([Buffer.from([0x91]), msgpack]), 10);
    if (batchJson !== null) assert.deepStrictEqual(batchJson, [expected], `fast JSON batch, ${at}`);
    if (batchMsgpack !== null) assert.deepStrictEqual(batchMsgpack, [expected], `fast MessagePack batch, ${at}`);
  }
});

test('POST /tick and /ticks answer a tick giving `agent` twice for the last one, in both encodings', async () => {
  const s = await startTest();
  try {
    const doubled = withEarlier(fullTick(17), ['snapshot'], ['agent', 99]);
    const cases: [string, 'json' | 'msgpack', Buffer][] = [
      ['/tick', 'json', Buffer.from(toJson(doubled))],
      ['/tick', 'msgpack', toMsgpack(doubled)],
      ['/ticks', 'json', Buffer.from(`[${toJson(doubled)}]`)],
      ['/ticks', 'msgpack', Buffer.concat([Buffer.from([0x91]), toMsgpack(doubled)])],
    ];
    for (const [route, enc, body] of cases) {
      const r = route === '/tick' ? await post(s.url, body, enc) : await postTo(`${s.url}${route}`, body, enc);
      assert.equal(r.status, 200, `${route} ${enc}: ${r.bytes.toString('latin1')}`);
      const reply = (enc === 'json' ? r.json() : decode(r.bytes)) as { agent: number } | { agent: number }[];
      assert.equal(Array.isArray(reply) ? reply[0]!.agent : reply.agent, 17, `${route} ${enc}`);
    }
  } finally {
    await s.close();
  }
});
