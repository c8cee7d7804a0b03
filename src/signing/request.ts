/**
 * Signed sidecar requests (spec 001 §5), in one dependency-free module an operator can copy
 * into another client: only node:crypto is used.
 *
 *   canonical = METHOD + "\n" + TARGET + "\n" + TIMESTAMP + "\n" + hex(SHA-256(body))
 *   X-Service-Signature = hex(HMAC-SHA256(serverKey, canonical))
 *
 * TARGET is the request target exactly as sent, query string included (`/v1/config?server=7`);
 * TIMESTAMP is unix seconds, sent as X-Service-Timestamp; a GET's body is empty.
 */
import * as crypto from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';

export const TIMESTAMP_HEADER = 'x-service-timestamp';
export const SIGNATURE_HEADER = 'x-service-signature';
/** Plus or minus this many seconds between the signer's clock and the verifier's (spec 001 §8). */
export const SIGNATURE_WINDOW_S = 300;

export interface SignedParts {
  method: string;
  /** Path plus `?query` as sent. */
  target: string;
  /** Unix seconds. */
  timestamp: number;
  body?: string | Uint8Array;
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

export function canonicalString(parts: SignedParts): string {
  const body = parts.body;
  const bodyHash = body === undefined || body.length === 0 ? EMPTY_SHA256 : createHash('sha256').update(body).digest('hex');
  return `${parts.method.toUpperCase()}\n${parts.target}\n${parts.timestamp}\n${bodyHash}`;
}

/** The hex signature of a request. */
export function signature(key: string, parts: SignedParts): string {
  return createHmac('sha256', key).update(canonicalString(parts)).digest('hex');
}

type OneShotHash = (algorithm: string, data: Buffer | string, encoding: 'buffer' | 'hex') => Buffer | string;
const oneShot = (crypto as unknown as { hash?: OneShotHash }).hash;

/**
 * A signer bound to one key, for a verifier that checks many requests of the same key: the
 * HMAC pads are computed once and each signature is two one-shot SHA-256 calls (RFC 2104),
 * about a third cheaper than createHmac per request. Same output as `signature`.
 */
export function keySigner(key: string): (parts: SignedParts) => string {
  if (!oneShot) return (parts) => signature(key, parts);
  const hash = oneShot;
  let k = Buffer.from(key);
  if (k.length > 64) k = createHash('sha256').update(k).digest();
  const ipad = Buffer.alloc(64, 0x36);
  // The outer message is opad followed by the 32-byte inner digest, assembled in place.
  const outer = Buffer.alloc(96, 0x5c);
  for (let i = 0; i < k.length; i++) {
    ipad[i]! ^= k[i]!;
    outer[i]! ^= k[i]!;
  }
  // An ASCII key makes an ASCII inner pad, which can lead the message as a string with no
  // byte copying (one-shot hashing encodes strings as UTF-8, which is identity on ASCII).
  const asciiPad = ipad.every((b) => b < 0x80) ? ipad.toString('latin1') : null;
  return (parts) => {
    const canonical = canonicalString(parts);
    const inner = (asciiPad !== null ? hash('sha256', asciiPad + canonical, 'buffer') : hash('sha256', Buffer.concat([ipad, Buffer.from(canonical)]), 'buffer')) as Buffer;
    inner.copy(outer, 64);
    return hash('sha256', outer, 'hex') as string;
  };
}

/** Compares a received hex signature with the expected one in time independent of where they differ. */
function sameHex(expected: string, given: string): boolean {
  if (given.length !== expected.length) return false;
  let diff = 0;
  // OR 0x20 folds A-F onto a-f (digits already have that bit), so upper-case hex is accepted.
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ (given.charCodeAt(i) | 0x20);
  return diff === 0;
}

/**
 * The headers a client adds to one request: the bearer key, the timestamp and the signature.
 * `now` is milliseconds (Date.now by default).
 */
export function signRequest(
  key: string,
  request: { method: string; target: string; body?: string | Uint8Array },
  now: number = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    authorization: `Bearer ${key}`,
    'x-service-timestamp': String(timestamp),
    'x-service-signature': signature(key, { ...request, timestamp }),
  };
}

export type VerifyResult =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature' };

/**
 * Checks a request's timestamp and signature with the key it claims. `now` is milliseconds.
 * Replay detection (the same signature twice) is the caller's, since it needs shared state.
 */
export function verifyRequest(
  key: string | ((parts: SignedParts) => string),
  request: { method: string; target: string; body?: string | Uint8Array; timestamp: string | undefined; signature: string | undefined },
  now: number,
  windowS: number = SIGNATURE_WINDOW_S,
): VerifyResult {
  if (!request.timestamp || !request.signature) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(request.timestamp)) return { ok: false, reason: 'bad_timestamp' };
  const timestamp = Number(request.timestamp);
  if (Math.abs(Math.floor(now / 1000) - timestamp) > windowS) return { ok: false, reason: 'stale_timestamp' };
  const parts = { method: request.method, target: request.target, timestamp, body: request.body };
  const expected = typeof key === 'string' ? signature(key, parts) : key(parts);
  if (!sameHex(expected, request.signature)) return { ok: false, reason: 'bad_signature' };
  return { ok: true, timestamp };
}
