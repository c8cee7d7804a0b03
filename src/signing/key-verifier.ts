import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';

/**
 * Checks a request signature (spec 001 §5) under one key: the signature's leading 52 bits
 * (a replay-detection slot) when `signature` is the hex HMAC-SHA256 of the canonical request
 * `METHOD\nTARGET\nTIMESTAMP\nhex(sha256(body))`, else -1. Upper-case hex is accepted. The
 * method is given upper-case, as the router names it (canonicalString upper-cases it). A body
 * given as a string must be ASCII (its bytes are its UTF-8 encoding, which is what is hashed).
 */
export type KeyVerifier = (method: string, target: string, timestamp: number, body: Uint8Array | string | undefined, signature: string) => number;

type OneShotHash = (algorithm: string, data: string | Uint8Array, encoding: 'latin1' | 'hex') => string;
const oneShot = (crypto as unknown as { hash?: OneShotHash }).hash;

/** A SHA-256 digest as a 32-character latin1 string (one char per byte, no Buffer allocated). */
const sha256 = oneShot
  ? (data: string | Uint8Array): string => oneShot('sha256', data, 'latin1')
  : (data: string | Uint8Array): string => createHash('sha256').update(data).digest('binary');

/** The body hash of every GET: hashing an empty body per request would be waste. */
const EMPTY_SHA256_HEX = createHash('sha256').digest('hex');

/** A body's SHA-256 in hex; one-shot where Node has it (no Hash object per request, as every telemetry report would make). */
const sha256Hex = oneShot
  ? (body: Uint8Array | string): string => oneShot('sha256', body, 'hex')
  : (body: Uint8Array | string): string => createHash('sha256').update(body).digest('hex');

/**
 * A verifier for one key that accepts exactly the signatures `verifyRequest(key, …)` accepts
 * (test/signing/key-verifier.test.ts), built for many requests per key. The key's HMAC pads
 * are computed once (RFC 2104), so a signature is two one-shot SHA-256 calls; both digests
 * come back as latin1 strings, because allocating a Buffer for a digest costs more than the
 * hashing; and the received hex is compared with the digest's bytes, with no hex encoding.
 *
 * A plain-JavaScript HMAC with the pads' midstates precomputed (three compressions, nothing
 * allocated) was faster in isolation but slower inside the server under load, where native
 * SHA-256 instructions beat JavaScript compressions that lose their caches between requests
 * (bench/RESULTS.md, control plane).
 */
export function keyVerifier(key: string): KeyVerifier {
  let k: Uint8Array = Buffer.from(key);
  if (k.length > 64) k = createHash('sha256').update(k).digest();
  const innerPad = Buffer.alloc(64, 0x36);
  // The outer message: the pad, then the 32-byte inner digest, written in place per request.
  const outer = Buffer.alloc(96, 0x5c);
  for (let i = 0; i < k.length; i++) {
    innerPad[i]! ^= k[i]!;
    outer[i]! ^= k[i]!;
  }
  // An ASCII inner pad can lead the message as a string: one-shot hashing encodes strings as
  // UTF-8, which is the identity on ASCII, so no bytes are copied. Other keys take the long way.
  const asciiPad = innerPad.every((b) => b < 0x80) ? innerPad.toString('latin1') : null;
  return (method, target, timestamp, body, signature) => {
    if (signature.length !== 64) return -1;
    const bodyHash = body === undefined || body.length === 0 ? EMPTY_SHA256_HEX : sha256Hex(body);
    const canonical = `${method}\n${target}\n${timestamp}\n${bodyHash}`;
    const inner = asciiPad !== null ? sha256(asciiPad + canonical) : sha256(Buffer.concat([innerPad, Buffer.from(canonical)]));
    for (let i = 0; i < 32; i++) outer[64 + i] = inner.charCodeAt(i);
    return matchHex(sha256(outer), signature);
  };
}

/**
 * Compares 64 hex digits with a 32-byte digest (a latin1 string) in time independent of where
 * they differ; the first 52 bits of the digest when they match, else -1. Only [0-9a-fA-F] match.
 */
function matchHex(digest: string, hex: string): number {
  let diff = 0;
  for (let i = 0; i < 64; i++) {
    const nibble = (digest.charCodeAt(i >> 1) >> (4 - 4 * (i & 1))) & 15;
    // The lower-case digit for the nibble, without a branch: 0-9 → '0'-'9', 10-15 → 'a'-'f'.
    const expected = 0x30 + nibble + (((9 - nibble) >> 31) & 0x27);
    const c = hex.charCodeAt(i);
    // OR 0x20 folds A-F onto a-f (digits already have that bit); it would also fold the control
    // characters 0x10-0x19 onto digits, which the second term refuses (bits 0x60 both clear).
    diff |= (expected ^ (c | 0x20)) | (((c & 0x60) - 1) >>> 31);
  }
  if (diff !== 0) return -1;
  const b = (i: number): number => digest.charCodeAt(i);
  return (((b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3)) >>> 0) * 2 ** 20 + ((b(4) << 12) | (b(5) << 4) | (b(6) >> 4));
}
