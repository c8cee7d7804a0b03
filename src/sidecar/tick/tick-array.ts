import type { TickRequest } from '../../../brain/index.js';
import type { Encoding } from '../../http/codec.js';
import { HttpError } from '../../http/errors.js';
import { decodeTickAs, msgpackDecoder, validTick, withoutBom } from './tick-exact.js';
import { readTicksJson } from './tick-json.js';
import { readTicksMsgpack } from './tick-msgpack.js';
import { asBuffer } from './tick-reader.js';
import { MAX_BATCH_TICKS } from './batch-cap.js';

export { MAX_BATCH_TICKS };
/** Default body limit of POST /ticks: 1,024 full snapshots of the usual size fit well below it. */
export const TICKS_MAX_BODY = 4 * 1024 * 1024;

/** An element of a batch that gets an error in its place: why, and its agent when it could be read. */
export class TickFailure {
  constructor(
    readonly error: HttpError,
    readonly agent: number | null,
  ) {}

  /** `{agent?, error: {code, message, details?}}`, the element's reply. */
  toBody(): { agent?: number; error: ReturnType<HttpError['toBody']>['error'] } {
    const error = this.error.toBody().error;
    return this.agent === null ? { error } : { agent: this.agent, error };
  }
}

export type BatchItem = TickRequest | TickFailure;

/**
 * The elements of a POST /ticks body, in order: each a tick request or the failure to put in
 * its place. Whole-body problems throw an HttpError (400 not the encoding or not an array,
 * 413 more than MAX_BATCH_TICKS elements).
 *
 * Fast path: one pass of the fast reader over the whole body, each element read where it
 * stands in the array, as a /tick body is read. When anything in the body is something the
 * fast reader is not sure of (a bad element, a body that is not well-formed, too many
 * elements), the whole body goes the exact way: its elements counted by a scan of the
 * framing (413 over the cap), then decoded whole, each element validated. An element's
 * result is thus the one /tick gives for its bytes.
 */
export function readTicks(body: Uint8Array, encoding: Encoding): BatchItem[] {
  const bytes = asBuffer(encoding === 'json' ? withoutBom(body) : body);
  const items = encoding === 'json' ? readTicksJson(bytes, MAX_BATCH_TICKS) : readTicksMsgpack(bytes, MAX_BATCH_TICKS);
  if (items !== null) return items;
  const count = encoding === 'json' ? countJson(bytes) : countMsgpack(bytes);
  if (count > MAX_BATCH_TICKS) throw tooMany(count);
  return exactTicks(bytes, encoding);
}

function tooMany(count: number): HttpError {
  return new HttpError('payload_too_large', `A batch holds at most ${MAX_BATCH_TICKS} tick requests, got ${count}.`);
}

function exactTicks(bytes: Buffer, encoding: Encoding): BatchItem[] {
  if (encoding === 'msgpack') {
    const ends = msgpackElementEnds(bytes);
    if (ends !== null) return exactMsgpackElements(bytes, ends);
  }
  const value = decodeTickAs(bytes, encoding);
  if (!Array.isArray(value)) throw new HttpError('bad_request', 'The body of POST /ticks must be an array of tick requests.');
  if (value.length > MAX_BATCH_TICKS) throw tooMany(value.length);
  return value.map(judged);
}

function judged(element: unknown): BatchItem {
  const result = validTick(element);
  return result instanceof HttpError ? new TickFailure(result, agentOf(element)) : result;
}

/**
 * A MessagePack array whose framing is whole, each element decoded on its own: an element the
 * decoder refuses (a `__proto__` key, an array or map as a map key, a malformed extension)
 * gets its own 400 in its place, as a JSON element that breaks a rule does, and the others
 * are answered. Only a body that is not a MessagePack array at all is refused whole.
 */
function exactMsgpackElements(bytes: Buffer, ends: readonly number[]): BatchItem[] {
  const out: BatchItem[] = new Array<BatchItem>(ends.length);
  let start = msgpackArrayHeader(bytes);
  for (let k = 0; k < ends.length; k++) {
    const end = ends[k]!;
    let element: unknown;
    try {
      element = msgpackDecoder.decode(bytes.subarray(start, end));
    } catch (err) {
      out[k] = new TickFailure(new HttpError('bad_request', `Element ${k} is not valid MessagePack: ${(err as Error).message}.`), null);
      start = end;
      continue;
    }
    out[k] = judged(element);
    start = end;
  }
  return out;
}

/** Bytes of a MessagePack array's header (its type byte and length), 0 when the body does not start with one. */
export function msgpackArrayHeader(b: Buffer): number {
  const head = b[0];
  if (head === undefined) return 0;
  if (head >= 0x90 && head <= 0x9f) return 1;
  if (head === 0xdc) return 3;
  if (head === 0xdd) return 5;
  return 0;
}

/**
 * Where each element of a MessagePack array body ends, when the body is exactly one array of
 * at most MAX_BATCH_TICKS elements whose framing is whole; null otherwise (413 is decided by
 * countMsgpack before this runs).
 */
export function msgpackElementEnds(b: Buffer): number[] | null {
  let i = msgpackArrayHeader(b);
  if (i === 0 || b.length < i) return null;
  const count = i === 1 ? b[0]! - 0x90 : i === 3 ? b.readUInt16BE(1) : b.readUInt32BE(1);
  if (count > MAX_BATCH_TICKS || count > b.length - i) return null;
  const ends: number[] = [];
  for (let k = 0; k < count; k++) {
    const end = msgpackValueEnd(b, i);
    if (end < 0) return null;
    ends.push((i = end));
  }
  return i === b.length ? ends : null;
}

/** The agent id of an element that failed validation, when it has a usable one. */
function agentOf(element: unknown): number | null {
  const snapshot = (element as { snapshot?: unknown } | null)?.snapshot;
  const agent = typeof snapshot === 'object' && snapshot !== null ? (snapshot as { agent?: unknown }).agent : undefined;
  return typeof agent === 'number' && Number.isSafeInteger(agent) ? agent : null;
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * How many elements a JSON array has, or -1 when the body is not an array this scan is sure
 * of. It tracks only strings and nesting, so that a body over the element cap is refused 413
 * whatever its elements hold; below the cap the exact path judges the body.
 */
function countJson(b: Buffer): number {
  const n = b.length;
  let i = 0;
  while (isSpace(b[i])) i++;
  if (b[i] !== 0x5b) return -1;
  i++;
  while (isSpace(b[i])) i++;
  let count = 0;
  if (b[i] === 0x5d) i++;
  else {
    for (;;) {
      const start = i;
      let depth = 0;
      for (; i < n; i++) {
        const c = b[i]!;
        if (c === 0x22) {
          for (i++; i < n && b[i] !== 0x22; i++) if (b[i] === 0x5c) i++;
          if (i >= n) return -1;
        } else if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) {
          if (depth === 0) break;
          depth--;
        } else if (depth === 0 && c === 0x2c) break;
      }
      if (i >= n) return -1;
      let end = i;
      while (end > start && isSpace(b[end - 1])) end--;
      if (end === start) return -1;
      count++;
      if (b[i++] === 0x5d) break;
      while (isSpace(b[i])) i++;
    }
  }
  while (isSpace(b[i])) i++;
  return i === n ? count : -1;
}

/**
 * How many elements a MessagePack array has, as countJson; -1 when the body is not a whole
 * array (the exact path then says why).
 */
function countMsgpack(b: Buffer): number {
  const n = b.length;
  if (n === 0) return -1;
  const head = b[0]!;
  let count: number;
  let i: number;
  if (head >= 0x90 && head <= 0x9f) {
    count = head - 0x90;
    i = 1;
  } else if (head === 0xdc && n >= 3) {
    count = b.readUInt16BE(1);
    i = 3;
  } else if (head === 0xdd && n >= 5) {
    count = b.readUInt32BE(1);
    i = 5;
  } else return -1;
  // Each element takes a byte at least: a count beyond the body is not a whole array.
  if (count > n - i) return -1;
  if (count > MAX_BATCH_TICKS) return count;
  for (let k = 0; k < count; k++) {
    const end = msgpackValueEnd(b, i);
    if (end < 0) return -1;
    i = end;
  }
  return i === n ? count : -1;
}

/** Where the MessagePack value at `i` ends (nested values included), or -1 past the body's end. */
function msgpackValueEnd(b: Buffer, i: number): number {
  const n = b.length;
  let pending = 1;
  while (pending > 0) {
    if (i >= n) return -1;
    const c = b[i++]!;
    pending--;
    let skip = 0;
    if (c <= 0x7f || c >= 0xe0 || c === 0xc0 || c === 0xc2 || c === 0xc3) skip = 0;
    else if (c >= 0x80 && c <= 0x8f) pending += 2 * (c - 0x80);
    else if (c >= 0x90 && c <= 0x9f) pending += c - 0x90;
    else if (c >= 0xa0 && c <= 0xbf) skip = c - 0xa0;
    else {
      // Sizes that follow the type byte: [bytes of the size field, extra fixed bytes].
      let size = 0;
      switch (c) {
        case 0xc4:
        case 0xd9:
          size = 1;
          break;
        case 0xc5:
        case 0xda:
          size = 2;
          break;
        case 0xc6:
        case 0xdb:
          size = 4;
          break;
        case 0xc7:
          size = 1;
          skip = 1;
          break;
        case 0xc8:
          size = 2;
          skip = 1;
          break;
        case 0xc9:
          size = 4;
          skip = 1;
          break;
        case 0xca:
        case 0xce:
        case 0xd2:
          skip = 4;
          break;
        case 0xcb:
        case 0xcf:
        case 0xd3:
          skip = 8;
          break;
        case 0xcc:
        case 0xd0:
          skip = 1;
          break;
        case 0xcd:
        case 0xd1:
          skip = 2;
          break;
        case 0xd4:
          skip = 2;
          break;
        case 0xd5:
          skip = 3;
          break;
        case 0xd6:
          skip = 5;
          break;
        case 0xd7:
          skip = 9;
          break;
        case 0xd8:
          skip = 17;
          break;
        case 0xdc:
          size = 2;
          break;
        case 0xdd:
          size = 4;
          break;
        case 0xde:
          size = 2;
          break;
        case 0xdf:
          size = 4;
          break;
        default:
          return -1; // 0xc1 is never used
      }
      if (i + size > n) return -1;
      const length = size === 1 ? b[i]! : size === 2 ? b.readUInt16BE(i) : size === 4 ? b.readUInt32BE(i) : 0;
      i += size;
      if (c === 0xdc || c === 0xdd) pending += length;
      else if (c === 0xde || c === 0xdf) pending += 2 * length;
      else skip += length;
    }
    i += skip;
    if (i > n || pending > n - i) return -1;
  }
  return i;
}
