import { isUtf8 } from 'node:buffer';
import type { Intent, TickRequest, TickResponse, Vec3, Why } from '../../../brain/index.js';
import {
  asBuffer,
  bail,
  CACHED_TEXT_BYTES,
  inWorld,
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
          if (b[this.i] === 0x7d && inWorld(x, y, z)) {
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
/** Fixed text is stored four bytes at a time: its last store may write up to three bytes past its end (overwritten next). */
const SPILL = 3;
/**
 * Room checked before a reply's opening (`{"agent":`, a number, `,"posture":`). Every string
 * checks room for itself and for the fixed text that can follow it before the next check
 * (STRING_TAIL); every intent checks INTENT_ROOM: so the bytes in between are written with
 * no bounds check of their own.
 */
const REPLY_ROOM = 32 + NUMBER_ROOM + SPILL;
/** The longest fixed text after a string up to the next check (`,"intents":[` then `]}`, `,"channel":`...). */
const STRING_TAIL = 32 + SPILL;
/** An intent's fixed text (at most ~40 bytes), a separating comma and its numbers (three at most). */
const INTENT_ROOM = 64 + 3 * NUMBER_ROOM + SPILL;
/** Checked before each fixed text of an explanation that has no string before it to check for it, and before each score. */
const WHY_ROOM = 32 + NUMBER_ROOM + SPILL;

/** Fixed text as little-endian 32-bit words, the last one padded: written one word per store. */
class Fixed {
  readonly words: Uint32Array;
  readonly length: number;

  constructor(text: string) {
    const padded = Buffer.alloc(Math.ceil(text.length / 4) * 4);
    padded.write(text, 'latin1');
    this.length = text.length;
    this.words = new Uint32Array(padded.length / 4);
    for (let k = 0; k < this.words.length; k++) this.words[k] = padded.readUInt32LE(4 * k);
  }
}

const AGENT = new Fixed('{"agent":');
const POSTURE = new Fixed(',"posture":');
const INTENTS = new Fixed(',"intents":[');
const MOVE_TO = new Fixed('{"kind":"MoveTo","to":{"x":');
const SPEED = new Fixed(',"speed":');
const ENGAGE = new Fixed('{"kind":"Engage","target":');
const FIRE = new Fixed(',"fire":true}');
const HOLD = new Fixed(',"fire":false}');
const FACE = new Fixed('{"kind":"Face","yaw_deg":');
const FLEE = new Fixed('{"kind":"Flee","from":');
const INVESTIGATE = new Fixed('{"kind":"Investigate","at":{"x":');
const IDLE = new Fixed('{"kind":"Idle","reason":');
const EMOTE = new Fixed('{"kind":"Emote","name":');
const LOGOFF = new Fixed('{"kind":"Logoff"}');
const SAY = new Fixed('{"kind":"Say","text":');
const CHANNEL = new Fixed(',"channel":');
const LINE_ID = new Fixed(',"line_id":');
const AUDIO_URL = new Fixed(',"audio_url":');
const Y = new Fixed(',"y":');
const Z = new Fixed(',"z":');
const NULL = new Fixed('null');
const WHY_MODE = new Fixed('],"why":{"mode":');
const WHY_GOAL = new Fixed(',"goal":');
const WHY_OPTIONS = new Fixed(',"options":[');
const WHY_NAME = new Fixed('{"name":');
const WHY_SCORE = new Fixed(',"score":');
const WHY_RULE = new Fixed('],"rule":');
/** `}}`: the end of an explanation and of its reply. */
const CLOSE_WHY = 0x7d | (0x7d << 8);
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const CLOSE_OBJECT = 0x7d;
/** `]}`, a reply's end, as one little-endian 16-bit store. */
const CLOSE_REPLY = 0x5d | (0x7d << 8);
/** "00" to "99" as little-endian 16-bit words: two digits per division and per store. */
const PAIRS = Uint16Array.from({ length: 100 }, (_, n) => (0x30 + Math.floor(n / 10)) | ((0x30 + (n % 10)) << 8));
/** ".00" to ".99" as little-endian 32-bit words (one byte past the three is written and overwritten next). */
const CENTS = Uint32Array.from({ length: 100 }, (_, n) => 0x2e | (PAIRS[n]! << 8));

/** Copies fixed text to `at` (room checked by the caller, SPILL included); returns where it ends. */
function put(view: DataView, at: number, fixed: Fixed): number {
  const words = fixed.words;
  for (let k = 0; k < words.length; k++) view.setUint32(at + 4 * k, words[k]!, true);
  return at + fixed.length;
}

/**
 * The number num() writes next. A double passed to a function that is not inlined is boxed
 * (a 16-byte HeapNumber per number written, measured); a double stored in a typed array is not.
 */
const NUMBER = new Float64Array(1);

/**
 * NUMBER[0] as JSON.stringify writes it (room checked by the caller). Integers are written
 * digit by digit. A value with at most two decimals (what the brain's rounding gives: k/100
 * for an integer k, checked exactly) is written as k's digits with the point put back: below
 * 1e12 no shorter decimal lies within a double's spacing of k/100, so that is the shortest
 * round-trip form JavaScript prints. Anything else takes the general conversion.
 */
function num(view: DataView, at: number): number {
  const v = NUMBER[0]!;
  if (Number.isInteger(v)) {
    // -0 is written as 0, as JSON.stringify does.
    if (v >= 0) return v < 0x80000000 ? uint(view, at, v) : v < 1e15 ? bigUint(view, at, v) : text(view, at, '' + v);
    if (v > -0x80000000) {
      view.setUint8(at, MINUS);
      return uint(view, at + 1, -v);
    }
    if (v <= -1e15) return text(view, at, '' + v);
    view.setUint8(at, MINUS);
    return bigUint(view, at + 1, -v);
  }
  if (v !== v || v === Infinity || v === -Infinity) return put(view, at, NULL);
  const k = Math.round(v * 100);
  if (k / 100 !== v || v >= 1e12 || v <= -1e12) return text(view, at, '' + v);
  let cents = k;
  if (k < 0) {
    view.setUint8(at++, MINUS);
    cents = -k;
  }
  const whole = Math.floor(cents / 100);
  const frac = cents - whole * 100;
  at = whole < 0x80000000 ? uint(view, at, whole) : bigUint(view, at, whole);
  view.setUint32(at, CENTS[frac]!, true);
  // v is not an integer, so frac is not 0: only a trailing zero is left out.
  return frac % 10 === 0 ? at + 2 : at + 3;
}

/** How many decimal digits an integer in [0, 2^31) has. */
function digitCount(n: number): number {
  if (n < 10_000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : 4;
  if (n < 100_000_000) return n < 100_000 ? 5 : n < 1_000_000 ? 6 : n < 10_000_000 ? 7 : 8;
  return n < 1_000_000_000 ? 9 : 10;
}

/** The decimal digits of an integer in [0, 2^31), two per division and per store. */
function uint(view: DataView, at: number, v: number): number {
  let n = v | 0;
  const len = digitCount(n);
  let end = at + len;
  while (n >= 100) {
    const q = (n / 100) | 0;
    end -= 2;
    view.setUint16(end, PAIRS[n - q * 100]!, true);
    n = q;
  }
  if (n >= 10) view.setUint16(end - 2, PAIRS[n]!, true);
  else view.setUint8(end - 1, 0x30 + n);
  return at + len;
}

/** The decimal digits of an integer in [2^31, 1e15): doubles, not int32 arithmetic. */
function bigUint(view: DataView, at: number, v: number): number {
  let len = 1;
  for (let p = 10; p <= v; p *= 10) len++;
  let end = at + len;
  do {
    const q = Math.floor(v / 10);
    view.setUint8(--end, 0x30 + (v - q * 10));
    v = q;
  } while (v > 0);
  return at + len;
}

/** ASCII text made at run time (a number's general form; room checked by the caller). */
function text(view: DataView, at: number, s: string): number {
  const len = s.length;
  for (let k = 0; k < len; k++) view.setUint8(at + k, s.charCodeAt(k));
  return at + len;
}

/** The digits of a position after its `{"x":` (written by the caller): x, `,"y":` y, `,"z":` z, `}`. */
function vec(view: DataView, at: number, v: Vec3): number {
  NUMBER[0] = v.x;
  at = num(view, at);
  at = put(view, at, Y);
  NUMBER[0] = v.y;
  at = num(view, at);
  at = put(view, at, Z);
  NUMBER[0] = v.z;
  at = num(view, at);
  view.setUint8(at, CLOSE_OBJECT);
  return at + 1;
}

/** Whether a UTF-16 code unit is printable ASCII that JSON writes as it is (no quote, no backslash). */
function plain(c: number): boolean {
  return c >= 0x20 && c <= 0x7e && c !== QUOTE && c !== 0x5c;
}

/**
 * Writes replies into one scratch buffer, byte for byte what JSON.stringify gives. The cursor
 * is passed along as an argument and returned (a field read and written per byte measured as
 * most of the writer's time once); the bytes go through a DataView, fixed text and digit
 * pairs several bytes per store (on this kind of VM a store costs about as much whatever its
 * width); the room is checked a few times per reply (see REPLY_ROOM), not per byte.
 */
class JsonReplyWriter {
  out: Buffer;
  private view: DataView;
  at = 0;

  constructor(size: number) {
    this.out = Buffer.allocUnsafeSlow(size);
    this.view = new DataView(this.out.buffer, this.out.byteOffset, this.out.length);
  }

  /** Twice the room, keeping the bytes written so far. */
  grow(): void {
    const out = Buffer.allocUnsafeSlow(this.out.length * 2);
    this.out.copy(out, 0, 0, this.at);
    this.out = out;
    this.view = new DataView(out.buffer, out.byteOffset, out.length);
  }

  /** Bytes written as they are (a reply's text made elsewhere), growing the buffer as needed. */
  raw(bytes: Uint8Array): void {
    while (this.at + bytes.length > this.out.length) this.grow();
    this.out.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** Writes a reply from byte `from` on; returns where it ends (also left in `at`). */
  reply(response: TickResponse, from: number): number {
    const view = this.view;
    const size = this.out.length;
    if (from + REPLY_ROOM > size) throw TOO_LONG;
    let at = put(view, from, AGENT);
    NUMBER[0] = response.agent;
    at = num(view, at);
    at = put(view, at, POSTURE);
    at = this.str(at, response.posture);
    at = put(view, at, INTENTS);
    const intents = response.intents;
    for (let k = 0; k < intents.length; k++) {
      if (at + INTENT_ROOM > size) throw TOO_LONG;
      if (k > 0) view.setUint8(at++, COMMA);
      at = this.intent(at, intents[k]!);
    }
    const why = response.why;
    if (why !== undefined) return (this.at = this.why(at, why));
    view.setUint16(at, CLOSE_REPLY, true);
    this.at = at + 2;
    return at + 2;
  }

  /** An explained reply's end: `],"why":{…}}` in JSON.stringify's order of the object's members. */
  private why(at: number, why: Why): number {
    const view = this.view;
    if (at + WHY_ROOM > this.out.length) throw TOO_LONG;
    at = this.str(put(view, at, WHY_MODE), why.mode);
    at = this.str(put(view, at, WHY_GOAL), why.goal);
    at = put(view, at, WHY_OPTIONS);
    const options = why.options;
    for (let k = 0; k < options.length; k++) {
      const o = options[k]!;
      if (at + WHY_ROOM > this.out.length) throw TOO_LONG;
      if (k > 0) view.setUint8(at++, COMMA);
      at = this.str(put(view, at, WHY_NAME), o.name);
      if (at + WHY_ROOM > this.out.length) throw TOO_LONG;
      NUMBER[0] = o.score;
      at = num(view, put(view, at, WHY_SCORE));
      view.setUint8(at++, CLOSE_OBJECT);
    }
    if (at + WHY_ROOM > this.out.length) throw TOO_LONG;
    at = this.str(put(view, at, WHY_RULE), why.rule);
    view.setUint16(at, CLOSE_WHY, true);
    return at + 2;
  }

  private intent(at: number, it: Intent): number {
    const view = this.view;
    switch (it.kind) {
      case 'MoveTo':
        at = vec(view, put(view, at, MOVE_TO), it.to);
        at = this.str(put(view, at, SPEED), it.speed);
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      case 'Engage':
        NUMBER[0] = it.target;
        at = num(view, put(view, at, ENGAGE));
        return put(view, at, it.fire ? FIRE : HOLD);
      case 'Face':
        NUMBER[0] = it.yaw_deg;
        at = num(view, put(view, at, FACE));
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      case 'Flee':
        NUMBER[0] = it.from;
        at = num(view, put(view, at, FLEE));
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      case 'Investigate':
        at = vec(view, put(view, at, INVESTIGATE), it.at);
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      case 'Idle':
        at = this.str(put(view, at, IDLE), it.reason);
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      case 'Emote':
        at = this.str(put(view, at, EMOTE), it.name);
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      case 'Logoff':
        return put(view, at, LOGOFF);
      case 'Say':
        at = this.str(put(view, at, SAY), it.text);
        at = this.str(put(view, at, CHANNEL), it.channel);
        at = this.str(put(view, at, LINE_ID), it.line_id);
        // JSON.stringify leaves out a member whose value is undefined; so does the writer.
        if (it.audio_url !== undefined) at = this.str(put(view, at, AUDIO_URL), it.audio_url);
        view.setUint8(at, CLOSE_OBJECT);
        return at + 1;
      default: {
        // A kind added to Intent fails to compile here until it is written above.
        const unwritten: never = it;
        return this.utf8(at, JSON.stringify(unwritten));
      }
    }
  }

  /** UTF-8 of a string made elsewhere (JSON text), with room for STRING_TAIL after it. */
  private utf8(at: number, s: string): number {
    if (at + s.length * 3 + STRING_TAIL > this.out.length) throw TOO_LONG;
    return at + this.out.write(s, at, 'utf8');
  }

  /**
   * A JSON string: printable ASCII without quotes or backslashes is copied, four characters
   * per store; anything else goes through JSON.stringify.
   */
  private str(at: number, s: string): number {
    const len = s.length;
    const view = this.view;
    if (at + len + 2 + STRING_TAIL > this.out.length) throw TOO_LONG;
    view.setUint8(at, QUOTE);
    const start = at + 1;
    let k = 0;
    for (; k + 4 <= len; k += 4) {
      const a = s.charCodeAt(k);
      const b = s.charCodeAt(k + 1);
      const c = s.charCodeAt(k + 2);
      const d = s.charCodeAt(k + 3);
      if (!(plain(a) && plain(b) && plain(c) && plain(d))) return this.utf8(at, JSON.stringify(s));
      view.setUint32(start + k, a | (b << 8) | (c << 16) | (d << 24), true);
    }
    for (; k < len; k++) {
      const c = s.charCodeAt(k);
      if (!plain(c)) return this.utf8(at, JSON.stringify(s));
      view.setUint8(start + k, c);
    }
    view.setUint8(start + len, QUOTE);
    return start + len + 1;
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
