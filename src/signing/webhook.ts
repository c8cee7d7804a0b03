import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
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

/** The value of `X-Service-Signature` for a body; `secret` as shown to the user, or a secret KeyObject of its UTF-8 bytes. */
export function serviceSignature(body: string | Uint8Array, secret: string | KeyObject): string {
  return `v1=${hmacHex(secret, body)}`;
}

/** One `v1,<base64>` Standard Webhooks signature; `key` from standardKey() (or a secret KeyObject of it). */
export function standardSignature(id: string, timestamp: number, body: string | Uint8Array, key: Uint8Array | KeyObject): string {
  // A string body goes in one update with its prefix (one UTF-8 encoding, not two).
  const hmac = createHmac('sha256', key);
  const mac = (typeof body === 'string' ? hmac.update(`${id}.${timestamp}.${body}`) : hmac.update(`${id}.${timestamp}.`).update(body)).digest('base64');
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

/**
 * Standard Webhooks asymmetric signatures (`v1a`): ed25519 over the same
 * `${id}.${timestamp}.${body}` bytes as `v1,`, the 64-byte signature in standard base64.
 * Public keys travel as `whpk_` + base64 of the 32 raw bytes (the Standard Webhooks form) or as
 * an OKP JWK; private keys are kept as the 32-byte seed.
 */
export const WHPK_PREFIX = 'whpk_';
/** DER header of a PKCS#8 ed25519 private key, followed by the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** DER header of an SPKI ed25519 public key, followed by the 32 raw bytes. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A fresh ed25519 key pair: the private seed and the public key, 32 bytes each. */
export function generateEd25519(): { seed: Buffer; publicKey: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(ED25519_PKCS8_PREFIX.length);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(ED25519_SPKI_PREFIX.length);
  return { seed: Buffer.from(seed), publicKey: Buffer.from(raw) };
}

/** The signing key object for a 32-byte seed (build once per key: parsing costs more than signing). */
export function ed25519PrivateKey(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The verifying key object for 32 raw public-key bytes. */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** One `v1a,<base64>` signature. */
export function asymmetricSignature(id: string, timestamp: number, body: string | Uint8Array, key: KeyObject): string {
  const message = typeof body === 'string' ? Buffer.from(`${id}.${timestamp}.${body}`) : Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  return `v1a,${sign(null, message, key).toString('base64')}`;
}

/** True when one of the space-separated `v1a,` signatures verifies under one of the public keys. */
export function verifyAsymmetricSignature(id: string, timestamp: number, body: string | Uint8Array, header: string, keys: readonly KeyObject[]): boolean {
  const message = typeof body === 'string' ? Buffer.from(`${id}.${timestamp}.${body}`) : Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  for (const part of header.split(' ')) {
    const [version, b64] = part.trim().split(',', 2);
    if (version !== 'v1a' || !b64) continue;
    const signature = Buffer.from(b64, 'base64');
    if (signature.length !== 64) continue;
    for (const key of keys) if (verify(null, message, key, signature)) return true;
  }
  return false;
}
