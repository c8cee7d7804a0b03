import { isUtf8 } from 'node:buffer';
import { decode as msgpackDecode, encode as msgpackEncode } from '@msgpack/msgpack';
import { withoutBom } from './bom.js';
import { HttpError } from './errors.js';

export type Encoding = 'json' | 'msgpack';

export const JSON_TYPE = 'application/json';
export const MSGPACK_TYPE = 'application/msgpack';

/**
 * Maps a Content-Type header to an encoding. JSON is read as UTF-8 only: a `charset` parameter
 * naming anything else than a label of UTF-8 (`utf-16`, `latin1`; compared case-insensitively, quoted or not) makes
 * it no encoding we read (a 415), rather than text decoded as the wrong charset.
 */
export function encodingOf(contentType: string | undefined): Encoding | null {
  if (!contentType) return null;
  // The exact types, as nearly every client sends them, without taking the header apart.
  if (contentType === JSON_TYPE) return 'json';
  if (contentType === MSGPACK_TYPE) return 'msgpack';
  const semi = contentType.indexOf(';');
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type === JSON_TYPE || (type.startsWith('application/') && type.endsWith('+json'))) {
    return semi < 0 || utf8Charset(contentType.slice(semi + 1)) ? 'json' : null;
  }
  if (type === MSGPACK_TYPE || type === 'application/x-msgpack' || type === 'application/vnd.msgpack') return 'msgpack';
  return null;
}

/**
 * The labels of UTF-8 in the WHATWG Encoding Standard (what browsers accept as UTF-8): clients
 * and script runtimes send `utf8` as often as `utf-8`, and refusing it would turn away a body
 * that is UTF-8 all the same (it is still checked byte for byte).
 */
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);

/** True when the parameters name no charset, or name UTF-8 by one of its labels (`charset=UTF-8`, `charset="utf8"`). */
function utf8Charset(params: string): boolean {
  for (const param of params.split(';')) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    let value = param.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!UTF8_LABELS.has(value.toLowerCase())) return false;
  }
  return true;
}

/** A key that must never become an own property of parsed input (prototype pollution), found in a body. */
class PoisonKey extends Error {}

/**
 * Refuses the keys that could reach an object's prototype once the value is merged or looked
 * up. They are refused, not dropped: dropped, a game flag named `prototype` vanished from a
 * published bundle that was answered 200 as if it held it.
 */
function rejectPoisonKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new PoisonKey(key);
  return value;
}

/** Deepest nesting a request body may have; deeper input is refused before it is walked. */
export const MAX_DEPTH = 32;

/**
 * True when the text has at most MAX_DEPTH opening brackets in all, so none can be nested
 * deeper: found by indexOf (native scanning) rather than depthOk's walk over every character,
 * which cost a small body about as much as its JSON.parse.
 */
function fewOpenings(text: string): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) if (++n > MAX_DEPTH) return false;
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) if (++n > MAX_DEPTH) return false;
  return true;
}

function depthOk(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_DEPTH) return false;
    } else if (c === 125 || c === 93) depth--;
  }
  return true;
}

/**
 * Parses a JSON body. Bytes that are not UTF-8 (`\xff`, a cut sequence, an encoded surrogate)
 * make a malformed body: decoding would turn them into U+FFFD, and what is stored would differ
 * from what was sent.
 */
export function parseJson(body: Buffer | string): unknown {
  if (typeof body !== 'string' && !isUtf8(body)) throw new HttpError('bad_request', 'The request body is not valid UTF-8.');
  const text = withoutBom(typeof body === 'string' ? body : body.toString('utf8'));
  if (text.length === 0) throw new HttpError('bad_request', 'The request body is empty; a JSON value was expected.');
  if (!fewOpenings(text) && !depthOk(text)) throw new HttpError('bad_request', `The request body is nested deeper than ${MAX_DEPTH} levels.`);
  try {
    // The reviver costs a call per key; only pay it when a poisoned key can be present.
    return text.includes('__proto__') || text.includes('constructor') || text.includes('prototype') ? JSON.parse(text, rejectPoisonKeys) : JSON.parse(text);
  } catch (err) {
    if (err instanceof PoisonKey)
      throw new HttpError(
        'bad_request',
        `The request body has a key named ${JSON.stringify(err.message)}; __proto__, constructor and prototype are not accepted as keys.`,
      );
    throw new HttpError('bad_request', 'The request body is not valid JSON.');
  }
}

/**
 * The first key an object of well-formed JSON `text` gives twice, or null. JSON.parse keeps the
 * last of two (`{"plan": "trial", "plan": "pro"}` is pro), and another reader of the same bytes
 * (a proxy, a log, the client's own check) may take the first: a body that says two things is
 * refused, as a query parameter given twice is. Keys are compared decoded (`"a"` and `"\u0061"`
 * are one key). The text must already have parsed.
 */
export function repeatedKey(text: string): string | null {
  const objects: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      let escaped = false;
      for (i++; text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) !== 0x5c) continue;
        escaped = true;
        i++;
      }
      const keys = objects[objects.length - 1];
      if (expectKey && keys) {
        const key = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i);
        if (keys.has(key)) return key;
        keys.add(key);
        expectKey = false;
      }
    } else if (c === 0x7b) {
      objects.push(new Set());
      expectKey = true;
    } else if (c === 0x5b) objects.push(null);
    else if (c === 0x7d || c === 0x5d) objects.pop();
    else if (c === 0x2c) expectKey = objects.length > 0 && objects[objects.length - 1] !== null;
  }
  return null;
}

function msgpackDepthOk(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!msgpackDepthOk(item, depth + 1)) return false;
    return true;
  }
  for (const key in value as Record<string, unknown>) {
    if (!msgpackDepthOk((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

export function parseMsgpack(body: Buffer): unknown {
  if (body.length === 0) throw new HttpError('bad_request', 'The request body is empty; a MessagePack value was expected.');
  let value: unknown;
  try {
    value = msgpackDecode(body);
  } catch {
    throw new HttpError('bad_request', 'The request body is not valid MessagePack.');
  }
  if (!msgpackDepthOk(value, 0)) throw new HttpError('bad_request', `The request body is nested deeper than ${MAX_DEPTH} levels.`);
  return value;
}

/**
 * The 415 of a body sent compressed (`Content-Encoding: gzip`, `br`, …), or null for one sent
 * as is (no Content-Encoding, or `identity`). No route reads a compressed body: read as it
 * came, gzip bytes would be a 400 "not valid JSON", which tells the client nothing of the
 * cause. The answer names the coding the server does read (RFC 7694's Accept-Encoding).
 */
export function contentCodingRefusal(contentEncoding: string | undefined): HttpError | null {
  if (!contentEncoding) return null;
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === '' || coding === 'identity') return null;
  return new HttpError(
    'unsupported_media_type',
    `Content-Encoding ${JSON.stringify(contentEncoding.length > 64 ? `${contentEncoding.slice(0, 64)}…` : contentEncoding)} is not accepted: send the body uncompressed.`,
    { headers: { 'accept-encoding': 'identity' } },
  );
}

/** Decodes a body by its Content-Type; anything but JSON or MessagePack is a 415. */
export function decodeBody(body: Buffer | string, contentType: string | undefined, allowMsgpack = true): { value: unknown; encoding: Encoding } {
  const encoding = encodingOf(contentType);
  if (encoding === 'json') return { value: parseJson(body), encoding };
  // A string body is a body shortcut's ASCII body: its latin1 bytes are the bytes sent.
  if (encoding === 'msgpack' && allowMsgpack) return { value: parseMsgpack(typeof body === 'string' ? Buffer.from(body, 'latin1') : body), encoding };
  throw new HttpError(
    'unsupported_media_type',
    allowMsgpack
      ? 'Content-Type must be application/json (charset utf-8, if named) or application/msgpack.'
      : 'Content-Type must be application/json (charset utf-8, if named).',
  );
}

export function encodeBody(value: unknown, encoding: Encoding): { body: string | Uint8Array; contentType: string } {
  if (encoding === 'msgpack') return { body: msgpackEncode(value), contentType: MSGPACK_TYPE };
  return { body: JSON.stringify(value), contentType: JSON_TYPE };
}
