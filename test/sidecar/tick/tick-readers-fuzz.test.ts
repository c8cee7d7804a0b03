import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TickRequest } from '../../../brain/index.js';
import { generateTicks } from '../../../bench/tick/scenarios.js';
import { HttpError } from '../../../src/http/errors.js';
import { seededRandom } from '../../../src/random.js';
import { MAX_BATCH_TICKS, msgpackArrayHeader, msgpackElementEnds, readTicks, TickFailure, type BatchItem } from '../../../src/sidecar/tick/tick-array.js';
import { decodeTickAs, exactTick, msgpackDecoder, validTick, withoutBom } from '../../../src/sidecar/tick/tick-exact.js';
import { readTickJson, readTicksJson } from '../../../src/sidecar/tick/tick-json.js';
import { readTickMsgpack, readTicksMsgpack } from '../../../src/sidecar/tick/tick-msgpack.js';

/**
 * A differential fuzz test of the tick readers: bodies written the many ways third-party
 * encoders write them (every MessagePack width, JSON whitespace, escapes and number forms),
 * then mutated (fields dropped or retyped, duplicated keys, invalid UTF-8, byte-order marks,
 * bin and ext values, deep nesting, truncation). Whatever a fast reader accepts must equal
 * the exact path's result (decoder + parseTickRequest) field for field and in key order, a
 * batch must read as its elements read alone, and the one-pass batch reader must equal the
 * exact path's reading of a whole batch body, however broken. Seeded: the same bodies every run.
 */

type Node =
  | { t: 'map'; entries: [Node, Node][] }
  | { t: 'arr'; items: Node[] }
  | { t: 'str'; bytes: Buffer }
  | { t: 'num'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'nil' }
  | { t: 'bin'; bytes: Buffer }
  | { t: 'ext'; type: number; bytes: Buffer };

const SEED = 20261126;
const BODIES = 1500;

let random = seededRandom(SEED);
const chance = (p: number): boolean => random() < p;
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

function str(s: string): Node {
  return { t: 'str', bytes: Buffer.from(s, 'utf8') };
}

function nodeOf(v: unknown): Node {
  if (v === null || v === undefined) return { t: 'nil' };
  if (typeof v === 'boolean') return { t: 'bool', v };
  if (typeof v === 'number') return { t: 'num', v };
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) return { t: 'arr', items: v.map(nodeOf) };
  return { t: 'map', entries: Object.entries(v as Record<string, unknown>).map(([k, x]) => [str(k), nodeOf(x)]) };
}

const INVALID_UTF8 = [
  Buffer.from([0x80]),
  Buffer.from([0xc3]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xff]),
  Buffer.from([0xe2, 0x82]),
];
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** An overlong two-byte form of an ASCII byte: what `C1 A8` is to `h`. */
function overlong(bytes: Buffer): Buffer {
  const c = bytes[0] ?? 0x68;
  return Buffer.concat([Buffer.from([0xc0 | (c >> 6), 0x80 | (c & 0x3f)]), bytes.subarray(1)]);
}

function mutateString(n: Extract<Node, { t: 'str' }>): void {
  switch (Math.floor(random() * 7)) {
    case 0:
      n.bytes = Buffer.concat([BOM, n.bytes]);
      break;
    case 1:
      n.bytes = Buffer.concat([BOM, n.bytes, Buffer.from('x'.repeat(200 + Math.floor(random() * 400)))]);
      break;
    case 2:
      n.bytes = Buffer.concat([n.bytes, pick(INVALID_UTF8)]);
      break;
    case 3:
      n.bytes = overlong(n.bytes);
      break;
    case 4:
      n.bytes = Buffer.concat([n.bytes, Buffer.from(pick(['é', '漢字', '😀', '\u0000', '"\\', '\u2028']))]);
      break;
    case 5:
      n.bytes = Buffer.from('x'.repeat(60 + Math.floor(random() * 20)));
      break;
    default:
      n.bytes = Buffer.alloc(0);
  }
}

function junk(depth: number): Node {
  switch (Math.floor(random() * 9)) {
    case 0:
      return { t: 'bin', bytes: Buffer.from([1, 2, 3]) };
    case 1:
      return { t: 'ext', type: pick([1, -1, 5]), bytes: Buffer.alloc(pick([1, 2, 4, 8, 16, 3])) };
    case 2:
      return { t: 'nil' };
    case 3:
      return str(pick(['', 'x', 'player', '😀']));
    case 4:
      return { t: 'num', v: pick([0, -1, 1e300, 2 ** 40, -(2 ** 40), 0.1, NaN, Infinity, 2 ** 63]) };
    case 5:
      return { t: 'arr', items: depth > 0 ? [junk(depth - 1)] : [] };
    case 6:
      return { t: 'map', entries: depth > 0 ? [[str('k'), junk(depth - 1)]] : [] };
    case 7:
      return { t: 'bool', v: chance(0.5) };
    default: {
      let n: Node = { t: 'nil' };
      for (let d = 0; d < 28 + Math.floor(random() * 10); d++) n = chance(0.5) ? { t: 'arr', items: [n] } : { t: 'map', entries: [[str('d'), n]] };
      return n;
    }
  }
}

/** Mutates the tree in place, rarely at each node, so most bodies stay close to valid. */
function mutate(n: Node, rate: number, depth = 0): void {
  if (n.t === 'map') {
    for (const entry of n.entries) {
      if (chance(rate)) {
        const key = entry[0] as Extract<Node, { t: 'str' }>;
        if (chance(0.5)) key.bytes = overlong(key.bytes);
        else mutateString(key);
      }
      if (chance(rate)) entry[1] = junk(2);
      else mutate(entry[1], rate, depth + 1);
    }
    if (chance(rate)) n.entries.splice(Math.floor(random() * n.entries.length), 1);
    if (chance(rate) && n.entries.length > 0) {
      const [k, v] = pick(n.entries);
      n.entries.push([k, chance(0.5) ? v : junk(1)]);
    }
    if (chance(rate)) n.entries.push([str(pick(['extra', 'ext_ra', '__proto__', 'constructor', 'has_weapon ', 'Snapshot'])), junk(3)]);
    if (chance(rate / 2) && n.entries.length > 1) n.entries.reverse();
  } else if (n.t === 'arr') {
    for (const item of n.items) mutate(item, rate, depth + 1);
    if (chance(rate)) n.items.push(junk(1));
  } else if (n.t === 'str') {
    if (chance(rate)) mutateString(n);
  } else if (n.t === 'num') {
    if (chance(rate)) n.v = pick([n.v + 0.5, -n.v, n.v * 1e6, -0, Math.fround(n.v), 2 ** 31, 2 ** 32 + 1, -(2 ** 31) - 1, NaN, -Infinity]);
  }
}

// MessagePack, every width a third-party encoder may pick. Bodies are built as byte lists
// (pushed onto `out`), JSON as strings of latin1 characters (one per byte): concatenating
// small Buffers made the generator cost more than the readers it feeds.

function be(out: number[], bytes: number, v: number): void {
  for (let k = bytes - 1; k >= 0; k--) out.push(Math.floor(v / 2 ** (8 * k)) & 0xff);
}

function sized(out: number[], n: number, fix: number | null, fixMax: number, codes: [number | null, number, number]): void {
  const options: number[] = [];
  if (fix !== null && n <= fixMax) options.push(0);
  if (codes[0] !== null && n < 0x100) options.push(1);
  if (n < 0x10000) options.push(2);
  options.push(4);
  const width = pick(options);
  if (width === 0) out.push(fix! + n);
  else {
    out.push(width === 1 ? codes[0]! : width === 2 ? codes[1] : codes[2]);
    be(out, width, n);
  }
}

const scratch = Buffer.alloc(9);

function msgpackNumber(out: number[], v: number): void {
  const options: (() => void)[] = [];
  if (Number.isInteger(v) && !Object.is(v, -0)) {
    if (v >= 0 && v <= 0x7f) options.push(() => out.push(v));
    if (v >= -32 && v < 0) options.push(() => out.push(v & 0xff));
    if (v >= 0 && v <= 0xff) options.push(() => out.push(0xcc, v));
    if (v >= 0 && v <= 0xffff) options.push(() => (out.push(0xcd), be(out, 2, v)));
    if (v >= 0 && v <= 0xffffffff) options.push(() => (out.push(0xce), be(out, 4, v)));
    if (v >= -128 && v <= 127) options.push(() => out.push(0xd0, v & 0xff));
    if (v >= -32768 && v <= 32767) options.push(() => out.push(0xd1, (v >> 8) & 0xff, v & 0xff));
    if (v >= -(2 ** 31) && v < 2 ** 31) options.push(() => (out.push(0xd2), be(out, 4, v >>> 0)));
    if (Number.isSafeInteger(v) && chance(0.05)) {
      options.push(() => {
        if (v >= 0) scratch.writeBigUInt64BE(BigInt(v), 1);
        else scratch.writeBigInt64BE(BigInt(v), 1);
        out.push(v >= 0 ? 0xcf : 0xd3, ...scratch.subarray(1, 9));
      });
    }
  }
  if (Object.is(Math.fround(v), v) || Number.isNaN(v)) {
    options.push(() => {
      scratch.writeFloatBE(v, 0);
      out.push(0xca, ...scratch.subarray(0, 4));
    });
  }
  options.push(() => {
    scratch.writeDoubleBE(v, 0);
    out.push(0xcb, ...scratch.subarray(0, 8));
  });
  pick(options)();
}

function msgpackInto(out: number[], n: Node): void {
  switch (n.t) {
    case 'map':
      sized(out, n.entries.length, 0x80, 15, [null, 0xde, 0xdf]);
      for (const [k, v] of n.entries) {
        msgpackInto(out, k);
        msgpackInto(out, v);
      }
      return;
    case 'arr':
      sized(out, n.items.length, 0x90, 15, [null, 0xdc, 0xdd]);
      for (const v of n.items) msgpackInto(out, v);
      return;
    case 'str':
      sized(out, n.bytes.length, 0xa0, 31, [0xd9, 0xda, 0xdb]);
      for (const c of n.bytes) out.push(c);
      return;
    case 'num':
      return msgpackNumber(out, n.v);
    case 'bool':
      out.push(n.v ? 0xc3 : 0xc2);
      return;
    case 'nil':
      out.push(0xc0);
      return;
    case 'bin':
      sized(out, n.bytes.length, null, 0, [0xc4, 0xc5, 0xc6]);
      for (const c of n.bytes) out.push(c);
      return;
    case 'ext': {
      const fixed: Record<number, number> = { 1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8 };
      const code = fixed[n.bytes.length];
      if (code !== undefined && chance(0.7)) out.push(code);
      else sized(out, n.bytes.length, null, 0, [0xc7, 0xc8, 0xc9]);
      out.push(n.type & 0xff);
      for (const c of n.bytes) out.push(c);
      return;
    }
  }
}

function msgpack(n: Node): Buffer {
  const out: number[] = [];
  msgpackInto(out, n);
  return Buffer.from(out);
}

function arrayHeader(count: number): Buffer {
  const out: number[] = [];
  sized(out, count, 0x90, 15, [null, 0xdc, 0xdd]);
  return Buffer.from(out);
}

// JSON, with the whitespace, escapes and number forms other encoders write.

function ws(): string {
  return chance(0.8) ? '' : pick([' ', '\n', '\t', '\r\n  ', '   ']);
}

function jsonNumber(v: number): string {
  if (!Number.isFinite(v)) return pick(['1e400', '-1e400', 'NaN', 'null']);
  if (chance(0.5)) return String(v);
  const forms = [v.toExponential(), v.toExponential().toUpperCase(), v.toExponential().replace('e+', 'e')];
  if (Number.isInteger(v)) forms.push(`${v}.0`, `${v}.000`, `${v}e0`, `${v}E+0`);
  if (Object.is(v, -0)) forms.push('-0', '-0.0');
  if (chance(0.002)) forms.push(pick([`0${Math.abs(v)}`, `+${v}`, `${v}.`, `.${Math.abs(v)}`, `${v}e`]));
  return pick(forms);
}

const latin1 = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

/** A JSON string as latin1 characters, one per byte. */
function jsonString(bytes: Buffer, escapes: number): string {
  // Valid text is written with escapes now and then (\u of BMP characters and surrogate pairs).
  if (chance(escapes) && Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes)) {
    let out = '';
    for (const ch of bytes.toString('utf8')) {
      if (ch === '"' || ch === '\\') out += `\\${ch}`;
      else if (ch.charCodeAt(0) < 0x20 || chance(0.3))
        out += [...ch]
          .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
          .join('')
          .replace(/[\s\S]{6}/g, (u) => (chance(0.5) ? u : u.toUpperCase().replace('\\U', '\\u')));
      else if (ch.length === 2 && chance(0.5)) out += `\\u${ch.charCodeAt(0).toString(16)}\\u${ch.charCodeAt(1).toString(16)}`;
      else if (ch === '/' && chance(0.5)) out += '\\/';
      else out += ch;
    }
    if (chance(0.05)) out += pick(['\\ud800', '\\udc00x', '\\uD83D']);
    return latin1(`"${out}"`);
  }
  let out = '"';
  for (const c of bytes) {
    if (c === 0x22 || c === 0x5c) out += `\\${String.fromCharCode(c)}`;
    else if (c < 0x20) out += `\\u00${c.toString(16).padStart(2, '0')}`;
    else out += String.fromCharCode(c);
  }
  return `${out}"`;
}

function jsonText(n: Node): string {
  switch (n.t) {
    case 'map': {
      let out = `{${ws()}`;
      n.entries.forEach(([k, v], i) => {
        out += `${i > 0 ? `,${ws()}` : ''}${k.t === 'str' ? jsonString(k.bytes, 0.005) : jsonText(k)}${ws()}:${ws()}${jsonText(v)}${ws()}`;
      });
      return `${out}}`;
    }
    case 'arr':
      return `[${ws()}${n.items.map((v) => jsonText(v) + ws()).join(`,${ws()}`)}]`;
    case 'str':
      return jsonString(n.bytes, 0.03);
    case 'num':
      return jsonNumber(n.v);
    case 'bool':
      return String(n.v);
    case 'nil':
      return 'null';
    case 'bin':
      return '[1,2,3]';
    case 'ext':
      return '{}';
  }
}

function json(n: Node): Buffer {
  return Buffer.from(jsonText(n), 'latin1');
}

type Enc = 'json' | 'msgpack';

/** The exact path's verdict: the request, or the 400's message. */
function exact(body: Buffer, enc: Enc): TickRequest | string {
  try {
    return exactTick(body, enc);
  } catch (err) {
    if (err instanceof HttpError) return err.message;
    throw err;
  }
}

function fast(body: Buffer, enc: Enc): TickRequest | null {
  return enc === 'json' ? readTickJson(body) : readTickMsgpack(body);
}

function hex(body: Buffer): string {
  return body.toString('hex');
}

/** Fast and exact agree on `body`; returns what /tick makes of it (the request or the 400's message). */
function agree(body: Buffer, enc: Enc, stats: { fast: number }): TickRequest | string {
  const reference = exact(body, enc);
  const quick = fast(body, enc);
  if (quick === null) return reference;
  stats.fast++;
  assert.notEqual(typeof reference, 'string', `${enc}: the fast reader accepted a body the exact path refuses (${String(reference)}): ${hex(body)}`);
  assert.deepStrictEqual(quick, reference, `${enc}: ${hex(body)}`);
  assert.equal(JSON.stringify(quick), JSON.stringify(reference), `${enc}: key order: ${hex(body)}`);
  return reference;
}

const corpus = generateTicks({ agents: 50, count: 200, seed: 3 });

function bodyFor(enc: Enc, rate: number): Buffer {
  const tree = nodeOf(pick(corpus));
  mutate(tree, rate);
  let body = enc === 'json' ? Buffer.from(ws() + jsonText(tree) + ws(), 'latin1') : msgpack(tree);
  if (chance(0.02)) body = body.subarray(0, Math.floor(random() * body.length));
  if (chance(0.02)) body = Buffer.concat([body, Buffer.from(pick([[0xc0], [0x20, 0x78], [0x00]]))]);
  return body;
}

for (const enc of ['json', 'msgpack'] as const) {
  test(`${enc}: the fast reader agrees with the exact path on ${BODIES} fuzzed bodies`, () => {
    random = seededRandom(SEED + (enc === 'json' ? 1 : 2));
    const stats = { fast: 0 };
    let valid = 0;
    for (let k = 0; k < BODIES; k++) {
      const body = bodyFor(enc, k % 4 === 0 ? 0 : k % 4 === 1 ? 0.01 : k % 4 === 2 ? 0.05 : 0.2);
      if (typeof agree(body, enc, stats) !== 'string') valid++;
    }
    // The test is worth something only if both paths see many valid and many invalid bodies.
    assert.ok(stats.fast > BODIES / 6, `fast path taken ${stats.fast} times`);
    assert.ok(valid < BODIES * 0.9 && valid > BODIES / 4, `valid ${valid}`);
  });

  test(`${enc}: a batch reads as its elements read alone`, () => {
    random = seededRandom(SEED + (enc === 'json' ? 3 : 4));
    const stats = { fast: 0 };
    for (let round = 0; round < 80; round++) {
      const elements: Buffer[] = [];
      const expected: (TickRequest | string)[] = [];
      const size = Math.floor(random() * 12);
      while (elements.length < size) {
        const body = bodyFor(enc, pick([0, 0, 0.02, 0.1]));
        const alone = exact(body, enc);
        // Elements that are not one whole value (cut short, trailing bytes) make the batch
        // malformed: covered below.
        if (typeof alone === 'string' && /not valid/.test(alone)) continue;
        elements.push(body);
        expected.push(agree(body, enc, stats));
      }
      const batch =
        enc === 'json'
          ? Buffer.concat([
              Buffer.from(`${ws()}[${ws()}`),
              ...elements.flatMap((e, i) => [Buffer.from(i > 0 ? `,${ws()}` : ''), e]),
              Buffer.from(`${ws()}]${ws()}`),
            ])
          : Buffer.concat([arrayHeader(elements.length), ...elements]);
      const items = readTicks(batch, enc);
      assert.equal(items.length, expected.length);
      items.forEach((item, k) => {
        const want = expected[k]!;
        if (typeof want === 'string') {
          assert.ok(item instanceof TickFailure, `element ${k} should fail: ${want}`);
          assert.equal(item.error.message, want);
        } else {
          assert.deepStrictEqual(item, want);
          assert.equal(JSON.stringify(item), JSON.stringify(want));
        }
      });
      // A batch cut short or with bytes after its end is a whole-body 400.
      let end = batch.length;
      while (enc === 'json' && end > 0 && ' \n\r\t'.includes(String.fromCharCode(batch[end - 1]!))) end--;
      if (end > 2) {
        for (const broken of [batch.subarray(0, end - 1 - Math.floor(random() * 3)), Buffer.concat([batch, Buffer.from(enc === 'json' ? 'x' : [0xc0])])]) {
          assert.throws(
            () => readTicks(broken, enc),
            (err: unknown) => err instanceof HttpError && err.status === 400,
            hex(broken),
          );
        }
      }
    }
  });
}

/** What the exact path makes of a whole batch body: each element's request or 400 message, or the whole-body error's status and message. */
function exactBatch(body: Buffer, enc: Enc): (TickRequest | string)[] | string {
  // A MessagePack array whose framing is whole is judged element by element (an element the
  // decoder refuses is that element's 400), as JSON elements are.
  const ends = enc === 'msgpack' ? msgpackElementEnds(body) : null;
  if (ends !== null) {
    let start = msgpackArrayHeader(body);
    return ends.map((end, k) => {
      const bytes = body.subarray(start, end);
      start = end;
      let element: unknown;
      try {
        element = msgpackDecoder.decode(bytes);
      } catch (err) {
        return `Element ${k} is not valid MessagePack: ${(err as Error).message}.`;
      }
      const result = validTick(element);
      return result instanceof HttpError ? result.message : result;
    });
  }
  let value: unknown;
  try {
    value = decodeTickAs(enc === 'json' ? withoutBom(body) : body, enc);
  } catch (err) {
    if (err instanceof HttpError) return `${err.status} ${err.message}`;
    throw err;
  }
  if (!Array.isArray(value)) return '400 The body of POST /ticks must be an array of tick requests.';
  if (value.length > MAX_BATCH_TICKS) return `413 A batch holds at most ${MAX_BATCH_TICKS} tick requests, got ${value.length}.`;
  return value.map((element: unknown) => {
    const result = validTick(element);
    return result instanceof HttpError ? result.message : result;
  });
}

/** What readTicks makes of a body, in exactBatch's terms. */
function routeBatch(body: Buffer, enc: Enc): (TickRequest | string)[] | string {
  let items: BatchItem[];
  try {
    items = readTicks(body, enc);
  } catch (err) {
    if (err instanceof HttpError) return `${err.status} ${err.message}`;
    throw err;
  }
  return items.map((item) => (item instanceof TickFailure ? item.error.message : item));
}

/**
 * The one-pass batch reader and readTicks agree with the exact path on `body`: whatever the
 * fast reader accepts equals the exact path's requests field for field and in key order.
 */
function agreeBatch(body: Buffer, enc: Enc, stats: { fast: number; bodies: number }): void {
  const reference = exactBatch(body, enc);
  const route = routeBatch(body, enc);
  assert.deepStrictEqual(route, reference, `${enc}: ${hex(body)}`);
  assert.equal(JSON.stringify(route), JSON.stringify(reference), `${enc}: key order: ${hex(body)}`);
  const stripped = enc === 'json' ? Buffer.from(withoutBom(body)) : body;
  const quick = enc === 'json' ? readTicksJson(stripped, MAX_BATCH_TICKS) : readTicksMsgpack(stripped, MAX_BATCH_TICKS);
  stats.bodies++;
  if (quick === null) return;
  stats.fast++;
  assert.ok(
    Array.isArray(reference) && reference.every((r) => typeof r !== 'string'),
    `${enc}: the batch reader accepted a body the exact path refuses: ${hex(body)}`,
  );
  assert.deepStrictEqual(quick, reference, `${enc}: ${hex(body)}`);
}

/** A batch body of `elements`, framed the many ways encoders write an array. */
function frame(elements: readonly Buffer[], enc: Enc): Buffer {
  if (enc === 'msgpack') return Buffer.concat([arrayHeader(elements.length), ...elements]);
  return Buffer.concat([
    Buffer.from(`${ws()}[${ws()}`),
    ...elements.flatMap((e, i) => [Buffer.from(i > 0 ? `${ws()},${ws()}` : ''), e]),
    Buffer.from(`${ws()}]${ws()}`),
  ]);
}

/** The batch body with its framing or contents broken: bytes flipped, cut, inserted or dropped, anywhere. */
function mutateBatch(body: Buffer, enc: Enc): Buffer {
  const at = Math.floor(random() * (body.length + 1));
  const noise = enc === 'json' ? pick([',', ']', '[', '{', '}', ' ', '"', '0', ',]', '[]', 'null', '\u0000']) : null;
  switch (Math.floor(random() * 5)) {
    case 0:
      return body.subarray(0, at);
    case 1:
      return Buffer.concat([body.subarray(0, at), noise === null ? Buffer.from([Math.floor(random() * 256)]) : Buffer.from(noise), body.subarray(at)]);
    case 2:
      return Buffer.concat([body.subarray(0, at), body.subarray(at + 1 + Math.floor(random() * 3))]);
    case 3: {
      const copy = Buffer.from(body);
      if (at < copy.length) copy[at] = enc === 'msgpack' && at === 0 ? copy[0]! + pick([-1, 1]) : Math.floor(random() * 256);
      return copy;
    }
    default:
      return Buffer.concat([body, body.subarray(enc === 'msgpack' ? Math.min(1, body.length) : 0)]);
  }
}

for (const enc of ['json', 'msgpack'] as const) {
  test(`${enc}: the one-pass batch reader agrees with the exact path on generated, edge-case and mutated batch bodies`, () => {
    random = seededRandom(SEED + (enc === 'json' ? 5 : 6));
    const stats = { fast: 0, bodies: 0 };
    for (let round = 0; round < 300; round++) {
      const size = pick([0, 1, 2, 3, 5, 15, 16, 17, 40]);
      // Half the batches are all well-formed ticks (written the many ways encoders write them),
      // half carry fuzzed elements.
      const clean = chance(0.5);
      const elements = Array.from({ length: size }, () =>
        clean
          ? enc === 'json'
            ? Buffer.from(jsonText(nodeOf(pick(corpus))), 'latin1')
            : msgpack(nodeOf(pick(corpus)))
          : bodyFor(enc, pick([0, 0, 0.01, 0.05])),
      );
      const batch = frame(elements, enc);
      agreeBatch(batch, enc, stats);
      if (enc === 'json' && chance(0.1)) agreeBatch(Buffer.concat([BOM, batch]), enc, stats);
      for (let m = 0; m < 3; m++) agreeBatch(mutateBatch(batch, enc), enc, stats);
    }
    const one = Buffer.from(enc === 'json' ? JSON.stringify(corpus[0]) : msgpack(nodeOf(corpus[0])));
    const edges =
      enc === 'json'
        ? [
            '[]',
            ' [ ] ',
            '[,]',
            '[',
            ']',
            '{}',
            'null',
            '[[]]',
            '[null]',
            `[${one}]`,
            `[${one},]`,
            `[,${one}]`,
            `[${one}]]`,
            `[[${one}]]`,
            `[${one}${one}]`,
            `[${one},,${one}]`,
            `[${one}] x`,
            `\ufeff[${one}]`,
          ].map((s) => Buffer.from(s))
        : [
            Buffer.from([0x90]),
            Buffer.from([0xdc, 0, 0]),
            Buffer.from([0xdd, 0, 0, 0, 0]),
            Buffer.from([0x91]),
            Buffer.from([0x80]),
            Buffer.from([0xc0]),
            Buffer.concat([Buffer.from([0x91]), one]),
            Buffer.concat([Buffer.from([0x92]), one]),
            Buffer.concat([Buffer.from([0x91]), one, one]),
            Buffer.concat([Buffer.from([0xdc, 0, 1]), one]),
            Buffer.concat([Buffer.from([0xdd, 0, 0, 0, 2]), one, one]),
            Buffer.concat([Buffer.from([0x91, 0x91]), one]),
            Buffer.concat([Buffer.from([0xdc, 0xff, 0xff]), one]),
          ];
    for (const body of edges) agreeBatch(body, enc, stats);
    // Worth something only if the fast path took many bodies and left many to the exact path.
    assert.ok(stats.fast > stats.bodies / 10 && stats.fast < stats.bodies * 0.9, `fast ${stats.fast} of ${stats.bodies}`);
  });

  test(`${enc}: a batch over the element cap is a 413 whether or not its elements are valid`, () => {
    const one = enc === 'json' ? Buffer.from(JSON.stringify(corpus[0])) : msgpack(nodeOf(corpus[0]));
    for (const element of [one, enc === 'json' ? Buffer.from('{"snapshot":1}') : Buffer.from([0x81, 0xa1, 0x61, 0x01])]) {
      const batch = frame(
        Array.from({ length: MAX_BATCH_TICKS + 1 }, () => element),
        enc,
      );
      assert.throws(
        () => readTicks(batch, enc),
        (err: unknown) => err instanceof HttpError && err.status === 413 && err.message.endsWith(`got ${MAX_BATCH_TICKS + 1}.`),
      );
      assert.equal(
        readTicks(
          frame(
            Array.from({ length: MAX_BATCH_TICKS }, () => element),
            enc,
          ),
          enc,
        ).length,
        MAX_BATCH_TICKS,
      );
    }
  });
}

test('regressions: the readers and the exact path agree on the bytes that broke them', () => {
  const stats = { fast: 0 };
  const tick = corpus[0] as { snapshot: { self_state: Record<string, unknown> }; profile: Record<string, unknown> };
  const treeWith = (mutateTree: (t: Node) => void): Node => {
    const t = nodeOf(tick);
    mutateTree(t);
    return t;
  };
  const selfState = (t: Node): Extract<Node, { t: 'map' }> => {
    const snapshot = (t as Extract<Node, { t: 'map' }>).entries.find(([k]) => (k as { bytes: Buffer }).bytes.toString() === 'snapshot')![1];
    return (snapshot as Extract<Node, { t: 'map' }>).entries.find(([k]) => (k as { bytes: Buffer }).bytes.toString() === 'self_state')![1] as Extract<
      Node,
      { t: 'map' }
    >;
  };
  // `C1 A8` + `as_weapon`: an overlong `h`, invalid UTF-8; the stock decoder read it as has_weapon.
  const overlongKey = treeWith((t) => {
    const entry = selfState(t).entries.find(([k]) => (k as { bytes: Buffer }).bytes.toString() === 'has_weapon')!;
    entry[0] = { t: 'str', bytes: Buffer.concat([Buffer.from([0xc1, 0xa8]), Buffer.from('as_weapon')]) };
  });
  for (const enc of ['json', 'msgpack'] as const) {
    const body = enc === 'json' ? json(overlongKey) : msgpack(overlongKey);
    assert.match(String(agree(body, enc, stats)), /not valid/);
  }
  // A long string starting with U+FEFF keeps it (TextDecoder used to drop it).
  const longName = { ...tick, snapshot: { ...tick.snapshot, heard: [{ from: 1, text: `\ufeff${'a'.repeat(300)}`, at_s: 1 }] } };
  for (const enc of ['json', 'msgpack'] as const) {
    const read = agree(enc === 'json' ? json(nodeOf(longName)) : msgpack(nodeOf(longName)), enc, stats) as TickRequest;
    assert.equal(read.snapshot.heard![0]!.text.charCodeAt(0), 0xfeff);
  }
  // bin and ext where an object is required are refused, not read as an empty profile.
  for (const value of [
    { t: 'bin', bytes: Buffer.from([1]) },
    { t: 'ext', type: 1, bytes: Buffer.alloc(4) },
  ] as Node[]) {
    const t = nodeOf(tick) as Extract<Node, { t: 'map' }>;
    t.entries.find(([k]) => (k as { bytes: Buffer }).bytes.toString() === 'profile')![1] = value;
    assert.match(String(agree(msgpack(t), 'msgpack', stats)), /profile must be an object/);
  }
  // A JSON body that is not UTF-8 is refused whichever field holds the bad bytes.
  const badKey = Buffer.concat([Buffer.from(JSON.stringify(tick).slice(0, -1)), Buffer.from(',"'), Buffer.from([0xff]), Buffer.from('":1}')]);
  assert.match(String(agree(badKey, 'json', stats)), /not valid JSON/);
  // A byte-order mark is skipped by the routes (withoutBom), once.
  assert.notEqual(typeof agree(Buffer.from(withoutBom(Buffer.concat([BOM, Buffer.from(JSON.stringify(tick))]))), 'json', stats), 'string');
});
