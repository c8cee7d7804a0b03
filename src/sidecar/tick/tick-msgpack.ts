import type { Intent, TickRequest, TickResponse, Vec3, Why } from '../../../brain/index.js';
import { asBuffer, bail, keysOf, MAX_SKIP_DEPTH, Name, readBatchOrNull, readOrNull, TickReader, type Keys } from './tick-reader.js';

/**
 * The request in a MessagePack body, or null when only the exact path (the @msgpack/msgpack
 * decoder, then the validator) can answer for it. Whatever the decoder would refuse or
 * turn into something other than plain data (a `__proto__` key, a key that is not a string,
 * an extension type, a 64-bit integer, invalid UTF-8, trailing bytes) is left to it.
 */
export function readTickMsgpack(body: Uint8Array): TickRequest | null {
  return readOrNull(new MsgpackTickReader(asBuffer(body)));
}

/** The requests of a MessagePack array of ticks, read in one pass; null when only the exact path can answer for the body. */
export function readTicksMsgpack(body: Uint8Array, max: number): TickRequest[] | null {
  return readBatchOrNull(new MsgpackTickReader(asBuffer(body)), max);
}

const PROTO = new Name('__proto__');
/** Keys of a skipped map: each is only checked. */
const NO_KEYS = keysOf([]);

class MsgpackTickReader extends TickReader {
  /** Makes sure `count` more bytes are there. */
  private need(count: number): void {
    if (this.i + count > this.n) bail();
  }

  private byte(): number {
    if (this.i >= this.n) bail();
    return this.b[this.i++]!;
  }

  private u16(): number {
    this.need(2);
    const v = this.b.readUInt16BE(this.i);
    this.i += 2;
    return v;
  }

  private u32(): number {
    this.need(4);
    const v = this.b.readUInt32BE(this.i);
    this.i += 4;
    return v;
  }

  /** A map header's member count, or -1 when the next value is no map. */
  private mapHeader(c: number): number {
    if (c >= 0x80 && c <= 0x8f) return c - 0x80;
    if (c === 0xde) return this.u16();
    if (c === 0xdf) return this.u32();
    return -1;
  }

  private arrayHeader(c: number): number {
    if (c >= 0x90 && c <= 0x9f) return c - 0x90;
    if (c === 0xdc) return this.u16();
    if (c === 0xdd) return this.u32();
    return -1;
  }

  /** A string header's byte length, or -1 when the next value is no string. */
  private strHeader(c: number): number {
    if (c >= 0xa0 && c <= 0xbf) return c - 0xa0;
    if (c === 0xd9) return this.byte();
    if (c === 0xda) return this.u16();
    if (c === 0xdb) return this.u32();
    return -1;
  }

  protected openObject(): number {
    const count = this.mapHeader(this.byte());
    if (count < 0) bail();
    return count;
  }

  protected afterMember(left: number): number {
    return left - 1;
  }

  protected openList(): number {
    const count = this.arrayHeader(this.byte());
    if (count < 0) bail();
    return count;
  }

  protected afterItem(left: number): number {
    return left - 1;
  }

  protected end(): void {
    if (this.i !== this.n) bail();
  }

  protected key(keys: Keys, previous: number): number {
    const len = this.strHeader(this.byte());
    if (len < 0) bail();
    this.need(len);
    const start = this.i;
    this.i += len;
    const names = keys.names;
    const count = names.length;
    const expected = keys.follows[previous + 1]!;
    let k = expected < count ? expected : 0;
    for (let tried = 0; tried < count; tried++) {
      if (this.spells(names[k]!, start, len)) {
        if (k !== expected) keys.follows[previous + 1] = k;
        return k;
      }
      if (++k === count) k = 0;
    }
    if (this.spells(PROTO, start, len)) bail();
    this.utf8(start, this.i);
    return -1;
  }

  protected number(): number {
    const c = this.byte();
    if (c <= 0x7f) return c;
    if (c >= 0xe0) return c - 0x100;
    let v: number;
    switch (c) {
      case 0xcb:
        this.need(8);
        v = this.b.readDoubleBE(this.i);
        this.i += 8;
        if (!Number.isFinite(v)) bail();
        return v;
      case 0xca:
        this.need(4);
        v = this.b.readFloatBE(this.i);
        this.i += 4;
        if (!Number.isFinite(v)) bail();
        return v;
      case 0xcc:
        return this.byte();
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xd0:
        this.need(1);
        return this.b.readInt8(this.i++);
      case 0xd1:
        this.need(2);
        v = this.b.readInt16BE(this.i);
        this.i += 2;
        return v;
      case 0xd2:
        this.need(4);
        v = this.b.readInt32BE(this.i);
        this.i += 4;
        return v;
      default:
        // 64-bit integers, and anything that is no number.
        return bail();
    }
  }

  protected boolean(): boolean {
    const c = this.byte();
    if (c === 0xc3) return true;
    if (c === 0xc2) return false;
    return bail();
  }

  protected string(maxLength: number): string {
    const len = this.strHeader(this.byte());
    if (len < 0) bail();
    this.need(len);
    const start = this.i;
    const end = (this.i += len);
    return this.text(start, end, this.isAscii(start, end), maxLength);
  }

  protected oneOf<T extends string>(names: readonly Name[], choices: readonly T[]): T {
    const len = this.strHeader(this.byte());
    if (len < 0) bail();
    this.need(len);
    const start = this.i;
    this.i += len;
    return this.choice(names, choices, start, len);
  }

  protected skip(depth: number): void {
    const c = this.byte();
    if (c <= 0x7f || c >= 0xe0 || c === 0xc0 || c === 0xc2 || c === 0xc3) return;
    let len = this.strHeader(c);
    if (len >= 0) {
      this.need(len);
      this.i += len;
      this.utf8(this.i - len, this.i);
      return;
    }
    len = this.mapHeader(c);
    if (len >= 0) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      for (let k = 0; k < len; k++) {
        // The decoder takes string and number keys only, and never `__proto__`.
        const head = this.b[this.i];
        if (head === undefined) bail();
        if ((head >= 0xa0 && head <= 0xbf) || (head >= 0xd9 && head <= 0xdb)) this.key(NO_KEYS, -1);
        else this.number();
        this.skip(depth + 1);
      }
      return;
    }
    len = this.arrayHeader(c);
    if (len >= 0) {
      if (depth >= MAX_SKIP_DEPTH) bail();
      for (let k = 0; k < len; k++) this.skip(depth + 1);
      return;
    }
    switch (c) {
      case 0xc4:
        len = this.byte();
        break;
      case 0xc5:
        len = this.u16();
        break;
      case 0xc6:
        len = this.u32();
        break;
      case 0xca:
      case 0xce:
      case 0xd2:
        len = 4;
        break;
      case 0xcb:
      case 0xcf:
      case 0xd3:
        len = 8;
        break;
      case 0xcc:
      case 0xd0:
        len = 1;
        break;
      case 0xcd:
      case 0xd1:
        len = 2;
        break;
      // Extension types (the decoder makes Dates or ExtData of them) and 0xc1 (never used).
      default:
        bail();
    }
    this.need(len);
    this.i += len;
  }
}

/** Marks a reply the shape writer leaves to the generic encoder. */
const GENERIC = { generic: true } as const;

// Replies are written here, then copied out: a reply may be sent after another tick's reply
// was written (worker mode answers in a later microtask), so the scratch is never handed out.
const scratch = Buffer.allocUnsafe(64 * 1024);
let at = 0;

/**
 * The MessagePack bytes of a reply, byte for byte what @msgpack/msgpack's encode gives for it
 * (the tests hold it to that), written by shape. Null when the reply holds something the
 * shape writer leaves to the generic encoder: an intent kind it does not know, text that is
 * not ASCII (the encoder's UTF-8 handling of lone surrogates differs by string length), an
 * integer beyond 32 bits, or a reply too long for the scratch buffer.
 */
export function writeTickMsgpack(response: TickResponse): Uint8Array | null {
  at = 0;
  try {
    const why = response.why;
    map(why === undefined ? 3 : 4);
    key('agent');
    num(response.agent);
    key('posture');
    str(response.posture);
    key('intents');
    const intents = response.intents;
    const count = intents.length;
    if (count < 16) put(0x90 + count);
    else {
      put(0xdc);
      u16(count);
    }
    for (let k = 0; k < count; k++) intent(intents[k]!);
    if (why !== undefined) explanation(why);
  } catch (err) {
    if (err === GENERIC) return null;
    throw err;
  }
  return Buffer.from(scratch.subarray(0, at));
}

/** An explained reply's `why`, its members in the object's order (as the encoder takes them). */
function explanation(why: Why): void {
  key('why');
  map(4);
  key('mode');
  str(why.mode);
  key('goal');
  str(why.goal);
  key('options');
  const options = why.options;
  if (options.length >= 16) throw GENERIC;
  put(0x90 + options.length);
  for (let k = 0; k < options.length; k++) {
    const o = options[k]!;
    map(2);
    key('name');
    str(o.name);
    key('score');
    num(o.score);
  }
  key('rule');
  str(why.rule);
}

function intent(it: Intent): void {
  switch (it.kind) {
    case 'MoveTo':
      map(3);
      kind('MoveTo');
      key('to');
      vec(it.to);
      key('speed');
      str(it.speed);
      return;
    case 'Engage':
      map(3);
      kind('Engage');
      key('target');
      num(it.target);
      key('fire');
      put(it.fire ? 0xc3 : 0xc2);
      return;
    case 'Face':
      map(2);
      kind('Face');
      key('yaw_deg');
      num(it.yaw_deg);
      return;
    case 'Flee':
      map(2);
      kind('Flee');
      key('from');
      num(it.from);
      return;
    case 'Investigate':
      map(2);
      kind('Investigate');
      key('at');
      vec(it.at);
      return;
    case 'Idle':
      map(2);
      kind('Idle');
      key('reason');
      str(it.reason);
      return;
    case 'Emote':
      map(2);
      kind('Emote');
      key('name');
      str(it.name);
      return;
    case 'Logoff':
      map(1);
      kind('Logoff');
      return;
    case 'Say':
      if (it.audio_url === undefined) {
        if ('audio_url' in it) throw GENERIC;
        map(4);
      } else map(5);
      kind('Say');
      key('text');
      str(it.text);
      key('channel');
      str(it.channel);
      key('line_id');
      str(it.line_id);
      if (it.audio_url !== undefined) {
        key('audio_url');
        str(it.audio_url);
      }
      return;
    default:
      return unwritten(it);
  }
}

/**
 * Takes `never`, so a kind added to Intent fails to compile at the call until it is written
 * above; at run time anything else (a reply not built from the types) goes to the generic encoder.
 */
function unwritten(_intent: never): never {
  throw GENERIC;
}

function kind(name: string): void {
  key('kind');
  str(name);
}

function vec(v: Vec3): void {
  map(3);
  key('x');
  num(v.x);
  key('y');
  num(v.y);
  key('z');
  num(v.z);
}

function room(bytes: number): void {
  if (at + bytes > scratch.length) throw GENERIC;
}

function put(byte: number): void {
  room(1);
  scratch[at++] = byte;
}

function u16(v: number): void {
  room(2);
  scratch.writeUInt16BE(v, at);
  at += 2;
}

function map(size: number): void {
  put(0x80 + size);
}

function key(name: string): void {
  str(name);
}

function str(s: string): void {
  const len = s.length;
  if (len < 32) put(0xa0 + len);
  else if (len < 0x100) {
    put(0xd9);
    put(len);
  } else if (len < 0x10000) {
    put(0xda);
    u16(len);
  } else throw GENERIC;
  room(len);
  for (let k = 0; k < len; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0x80) throw GENERIC;
    scratch[at++] = c;
  }
}

function num(v: number): void {
  if (Number.isSafeInteger(v)) {
    if (v >= 0) {
      if (v < 0x80) put(v);
      else if (v < 0x100) {
        put(0xcc);
        put(v);
      } else if (v < 0x10000) {
        put(0xcd);
        u16(v);
      } else if (v < 0x100000000) {
        put(0xce);
        room(4);
        scratch.writeUInt32BE(v, at);
        at += 4;
      } else throw GENERIC;
    } else if (v >= -0x20) put(0xe0 | (v + 0x20));
    else if (v >= -0x80) {
      put(0xd0);
      room(1);
      scratch.writeInt8(v, at++);
    } else if (v >= -0x8000) {
      put(0xd1);
      room(2);
      scratch.writeInt16BE(v, at);
      at += 2;
    } else if (v >= -0x80000000) {
      put(0xd2);
      room(4);
      scratch.writeInt32BE(v, at);
      at += 4;
    } else throw GENERIC;
    return;
  }
  put(0xcb);
  room(8);
  scratch.writeDoubleBE(v, at);
  at += 8;
}
