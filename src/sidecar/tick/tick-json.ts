import { isUtf8 } from 'node:buffer';
import type { Intent, TickRequest, TickResponse, Vec3 } from '../../../brain/index.js';
import {
  asBuffer,
  bail,
  CACHED_TEXT_BYTES,
  MAX_SKIP_DEPTH,
  readBatchOrNull,
  readOrNull,
  Spelling,
  textHash,
  TickReader,
  type Keys,
  type Name,
} from './tick-reader.js';

/** The request in a JSON body, or null when only the exact path (JSON.parse, then the validator) can answer for it. */
export function readTickJson(body: Uint8Array): TickRequest | null {
  const bytes = asBuffer(body);
  return endsClosed(bytes) ? readOrNull(new JsonTickReader(bytes)) : null;
}

/** The requests of a JSON array of ticks, read in one pass; null when only the exact path can answer for the body. */
export function readTicksJson(body: Uint8Array, max: number): TickRequest[] | null {
  const bytes = asBuffer(body);
  return endsClosed(bytes) ? readBatchOrNull(new JsonTickReader(bytes), max) : null;
}

/**
 * Whether the body's last byte closes an object or array or is whitespace, as in every body
 * the fast reader accepts. Checked once per body, it lets the number scanner read on past
 * each digit without checking the body's end: the byte after a digit always exists.
 */
function endsClosed(b: Buffer): boolean {
  const c = b.length > 0 ? b[b.length - 1]! : 0;
  return c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

const TRUE = Buffer.from('true').readUInt32LE(0);
const FALS = Buffer.from('fals').readUInt32LE(0);

/** Most significant digits (a leading `0` included) whose integer is exact in a double and whose quotient by a power of ten is correctly rounded. */
const EXACT_DIGITS = 15;
/** Most decimals whose power of ten is an exact double. */
const EXACT_SCALE = 22;

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46));
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

const VEC_X = new Spelling('{"x":');
const VEC_Y = new Spelling(',"y":');
const VEC_Z = new Spelling(',"z":');

// Mods send compact JSON: each step below tests the byte it expects first and walks
// whitespace only when there is some (a byte at or below 0x20).
class JsonTickReader extends TickReader {
  protected openObject(): number {
    return this.open(0x7b, 0x7d);
  }

  protected afterMember(): number {
    return this.after(0x7d);
  }

  protected openList(): number {
    return this.open(0x5b, 0x5d);
  }

  protected afterItem(): number {
    return this.after(0x5d);
  }

  /** Past `open`: 0 when `close` follows at once (consumed), else 1. */
  private open(open: number, close: number): number {
    const b = this.b;
    let i = this.i;
    if (b[i] !== open) {
      i = this.ws(i);
      if (b[i] !== open) bail();
    }
    let c = b[++i];
    if (c! <= 0x20) c = b[(i = this.ws(i))];
    if (c === close) {
      this.i = i + 1;
      return 0;
    }
    this.i = i;
    return 1;
  }

  /** After a member or item: 1 when another follows (`,` consumed), 0 at the closing `close`. */
  private after(close: number): number {
    const b = this.b;
    let i = this.i;
    let c = b[i];
    if (c! <= 0x20) c = b[(i = this.ws(i))];
    if (c === 0x2c) {
      i++;
      this.i = b[i]! <= 0x20 ? this.ws(i) : i;
      return 1;
    }
    if (c !== close) bail();
    this.i = i + 1;
    return 0;
  }

  protected end(): void {
    if (this.ws(this.i) !== this.n) bail();
  }

  /** Where the whitespace from `i` on ends. */
  private ws(i: number): number {
    const b = this.b;
    const n = this.n;
    while (i < n && isSpace(b[i]!)) i++;
    return i;
  }

  /**
   * A position as mods write it, `{"x":…,"y":…,"z":…}` without spaces, read as one template;
   * any other spelling of it is read again from its start by the general reader.
   */
  protected override vec3(): Vec3 {
    const b = this.b;
    const start = this.i;
    // Each token ends in a colon, never the body's last byte: the byte after it is there.
    let i = start + VEC_X.length;
    if (this.spelledAt(VEC_X, start) && b[i]! > 0x20) {
      this.i = i;
      const x = this.number();
      i = this.i + VEC_Y.length;
      if (this.spelledAt(VEC_Y, this.i) && b[i]! > 0x20) {
        this.i = i;
        const y = this.number();
        i = this.i + VEC_Z.length;
        if (this.spelledAt(VEC_Z, this.i) && b[i]! > 0x20) {
          this.i = i;
          const z = this.number();
          if (b[this.i] === 0x7d) {
            this.i++;
            return { x, y, z };
          }
        }
      }
    }
    this.i = start;
    return super.vec3();
  }

  /** Reads a member's key and its colon; the key's index in `keys`, or -1 for a key the tick does not know. */
  protected key(keys: Keys, previous: number): number {
    // A mod writes its fields in one order, without spaces: the key expected next, quoted
    // and with its colon, is tried first in one comparison.
    const names = keys.names;
    const expected = keys.follows[previous + 1]!;
    if (expected < names.length) {
      const token = names[expected]!.jsonKey;
      if (this.spelledAt(token, this.i)) {
        // The colon is never the body's last byte (endsClosed), so the next byte is there.
        const i = this.i + token.length;
        this.i = this.b[i]! <= 0x20 ? this.ws(i) : i;
        return expected;
      }
    }
    const k = this.anyKey(names, expected);
    if (k >= 0) keys.follows[previous + 1] = k;
    return k;
  }

  /** key() for any key, spacing and order. */
  private anyKey(keys: readonly Name[], expected: number): number {
    const b = this.b;
    if (b[this.i] !== 0x22) bail();
    const start = this.i + 1;
    const count = keys.length;
    let k = expected < count ? expected : 0;
    for (let tried = 0; tried < count; tried++) {
      const name = keys[k]!;
      const len = name.length;
      if (b[start + len] === 0x22 && this.spells(name, start, len)) {
        this.colon(start + len + 1);
        return k;
      }
      if (++k === count) k = 0;
    }
    let i = start;
    for (;;) {
      if (i >= this.n) bail();
      const c = b[i]!;
      if (c === 0x22) break;
      // An escaped key may spell a known one: only JSON.parse may say which.
      if (c === 0x5c || c < 0x20) bail();
      i++;
    }
    this.utf8(start, i);
    this.colon(i + 1);
    return -1;
  }

  /** The colon at or after `i` (past whitespace), and the whitespace after it. */
  private colon(i: number): void {
    const b = this.b;
    if (b[i] !== 0x3a) {
      i = this.ws(i);
      if (b[i] !== 0x3a) bail();
    }
    i++;
    this.i = b[i]! <= 0x20 ? this.ws(i) : i;
  }

  /**
   * A JSON number, to the same double JSON.parse gives: up to 15 significant digits and 22
   * decimals, the integer mantissa divided by an exact power of ten is correctly rounded (both
   * operands are exact doubles); anything longer or with an exponent goes through Number(),
   * which rounds correctly too. Past its first byte the scan reads no further than the byte
   * after a digit, sign or point, which endsClosed() guarantees is in the body.
   */
  protected number(): number {
    this.scan();
    return this.value;
  }

  /**
   * The last number scanned. A double returned from a call that is not inlined is boxed on
   * the heap; one left in a field is written in place, and number() (small enough to be
   * inlined where it is called) takes it out unboxed.
   */
  private value = 0.5;

  /** Scans a number into `value`. */
  private scan(): void {
    const b = this.b;
    const start = this.i;
    let i = start;
    let c = i < this.n ? b[i]! : 0;
    const negative = c === 0x2d;
    if (negative) c = b[++i]!;
    const first = i;
    let mantissa = c - 0x30;
    if (mantissa === 0) {
      c = b[++i]!;
      if (c >= 0x30 && c <= 0x39) bail();
    } else if (mantissa > 0 && mantissa <= 9) {
      c = b[++i]!;
      while (c >= 0x30 && c <= 0x39) {
        mantissa = mantissa * 10 + (c - 0x30);
        c = b[++i]!;
      }
    } else bail();
    let digits = i - first;
    let scale = 0;
    if (c === 0x2e) {
      const point = i;
      c = b[++i]!;
      if (!(c >= 0x30 && c <= 0x39)) bail();
      do {
        mantissa = mantissa * 10 + (c - 0x30);
        c = b[++i]!;
      } while (c >= 0x30 && c <= 0x39);
      scale = i - point - 1;
      digits += scale;
    }
    if (c === 0x65 || c === 0x45) {
      this.value = this.exponent(start, i);
      return;
    }
    this.i = i;
    if (digits > EXACT_DIGITS || scale > EXACT_SCALE) {
      this.value = this.decimal(start, i);
      return;
    }
    const v = scale === 0 ? mantissa : mantissa / POW10[scale]!;
    this.value = negative ? -v : v;
  }

  /** The rest of a number from its exponent marker at `i`, then the whole number from `start` as Number() reads it. */
  private exponent(start: number, i: number): number {
    const b = this.b;
    let c = b[++i]!;
    if (c === 0x2b || c === 0x2d) c = b[++i]!;
    if (!(c >= 0x30 && c <= 0x39)) bail();
    do c = b[++i]!;
    while (c >= 0x30 && c <= 0x39);
    this.i = i;
    return this.decimal(start, i);
  }

  /** Bytes [start, end), a well-formed JSON number, rounded as JSON.parse does; bails on one beyond a double's range. */
  private decimal(start: number, end: number): number {
    const v = Number(this.b.toString('latin1', start, end));
    if (!Number.isFinite(v)) bail();
    return v;
  }

  protected boolean(): boolean {
    const b = this.b;
    let i = this.i;
    if (b[i]! <= 0x20) i = this.ws(i);
    // `true` and `fals` as one four-byte word each.
    if (i + 4 <= this.n) {
      const word = this.view.getUint32(this.base + i, true);
      if (word === TRUE) {
        this.i = i + 4;
        return true;
      }
      if (word === FALS && b[i + 4] === 0x65) {
        this.i = i + 5;
        return false;
      }
    }
    return bail();
  }

  /** Past the whitespace before a value, which must start with `c`. */
  private expect(c: number): void {
    const b = this.b;
    let i = this.i;
    if (b[i] !== c) {
      i = this.ws(i);
      if (b[i] !== c) bail();
    }
    this.i = i;
  }

  /**
   * Scans a string's body from after its opening quote to its closing quote (not consumed),
   * rejecting what JSON.parse rejects (control characters, unknown escapes). Returns 0 for
   * plain ASCII, 1 with non-ASCII bytes, 2 with escapes.
   */
  private scanString(): number {
    let kind = 0;
    for (;;) {
      if (this.i >= this.n) bail();
      const c = this.b[this.i]!;
      if (c === 0x22) return kind;
      if (c < 0x20) bail();
      if (c === 0x5c) {
        kind = 2;
        const e = this.b[this.i + 1];
        if (e === 0x75) {
          if (!isHex(this.b[this.i + 2]) || !isHex(this.b[this.i + 3]) || !isHex(this.b[this.i + 4]) || !isHex(this.b[this.i + 5])) bail();
          this.i += 6;
        } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) this.i += 2;
        else bail();
        continue;
      }
      if (c >= 0x80 && kind === 0) kind = 1;
      this.i++;
    }
  }

  protected string(maxLength: number): string {
    this.expect(0x22);
    // Printable ASCII up to the closing quote, hashed on the way for the text cache; a
    // string with anything else is scanned again the long way.
    const b = this.b;
    const n = this.n;
    let i = this.i + 1;
    let hash = 0;
    while (i < n) {
      const c = b[i]!;
      if (c === 0x22) {
        const start = this.i + 1;
        this.i = i + 1;
        if (i - start > maxLength) bail();
        return i - start <= CACHED_TEXT_BYTES ? this.cachedAs(start, i, hash) : b.toString('latin1', start, i);
      }
      if (c < 0x20 || c === 0x5c || c >= 0x80) break;
      hash = textHash(hash, c);
      i++;
    }
    const start = ++this.i;
    const kind = this.scanString();
    const end = this.i++;
    if (kind !== 2) return this.text(start, end, kind === 0, maxLength);
    // Escapes: JSON.parse decodes the string alone, once its bytes are known to be UTF-8.
    if (!isUtf8(this.b.subarray(start, end))) bail();
    let s: string;
    try {
      s = JSON.parse(this.b.toString('utf8', start - 1, end + 1)) as string;
    } catch {
      return bail();
    }
    if (s.length > maxLength) bail();
    return s;
  }

  /** One of `choices`, returned as the constant string rather than a fresh copy. */
  protected oneOf<T extends string>(names: readonly Name[], choices: readonly T[]): T {
    this.expect(0x22);
    // A value spelled out between its quotes, tried whole, by its first four bytes first;
    // escapes and the rest go the long way.
    const at = this.i;
    if (at + 4 <= this.n) {
      const head = this.view.getUint32(this.base + at, true);
      for (let k = 0; k < names.length; k++) {
        const token = names[k]!.jsonString;
        if (token.head === head && this.spelledAt(token, at)) {
          this.i = at + token.length;
          return choices[k]!;
        }
      }
    }
    const start = ++this.i;
    if (this.scanString() !== 0) bail();
    return this.choice(names, choices, start, this.i++ - start);
  }

  /** A string from its opening quote to past its closing one, checked as JSON.parse would, its bytes as UTF-8. */
  private skipString(): void {
    const start = ++this.i;
    if (this.scanString() !== 0) this.utf8(start, this.i);
    this.i++;
  }

  /** Any JSON value, checked for syntax only. */
  protected skip(depth: number): void {
    const b = this.b;
    this.i = this.ws(this.i);
    const c = b[this.i];
    if (c === 0x22) {
      this.skipString();
    } else if (c === 0x7b) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      if (this.openObject() === 0) return;
      do {
        this.expect(0x22);
        this.skipString();
        this.colon(this.i);
        this.skip(depth + 1);
      } while (this.after(0x7d) > 0);
    } else if (c === 0x5b) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      if (this.openList() === 0) return;
      do this.skip(depth + 1);
      while (this.after(0x5d) > 0);
    } else if (c === 0x74 || c === 0x66) this.boolean();
    else if (c === 0x6e && b[this.i + 1] === 0x75 && b[this.i + 2] === 0x6c && b[this.i + 3] === 0x6c) this.i += 4;
    else this.number();
  }
}

/** Marks a reply too long for the scratch buffer: it is written as a string instead. */
const TOO_LONG = { tooLong: true } as const;

/** The longest number num() writes: a sign, 21 digits or an exponent form, a point. */
const NUMBER_ROOM = 32;

/**
 * Writes replies into one scratch buffer. A class with its cursor in a field, and locals in
 * the loops: a module-level `let` cursor is a context load and a hole check per byte, which
 * measured as most of the writer's time.
 */
class JsonReplyWriter {
  out: Buffer;
  at = 0;

  constructor(size: number) {
    this.out = Buffer.allocUnsafeSlow(size);
  }

  /** Twice the room, keeping the bytes written so far. */
  grow(): void {
    const out = Buffer.allocUnsafeSlow(this.out.length * 2);
    this.out.copy(out, 0, 0, this.at);
    this.out = out;
  }

  /** Bytes written as they are (a reply's text made elsewhere), growing the buffer as needed. */
  raw(bytes: Uint8Array): void {
    while (this.at + bytes.length > this.out.length) this.grow();
    this.out.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** Writes a reply from byte `from` on; returns where it ends. */
  reply(response: TickResponse, from: number): number {
    this.at = from;
    this.ascii('{"agent":');
    this.num(response.agent);
    this.ascii(',"posture":');
    this.str(response.posture);
    this.ascii(',"intents":[');
    const intents = response.intents;
    for (let k = 0; k < intents.length; k++) {
      if (k > 0) this.ascii(',');
      this.intent(intents[k]!);
    }
    this.ascii(']}');
    return this.at;
  }

  private intent(it: Intent): void {
    switch (it.kind) {
      case 'MoveTo':
        this.ascii('{"kind":"MoveTo","to":');
        this.vec(it.to);
        this.ascii(',"speed":');
        this.str(it.speed);
        this.ascii('}');
        return;
      case 'Engage':
        this.ascii('{"kind":"Engage","target":');
        this.num(it.target);
        this.ascii(it.fire ? ',"fire":true}' : ',"fire":false}');
        return;
      case 'Face':
        this.ascii('{"kind":"Face","yaw_deg":');
        this.num(it.yaw_deg);
        this.ascii('}');
        return;
      case 'Flee':
        this.ascii('{"kind":"Flee","from":');
        this.num(it.from);
        this.ascii('}');
        return;
      case 'Investigate':
        this.ascii('{"kind":"Investigate","at":');
        this.vec(it.at);
        this.ascii('}');
        return;
      case 'Idle':
        this.ascii('{"kind":"Idle","reason":');
        this.str(it.reason);
        this.ascii('}');
        return;
      case 'Emote':
        this.ascii('{"kind":"Emote","name":');
        this.str(it.name);
        this.ascii('}');
        return;
      case 'Logoff':
        this.ascii('{"kind":"Logoff"}');
        return;
      case 'Say':
        this.ascii('{"kind":"Say","text":');
        this.str(it.text);
        this.ascii(',"channel":');
        this.str(it.channel);
        this.ascii(',"line_id":');
        this.str(it.line_id);
        // JSON.stringify leaves out a member whose value is undefined; so does the writer.
        if (it.audio_url !== undefined) {
          this.ascii(',"audio_url":');
          this.str(it.audio_url);
        }
        this.ascii('}');
        return;
      default: {
        // A kind added to Intent fails to compile here until it is written above.
        const unwritten: never = it;
        this.utf8(JSON.stringify(unwritten));
      }
    }
  }

  private vec(v: Vec3): void {
    this.ascii('{"x":');
    this.num(v.x);
    this.ascii(',"y":');
    this.num(v.y);
    this.ascii(',"z":');
    this.num(v.z);
    this.ascii('}');
  }

  private room(bytes: number): void {
    if (this.at + bytes > this.out.length) throw TOO_LONG;
  }

  /** Text known to be ASCII that needs no escaping (the writer's own punctuation and keys). */
  private ascii(s: string): void {
    const len = s.length;
    this.room(len);
    const out = this.out;
    const at = this.at;
    for (let k = 0; k < len; k++) out[at + k] = s.charCodeAt(k);
    this.at = at + len;
  }

  private utf8(s: string): void {
    this.room(s.length * 3);
    this.at += this.out.write(s, this.at, 'utf8');
  }

  /** A JSON string: printable ASCII without quotes or backslashes is copied, anything else goes through JSON.stringify. */
  private str(s: string): void {
    const len = s.length;
    this.room(len + 2);
    const out = this.out;
    let at = this.at;
    out[at++] = 0x22;
    for (let k = 0; k < len; k++) {
      const c = s.charCodeAt(k);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        this.utf8(JSON.stringify(s));
        return;
      }
      out[at++] = c;
    }
    out[at++] = 0x22;
    this.at = at;
  }

  /**
   * A number as JSON.stringify writes it. Integers are written digit by digit. A value with
   * at most two decimals (what the brain's rounding gives: k/100 for an integer k, checked
   * exactly) is written as k's digits with the point put back: below 1e12 no shorter decimal
   * lies within a double's spacing of k/100, so that is the shortest round-trip form
   * JavaScript prints. Anything else takes the general conversion.
   */
  private num(v: number): void {
    this.room(NUMBER_ROOM);
    const out = this.out;
    if (Number.isInteger(v) && v > -1e15 && v < 1e15) {
      if (v < 0) {
        out[this.at++] = 0x2d;
        this.digits(-v);
      } else this.digits(v);
      return;
    }
    if (v !== v || v === Infinity || v === -Infinity) {
      this.ascii('null');
      return;
    }
    const k = Math.round(v * 100);
    if (k / 100 !== v || v >= 1e12 || v <= -1e12) {
      this.ascii('' + v);
      return;
    }
    if (v < 0) out[this.at++] = 0x2d;
    const cents = k < 0 ? -k : k;
    const whole = Math.floor(cents / 100);
    const frac = cents - whole * 100;
    this.digits(whole);
    let at = this.at;
    out[at++] = 0x2e;
    const tens = (frac / 10) | 0;
    const ones = frac - tens * 10;
    out[at++] = 0x30 + tens;
    if (ones !== 0) out[at++] = 0x30 + ones;
    this.at = at;
  }

  /** The decimal digits of a non-negative integer below 1e15 (room reserved by the caller). */
  private digits(v: number): void {
    const out = this.out;
    let len = 1;
    for (let p = 10; p <= v; p *= 10) len++;
    let end = this.at + len;
    this.at = end;
    if (v < 0x80000000) {
      // Below 2^31 the division by ten stays in integers.
      let n = v | 0;
      do {
        const q = (n / 10) | 0;
        out[--end] = 0x30 + (n - q * 10);
        n = q;
      } while (n > 0);
      return;
    }
    do {
      const q = Math.floor(v / 10);
      out[--end] = 0x30 + (v - q * 10);
      v = q;
    } while (v > 0);
  }
}

const writer = new JsonReplyWriter(64 * 1024);
/** Replies lent out by appendTickJson, one after another until rewindTickJson. */
const lender = new JsonReplyWriter(256 * 1024);
let lent = 0;

/**
 * The UTF-8 JSON bytes of a reply, byte for byte what JSON.stringify gives for it (the tests
 * hold it to that), written by shape straight into bytes: no string is built, so none has to
 * be flattened and converted to UTF-8 on its way to the socket, and the brain's two-decimal
 * numbers are written without the general double-to-text conversion. A reply too long for
 * the scratch buffer is stringified whole.
 *
 * The returned view is over a buffer the next call overwrites: copy it (`Buffer.from`) unless
 * it is sent before anything else can write a reply.
 */
export function writeTickJson(response: TickResponse): Uint8Array {
  let length: number;
  try {
    length = writer.reply(response, 0);
  } catch (err) {
    if (err !== TOO_LONG) throw err;
    return Buffer.from(JSON.stringify(response));
  }
  return writer.out.subarray(0, length);
}

/**
 * writeTickJson for a caller that writes several replies before it sends them: each is
 * written after the previous one in a shared buffer, so none needs a copy, and its view stays
 * valid until rewindTickJson(). Null when the buffer is full: the caller takes writeTickJson.
 */
export function appendTickJson(response: TickResponse): Uint8Array | null {
  let end: number;
  try {
    end = lender.reply(response, lent);
  } catch (err) {
    if (err !== TOO_LONG) throw err;
    return null;
  }
  const view = lender.out.subarray(lent, end);
  lent = end;
  return view;
}

/** Every view appendTickJson gave is done with: the next reply is written at the start again. */
export function rewindTickJson(): void {
  lent = 0;
}

const COMMA = 0x2c;

/**
 * The JSON body of a POST /ticks reply, written element by element into one buffer: `[`,
 * each element's reply (byte for byte what writeTickJson gives) or failure, commas, `]`. No
 * per-element buffer or copy; the buffer grows when a batch does not fit, and is kept.
 */
export class JsonGroupWriter {
  private readonly w = new JsonReplyWriter(64 * 1024);
  private count = 0;

  begin(): void {
    this.w.at = 0;
    this.count = 0;
    this.w.raw(OPEN);
  }

  /** The next element: a reply. On a throw nothing of it stays written. */
  reply(response: TickResponse): void {
    const w = this.w;
    const mark = w.at;
    this.separate();
    for (;;) {
      try {
        w.reply(response, w.at);
        return;
      } catch (err) {
        w.at = mark;
        if (err !== TOO_LONG) throw err;
        w.grow();
        this.count--;
        this.separate();
      }
    }
  }

  /** The next element: JSON text made elsewhere (a failure's body). */
  text(json: string): void {
    this.bytes(Buffer.from(json));
  }

  /** The next element: JSON bytes made elsewhere. */
  bytes(json: Uint8Array): void {
    this.separate();
    this.w.raw(json);
  }

  /** The whole body; a view over the writer's buffer, valid until the next begin(). */
  end(): Uint8Array {
    this.w.raw(CLOSE);
    return this.w.out.subarray(0, this.w.at);
  }

  private separate(): void {
    if (this.count++ > 0) {
      if (this.w.at + 1 > this.w.out.length) this.w.grow();
      this.w.out[this.w.at++] = COMMA;
    }
  }
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
