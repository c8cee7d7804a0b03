import { isUtf8 } from 'node:buffer';
import { Decoder } from '@msgpack/msgpack';
import { parseTickRequest, type TickRequest } from '../../../brain/index.js';
import { encodingOf, type Encoding } from '../../http/codec.js';
import { HttpError } from '../../http/errors.js';
import { asBuffer } from './tick-reader.js';

/**
 * The exact path of the tick routes: a body decoded whole by the generic decoder (JSON.parse
 * or @msgpack/msgpack), then validated by parseTickRequest, which names the first bad field.
 * It is the reference the fast readers (tick-json.ts, tick-msgpack.ts) are held to.
 */

/**
 * The decoder's strings made strict to the MessagePack spec: a str must be valid UTF-8 (the
 * stock decoder repairs or reinterprets invalid bytes, so `C1 A8` + `as_weapon` came out as
 * `has_weapon`), and its text is kept whole (above 200 bytes the stock decoder used
 * TextDecoder, which drops a leading U+FEFF). The method is an internal of @msgpack/msgpack
 * 3.x (pinned in package.json), replaced on this one instance; the fuzz test
 * (tick-readers-fuzz.test.ts) holds it to both rules.
 */
function strictDecoder(): Decoder {
  const decoder = new Decoder();
  const inner = decoder as unknown as { bytes: Uint8Array; pos: number; decodeUtf8String(byteLength: number, headerOffset: number): string };
  if (typeof inner.decodeUtf8String !== 'function') throw new Error('@msgpack/msgpack changed: Decoder.decodeUtf8String is gone');
  inner.decodeUtf8String = function (this: typeof inner, byteLength: number, headerOffset: number): string {
    const start = this.pos + headerOffset;
    const end = start + byteLength;
    if (end > this.bytes.byteLength) throw new RangeError('Insufficient data');
    const bytes = asBuffer(this.bytes.subarray(start, end));
    if (!isUtf8(bytes)) throw new RangeError('A string is not valid UTF-8.');
    this.pos = end;
    return bytes.toString('utf8');
  };
  return decoder;
}

// One decoder for the process: building one per call costs more than the work. It is used
// synchronously, so sharing it is safe.
export const msgpackDecoder = strictDecoder();

/** The body's encoding from its Content-Type: 415 when it is neither, 400 when the body is empty. */
export function tickEncoding(bodyLength: number, contentType: string | undefined): Encoding {
  const encoding = encodingOf(contentType);
  if (encoding === null) throw new HttpError('unsupported_media_type', 'Content-Type must be application/json or application/msgpack.');
  if (bodyLength === 0) throw new HttpError('bad_request', `The request body is empty; a ${encoding === 'json' ? 'JSON' : 'MessagePack'} body was expected.`);
  return encoding;
}

/**
 * A JSON body without its UTF-8 byte-order mark (some .NET and PowerShell clients send one);
 * the same bytes when there is none. JSON text has no other use for one at its start.
 */
export function withoutBom(body: Uint8Array): Uint8Array {
  return body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
}

/**
 * Decodes a tick body for the exact path. Unlike the generic codec it does not pre-scan the
 * text for depth or poisoned keys: V8's JSON.parse and the msgpack decoder are iterative (no
 * stack overflow at any depth within the body limit), the msgpack decoder refuses
 * `__proto__`, and parseTickRequest copies only known fields into a fresh object, so a
 * `__proto__` or `constructor` key in the input is simply never read. Bytes that are not
 * UTF-8 where text is expected (a JSON body, a MessagePack str) are a 400 in both encodings.
 * A JSON body's byte-order mark is the caller's to remove (withoutBom), once.
 */
export function decodeTickAs(body: Uint8Array, encoding: Encoding): unknown {
  try {
    if (encoding === 'msgpack') return msgpackDecoder.decode(body);
    const text = asBuffer(body);
    if (!isUtf8(text)) throw new Error('not UTF-8');
    return JSON.parse(text.toString('utf8'));
  } catch {
    throw new HttpError('bad_request', `The request body is not valid ${encoding === 'json' ? 'JSON (UTF-8)' : 'MessagePack'}.`);
  }
}

/** decodeTickAs with the encoding taken from a Content-Type. */
export function decodeTick(body: Uint8Array, contentType: string | undefined): { value: unknown; encoding: Encoding } {
  const encoding = tickEncoding(body.length, contentType);
  return { value: decodeTickAs(body, encoding), encoding };
}

/** A decoded value validated as a tick request: the request, or the 400 naming the first bad field. */
export function validTick(value: unknown): TickRequest | HttpError {
  const parsed = parseTickRequest(value);
  if (parsed.ok) return parsed.request;
  const first = parsed.problems[0]!;
  return new HttpError('bad_request', `Invalid tick: ${first.path || '(body)'} ${first.message}.`, { details: parsed.problems });
}

/** The exact path for one tick body: decoded whole, then validated. */
export function exactTick(body: Uint8Array, encoding: Encoding): TickRequest {
  const result = validTick(decodeTickAs(body, encoding));
  if (result instanceof HttpError) throw result;
  return result;
}
