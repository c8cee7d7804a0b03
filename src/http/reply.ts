import type { Readable } from 'node:stream';
import { encodeBody, type Encoding } from './codec.js';

/** What a handler returns: a whole body, or a stream (with its length when known). */
export type Reply =
  | { status: number; headers?: Record<string, string>; body?: string | Uint8Array; prepared?: PreparedHead }
  | { status: number; headers?: Record<string, string>; stream: Readable; length?: number };

/**
 * The status line and headers of a reply answered many times unchanged (a config pull's 304),
 * joined once into the block uWS writes with a single call instead of one per header. Made by
 * `prepared`; the server's default headers are joined in on first write (see write.ts).
 */
export interface PreparedHead {
  /** The default headers the block was joined with; null before the first write. */
  defaults: Readonly<Record<string, string>> | null;
  /** The status line and header lines, as the bytes uWS writes (see headerKey). */
  block: ArrayBuffer;
}

/**
 * `reply` marked to be written from one prepared block (see PreparedHead). Only for a reply
 * that is never changed after: its status and headers are read once. A header name or value
 * with a line break is refused here, as uWS would write it as sent.
 */
export function prepared<R extends { status: number; headers?: Record<string, string>; body?: string | Uint8Array }>(reply: R): R & { prepared: PreparedHead } {
  for (const [name, value] of Object.entries(reply.headers ?? {})) {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new Error(`header ${JSON.stringify(name)} has a line break`);
  }
  // A text body goes out as bytes too: uWS would convert the string on every write.
  const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  return { ...reply, ...(body !== undefined ? { body } : {}), prepared: { defaults: null, block: new ArrayBuffer(0) } };
}

export function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) };
}

export function text(status: number, body: string, headers?: Record<string, string>): Reply {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers }, body };
}

export function empty(status: number, headers?: Record<string, string>): Reply {
  return headers ? { status, headers } : { status };
}

/** A reply in the encoding the request used (JSON or MessagePack). */
export function encoded(status: number, value: unknown, encoding: Encoding, headers?: Record<string, string>): Reply {
  const { body, contentType } = encodeBody(value, encoding);
  return { status, headers: { 'content-type': contentType, ...headers }, body };
}
