import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hexEqual, hmacHex } from './hmac.js';

/**
 * Webhook signatures, two schemes on every delivery:
 *
 * - `X-Service-Signature: v1=<hex>` (spec 002 §5): lowercase hex HMAC-SHA256 of the raw body,
 *   keyed with the endpoint secret exactly as shown to the user (its UTF-8 bytes, a `whsec_`
 *   prefix included).
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`):
 *   base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with the decoded part of a
 *   `whsec_` + base64 secret (standard alphabet, padding optional, as both Standard Webhooks
 *   libraries accept), or with the raw UTF-8 bytes of any other secret (`whsec_` alone,
 *   base64url, any text): a secret is never refused for its form.
 */

export const WHSEC_PREFIX = 'whsec_';
/** Standard-alphabet base64, padded or not; a lone trailing character encodes nothing and is refused. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** A fresh secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(bytes: (n: number) => Buffer = randomBytes): string {
  return WHSEC_PREFIX + bytes(32).toString('base64');
}

/** True when the secret is `whsec_` followed by non-empty base64 (padded or not), which is decoded for the key. */
export function isWhsecSecret(secret: string): boolean {
  return secret.length > WHSEC_PREFIX.length && secret.startsWith(WHSEC_PREFIX) && BASE64.test(secret.slice(WHSEC_PREFIX.length));
}

/** The Standard Webhooks HMAC key for a secret (see the module comment for the rule). */
export function standardKey(secret: string): Buffer {
  return isWhsecSecret(secret) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** The value of `X-Service-Signature` for a body. */
export function serviceSignature(body: string | Uint8Array, secret: string): string {
  return `v1=${hmacHex(secret, body)}`;
}

/** One `v1,<base64>` Standard Webhooks signature; `key` from standardKey(). */
export function standardSignature(id: string, timestamp: number, body: string | Uint8Array, key: Uint8Array): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** Constant-time check of an `X-Service-Signature` header value. */
export function verifyServiceSignature(body: string | Uint8Array, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const m = /^\s*v1=([0-9a-fA-F]{64})\s*$/.exec(header);
  if (!m) return false;
  return hexEqual(hmacHex(secret, body), m[1]!);
}

/** Constant-time check that one of the space-separated `v1,` signatures matches. */
export function verifyStandardSignature(id: string, timestamp: number, body: string | Uint8Array, header: string, secret: string): boolean {
  const expected = Buffer.from(standardSignature(id, timestamp, body, standardKey(secret)));
  let ok = false;
  for (const part of header.split(' ')) {
    const candidate = Buffer.from(part.trim());
    // Every candidate is compared, so timing does not reveal which position matched.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) ok = true;
  }
  return ok;
}
