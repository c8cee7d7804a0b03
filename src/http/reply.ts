import type { Readable } from 'node:stream';
import { encodeBody, type Encoding } from './codec.js';

/** What a handler returns: a whole body, or a stream (with its length when known). */
export type Reply =
  | { status: number; headers?: Record<string, string>; body?: string | Uint8Array }
  | { status: number; headers?: Record<string, string>; stream: Readable; length?: number };

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
