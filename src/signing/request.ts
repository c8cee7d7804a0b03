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

/** Compares a received hex signature with the expected one in time independent of where they differ. */
function sameHex(expected: string, given: string): boolean {
  if (given.length !== expected.length) return false;
  let diff = 0;
  // OR 0x20 folds A-F onto a-f (digits already have that bit), so upper-case hex is accepted;
  // it would also fold the control characters 0x10-0x19 onto digits, which the second term
  // refuses (their bits 0x60 are both clear), so one signature has no other spellings.
  for (let i = 0; i < expected.length; i++) {
    const c = given.charCodeAt(i);
    diff |= (expected.charCodeAt(i) ^ (c | 0x20)) | (((c & 0x60) - 1) >>> 31);
  }
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

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature' };

/**
 * Checks a request's timestamp and signature with the key it claims. `now` is milliseconds.
 * A signature over the path alone (the target without its `?query`) is accepted as well, for
 * clients that read "PATH" literally; the query then is not covered, which on the signed routes
 * changes nothing (the key is bound to its one server, and the signature is still used once).
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
  const given = request.signature;
  const matches = (target: string) => {
    const parts = { method: request.method, target, timestamp, body: request.body };
    return sameHex(typeof key === 'string' ? signature(key, parts) : key(parts), given);
  };
  const query = request.target.indexOf('?');
  if (!matches(request.target) && !(query >= 0 && matches(request.target.slice(0, query)))) return { ok: false, reason: 'bad_signature' };
  return { ok: true, timestamp };
}
