import { isUtf8 } from 'node:buffer';
import type { Intent, TickRequest, TickResponse, Vec3 } from '../../../brain/index.js';
import { asBuffer, bail, MAX_SKIP_DEPTH, readBatchOrNull, readOrNull, TickReader, type Name } from './tick-reader.js';

/** The request in a JSON body, or null when only the exact path (JSON.parse, then the validator) can answer for it. */
export function readTickJson(body: Uint8Array): TickRequest | null {
  return readOrNull(new JsonTickReader(asBuffer(body)));
}

/** The requests of a JSON array of ticks, read in one pass; null when only the exact path can answer for the body. */
export function readTicksJson(body: Uint8Array, max: number): TickRequest[] | null {
  return readBatchOrNull(new JsonTickReader(asBuffer(body)), max);
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46));
}

class JsonTickReader extends TickReader {
  protected openObject(): number {
    this.ws();
    if (this.b[this.i] !== 0x7b) bail();
    this.i++;
    this.ws();
    if (this.b[this.i] === 0x7d) {
      this.i++;
      return 0;
    }
    return 1;
  }

  protected afterMember(): number {
    return this.after(0x7d);
  }

  protected openList(): number {
    this.ws();
    if (this.b[this.i] !== 0x5b) bail();
    this.i++;
    this.ws();
    if (this.b[this.i] === 0x5d) {
      this.i++;
      return 0;
    }
    return 1;
  }

  protected afterItem(): number {
    return this.after(0x5d);
  }

  /** After a member or item: 1 when another follows (`,` consumed), 0 at the closing `close`. */
  private after(close: number): number {
    this.ws();
    const c = this.b[this.i++];
    if (c === 0x2c) {
      this.ws();
      return 1;
    }
    if (c === close) return 0;
    return bail();
  }

  protected end(): void {
    this.ws();
    if (this.i !== this.n) bail();
  }

  private ws(): void {
    while (this.i < this.n) {
      const c = this.b[this.i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else return;
    }
  }

  /** Reads a member's key and its colon; the key's index in `keys`, or -1 for a key the tick does not know. */
  protected key(keys: readonly Name[], expected: number): number {
    const b = this.b;
    if (b[this.i] !== 0x22) bail();
    const start = this.i + 1;
    // A mod writes its fields in one order, so the key after the last one matched is tried
    // first, straight against the bytes, without scanning the key on its own.
    const count = keys.length;
    let k = expected < count ? expected : 0;
    for (let tried = 0; tried < count; tried++) {
      const name = keys[k]!;
      const len = name.length;
      if (b[start + len] === 0x22 && this.spells(name, start, len)) {
        this.i = start + len + 1;
        this.colon();
        return k;
      }
      if (++k === count) k = 0;
    }
    this.i = start;
    for (;;) {
      if (this.i >= this.n) bail();
      const c = b[this.i]!;
      if (c === 0x22) break;
      // An escaped key may spell a known one: only JSON.parse may say which.
      if (c === 0x5c || c < 0x20) bail();
      this.i++;
    }
    this.utf8(start, this.i);
    this.i++;
    this.colon();
    return -1;
  }

  private colon(): void {
    this.ws();
    if (this.b[this.i] !== 0x3a) bail();
    this.i++;
    this.ws();
  }

  /**
   * A JSON number, to the same double JSON.parse gives: up to 15 significant digits and 22
   * decimals, the integer mantissa divided by an exact power of ten is correctly rounded (both
   * operands are exact doubles); anything longer or with an exponent goes through Number(),
   * which rounds correctly too.
   */
  protected number(): number {
    const b = this.b;
    const n = this.n;
    let i = this.i;
    const start = i;
    let c = i < n ? b[i]! : 0;
    const negative = c === 0x2d;
    if (negative) c = ++i < n ? b[i]! : 0;
    let mantissa = 0;
    let digits = 0;
    if (c === 0x30) c = ++i < n ? b[i]! : 0;
    else if (c >= 0x31 && c <= 0x39) {
      do {
        mantissa = mantissa * 10 + (c - 0x30);
        digits++;
        c = ++i < n ? b[i]! : 0;
      } while (c >= 0x30 && c <= 0x39);
    } else bail();
    let scale = 0;
    if (c === 0x2e) {
      c = ++i < n ? b[i]! : 0;
      if (!(c >= 0x30 && c <= 0x39)) bail();
      do {
        mantissa = mantissa * 10 + (c - 0x30);
        digits++;
        scale++;
        c = ++i < n ? b[i]! : 0;
      } while (c >= 0x30 && c <= 0x39);
    }
    let exact = digits <= 15 && scale <= 22;
    if (c === 0x65 || c === 0x45) {
      c = ++i < n ? b[i]! : 0;
      if (c === 0x2b || c === 0x2d) c = ++i < n ? b[i]! : 0;
      if (!(c >= 0x30 && c <= 0x39)) bail();
      do c = ++i < n ? b[i]! : 0;
      while (c >= 0x30 && c <= 0x39);
      exact = false;
    } else if (c >= 0x30 && c <= 0x39) bail();
    this.i = i;
    if (!exact) {
      const v = Number(b.toString('latin1', start, i));
      if (!Number.isFinite(v)) bail();
      return v;
    }
    const v = scale === 0 ? mantissa : mantissa / POW10[scale]!;
    return negative ? -v : v;
  }

  protected boolean(): boolean {
    this.ws();
    const c = this.b[this.i];
    if (c === 0x74 && this.b[this.i + 1] === 0x72 && this.b[this.i + 2] === 0x75 && this.b[this.i + 3] === 0x65) {
      this.i += 4;
      return true;
    }
    if (c === 0x66 && this.b[this.i + 1] === 0x61 && this.b[this.i + 2] === 0x6c && this.b[this.i + 3] === 0x73 && this.b[this.i + 4] === 0x65) {
      this.i += 5;
      return false;
    }
    return bail();
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
    this.ws();
    if (this.b[this.i] !== 0x22) bail();
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
    this.ws();
    if (this.b[this.i] !== 0x22) bail();
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
    this.ws();
    const c = this.b[this.i];
    if (c === 0x22) {
      this.skipString();
    } else if (c === 0x7b) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      this.i++;
      this.ws();
      if (this.b[this.i] === 0x7d) {
        this.i++;
        return;
      }
      do {
        if (this.b[this.i] !== 0x22) bail();
        this.skipString();
        this.ws();
        if (this.b[this.i] !== 0x3a) bail();
        this.i++;
        this.skip(depth + 1);
      } while (this.after(0x7d) > 0);
    } else if (c === 0x5b) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      this.i++;
      this.ws();
      if (this.b[this.i] === 0x5d) {
        this.i++;
        return;
      }
      do this.skip(depth + 1);
      while (this.after(0x5d) > 0);
    } else if (c === 0x74 || c === 0x66) this.boolean();
    else if (c === 0x6e && this.b[this.i + 1] === 0x75 && this.b[this.i + 2] === 0x6c && this.b[this.i + 3] === 0x6c) this.i += 4;
    else this.number();
  }
}

/** Marks a reply too long for the scratch buffer: it is written as a string instead. */
const TOO_LONG = { tooLong: true } as const;

/** The longest number num() writes: a sign, 21 digits or an exponent form, a point. */
const NUMBER_ROOM = 32;
/**
 * Room checked before a reply's opening (`{"agent":`, a number, `,"posture":`). Every string
 * checks room for itself and for the fixed text that can follow it before the next check
 * (STRING_TAIL); every intent checks INTENT_ROOM: so the bytes in between are written with
 * no bounds check of their own.
 */
const REPLY_ROOM = 32 + NUMBER_ROOM;
/** The longest fixed text after a string up to the next check (`,"intents":[` then `]}`, `,"channel":`...). */
const STRING_TAIL = 32;
/** An intent's fixed text (at most ~40 bytes), a separating comma and its numbers (three at most). */
const INTENT_ROOM = 64 + 3 * NUMBER_ROOM;

/** The fixed text of the replies, as bytes (copied by a loop: no string to read per byte). */
const ascii = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const AGENT = ascii('{"agent":');
const POSTURE = ascii(',"posture":');
const INTENTS = ascii(',"intents":[');
const MOVE_TO = ascii('{"kind":"MoveTo","to":{"x":');
const SPEED = ascii(',"speed":');
const ENGAGE = ascii('{"kind":"Engage","target":');
const FIRE = ascii(',"fire":true}');
const HOLD = ascii(',"fire":false}');
const FACE = ascii('{"kind":"Face","yaw_deg":');
const FLEE = ascii('{"kind":"Flee","from":');
const INVESTIGATE = ascii('{"kind":"Investigate","at":{"x":');
const IDLE = ascii('{"kind":"Idle","reason":');
const EMOTE = ascii('{"kind":"Emote","name":');
const LOGOFF = ascii('{"kind":"Logoff"}');
const SAY = ascii('{"kind":"Say","text":');
const CHANNEL = ascii(',"channel":');
const LINE_ID = ascii(',"line_id":');
const AUDIO_URL = ascii(',"audio_url":');
const Y = ascii(',"y":');
const Z = ascii(',"z":');
const NULL = ascii('null');
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const POINT = 0x2e;
const CLOSE_OBJECT = 0x7d;
const CLOSE_LIST = 0x5d;
/** "00" to "99": two digits per division by 100. */
const PAIRS = ascii(Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).join(''));

/** Copies fixed text to `at` (room checked by the caller); returns where it ends. */
function put(out: Buffer, at: number, bytes: Uint8Array): number {
  const len = bytes.length;
  for (let k = 0; k < len; k++) out[at + k] = bytes[k]!;
  return at + len;
}

/**
 * A number as JSON.stringify writes it (room checked by the caller). Integers are written
 * digit by digit. A value with at most two decimals (what the brain's rounding gives: k/100
 * for an integer k, checked exactly) is written as k's digits with the point put back: below
 * 1e12 no shorter decimal lies within a double's spacing of k/100, so that is the shortest
 * round-trip form JavaScript prints. Anything else takes the general conversion.
 */
function num(out: Buffer, at: number, v: number): number {
  if (Number.isInteger(v)) {
    // -0 is written as 0, as JSON.stringify does.
    if (v >= 0) return v < 0x80000000 ? uint(out, at, v) : v < 1e15 ? bigUint(out, at, v) : text(out, at, '' + v);
    if (v > -0x80000000) {
      out[at] = MINUS;
      return uint(out, at + 1, -v);
    }
    if (v <= -1e15) return text(out, at, '' + v);
    out[at] = MINUS;
    return bigUint(out, at + 1, -v);
  }
  if (v !== v || v === Infinity || v === -Infinity) return put(out, at, NULL);
  const k = Math.round(v * 100);
  if (k / 100 !== v || v >= 1e12 || v <= -1e12) return text(out, at, '' + v);
  let cents = k;
  if (k < 0) {
    out[at++] = MINUS;
    cents = -k;
  }
  const whole = Math.floor(cents / 100);
  const frac = cents - whole * 100;
  at = whole < 0x80000000 ? uint(out, at, whole) : bigUint(out, at, whole);
  out[at++] = POINT;
  out[at++] = PAIRS[2 * frac]!;
  // v is not an integer, so frac is not 0: only a trailing zero is left out.
  if (frac % 10 !== 0) out[at++] = PAIRS[2 * frac + 1]!;
  return at;
}

/** The decimal digits of an integer in [0, 2^31), two per division. */
function uint(out: Buffer, at: number, v: number): number {
  let n = v | 0;
  const len =
    n < 10
      ? 1
      : n < 100
        ? 2
        : n < 1000
          ? 3
          : n < 10_000
            ? 4
            : n < 100_000
              ? 5
              : n < 1_000_000
                ? 6
                : n < 10_000_000
                  ? 7
                  : n < 100_000_000
                    ? 8
                    : n < 1_000_000_000
                      ? 9
                      : 10;
  let end = at + len;
  while (n >= 100) {
    const q = (n / 100) | 0;
    const r = 2 * (n - q * 100);
    out[--end] = PAIRS[r + 1]!;
    out[--end] = PAIRS[r]!;
    n = q;
  }
  if (n >= 10) {
    out[--end] = PAIRS[2 * n + 1]!;
    out[--end] = PAIRS[2 * n]!;
  } else out[--end] = 0x30 + n;
  return at + len;
}

/** The decimal digits of an integer in [2^31, 1e15): doubles, not int32 arithmetic. */
function bigUint(out: Buffer, at: number, v: number): number {
  let len = 1;
  for (let p = 10; p <= v; p *= 10) len++;
  let end = at + len;
  do {
    const q = Math.floor(v / 10);
    out[--end] = 0x30 + (v - q * 10);
    v = q;
  } while (v > 0);
  return at + len;
}

/** ASCII text made at run time (a number's general form; room checked by the caller). */
function text(out: Buffer, at: number, s: string): number {
  const len = s.length;
  for (let k = 0; k < len; k++) out[at + k] = s.charCodeAt(k);
  return at + len;
}

/** The digits of a position after its `{"x":` (written by the caller): x, `,"y":` y, `,"z":` z, `}`. */
function vec(out: Buffer, at: number, v: Vec3): number {
  at = num(out, at, v.x);
  at = put(out, at, Y);
  at = num(out, at, v.y);
  at = put(out, at, Z);
  at = num(out, at, v.z);
  out[at] = CLOSE_OBJECT;
  return at + 1;
}

/**
 * Writes replies into one scratch buffer, byte for byte what JSON.stringify gives. The cursor
 * is passed along as an argument and returned (a field read and written per byte measured as
 * most of the writer's time once), and the room is checked a few times per reply (see
 * REPLY_ROOM), not per byte.
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

  /** Writes a reply from byte `from` on; returns where it ends (also left in `at`). */
  reply(response: TickResponse, from: number): number {
    const out = this.out;
    if (from + REPLY_ROOM > out.length) throw TOO_LONG;
    let at = put(out, from, AGENT);
    at = num(out, at, response.agent);
    at = put(out, at, POSTURE);
    at = this.str(at, response.posture);
    at = put(out, at, INTENTS);
    const intents = response.intents;
    for (let k = 0; k < intents.length; k++) {
      if (at + INTENT_ROOM > out.length) throw TOO_LONG;
      if (k > 0) out[at++] = COMMA;
      at = this.intent(at, intents[k]!);
    }
    out[at++] = CLOSE_LIST;
    out[at++] = CLOSE_OBJECT;
    this.at = at;
    return at;
  }

  private intent(at: number, it: Intent): number {
    const out = this.out;
    switch (it.kind) {
      case 'MoveTo':
        at = vec(out, put(out, at, MOVE_TO), it.to);
        at = this.str(put(out, at, SPEED), it.speed);
        out[at] = CLOSE_OBJECT;
        return at + 1;
      case 'Engage':
        at = num(out, put(out, at, ENGAGE), it.target);
        return put(out, at, it.fire ? FIRE : HOLD);
      case 'Face':
        at = num(out, put(out, at, FACE), it.yaw_deg);
        out[at] = CLOSE_OBJECT;
        return at + 1;
      case 'Flee':
        at = num(out, put(out, at, FLEE), it.from);
        out[at] = CLOSE_OBJECT;
        return at + 1;
      case 'Investigate':
        at = vec(out, put(out, at, INVESTIGATE), it.at);
        out[at] = CLOSE_OBJECT;
        return at + 1;
      case 'Idle':
        at = this.str(put(out, at, IDLE), it.reason);
        out[at] = CLOSE_OBJECT;
        return at + 1;
      case 'Emote':
        at = this.str(put(out, at, EMOTE), it.name);
        out[at] = CLOSE_OBJECT;
        return at + 1;
      case 'Logoff':
        return put(out, at, LOGOFF);
      case 'Say':
        at = this.str(put(out, at, SAY), it.text);
        at = this.str(put(out, at, CHANNEL), it.channel);
        at = this.str(put(out, at, LINE_ID), it.line_id);
        // JSON.stringify leaves out a member whose value is undefined; so does the writer.
        if (it.audio_url !== undefined) at = this.str(put(out, at, AUDIO_URL), it.audio_url);
        out[at] = CLOSE_OBJECT;
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

  /** A JSON string: printable ASCII without quotes or backslashes is copied, anything else goes through JSON.stringify. */
  private str(at: number, s: string): number {
    const len = s.length;
    const out = this.out;
    if (at + len + 2 + STRING_TAIL > out.length) throw TOO_LONG;
    out[at] = QUOTE;
    const start = at + 1;
    for (let k = 0; k < len; k++) {
      const c = s.charCodeAt(k);
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c) return this.utf8(at, JSON.stringify(s));
      out[start + k] = c;
    }
    out[start + len] = QUOTE;
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
