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
