import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** Lowercase hex HMAC-SHA256 (a KeyObject for a key used again and again: a string or bytes are copied into a new key at every call). */
export function hmacHex(key: string | Uint8Array | KeyObject, message: string | Uint8Array): string {
  return createHmac('sha256', key).update(message).digest('hex');
}

/** Compares two hex digests in constant time; false for malformed input of any length. */
export function hexEqual(expected: string, actual: string): boolean {
  if (expected.length !== actual.length || !/^[0-9a-f]*$/i.test(actual)) return false;
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(actual.toLowerCase(), 'hex'));
}
