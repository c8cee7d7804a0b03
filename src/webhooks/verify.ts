import type { KeyObject } from 'node:crypto';
import { ed25519PublicKey, verifyAsymmetricSignature, verifyServiceSignature, verifyStandardSignature, WHPK_PREFIX } from '../signing/webhook.js';

export type HeaderBag = Record<string, string | string[] | undefined> | Headers;

export interface VerifyOptions {
  /** Seconds a webhook-timestamp may differ from now (default 300). */
  toleranceSec?: number;
  /**
   * Refuse deliveries without the Standard Webhooks headers, whose signature binds a fresh
   * timestamp (default true). False also accepts X-Service-Signature alone, which binds no
   * timestamp: a captured delivery could then be replayed at any time.
   */
  requireTimestamp?: boolean;
  now?: () => number;
}

export type VerifyResult =
  | {
      ok: true;
      scheme: 'standard-webhooks' | 'standard-webhooks-v1a' | 'x-service-signature';
      id: string | null;
      timestamp: number | null;
      event: string | null;
      payload: unknown;
    }
  | { ok: false; code: 'missing_signature' | 'bad_signature' | 'timestamp_out_of_range' | 'bad_timestamp' | 'bad_body'; message: string };

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  for (const key of Object.keys(bag)) {
    if (key.toLowerCase() === name) {
      const v = bag[key];
      return Array.isArray(v) ? v.join(', ') : v;
    }
  }
  return undefined;
}

/**
 * Verifies a brainstem webhook delivery for a Node receiver. Pass the raw body bytes exactly as
 * received (not re-serialised JSON) and the endpoint's secret.
 *
 * When the Standard Webhooks headers are present they decide: the timestamp must be within the
 * tolerance and one of the `v1,` signatures must match, which also covers a secret rotation
 * (for 24 h the header carries the old secret's signature too, while X-Service-Signature
 * carries only the new one's). Without them the delivery is refused, unless `requireTimestamp`
 * is false: then X-Service-Signature decides, though it binds no timestamp (replayable).
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: HeaderBag, secret: string, options: VerifyOptions = {}): VerifyResult {
  const now = options.now ?? Date.now;
  const tolerance = options.toleranceSec ?? 300;
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sig = header(headers, 'webhook-signature');
  const event = header(headers, 'x-service-event') ?? null;
  let result: VerifyResult;
  if (id && ts && sig) {
    if (!/^\d{1,12}$/.test(ts.trim())) return { ok: false, code: 'bad_timestamp', message: 'webhook-timestamp is not unix seconds' };
    const timestamp = Number(ts.trim());
    if (Math.abs(Math.floor(now() / 1000) - timestamp) > tolerance) {
      return { ok: false, code: 'timestamp_out_of_range', message: `webhook-timestamp is more than ${tolerance} s from now` };
    }
    if (!verifyStandardSignature(id, timestamp, rawBody, sig, secret)) {
      // An endpoint signing with v1a alone sends no v1, signature to check the secret against.
      const onlyV1a = sig.split(' ').every((p) => p.trim().startsWith('v1a,'));
      return {
        ok: false,
        code: 'bad_signature',
        message: onlyV1a
          ? 'webhook-signature carries only v1a (ed25519) signatures: verify them with verifyWebhookV1a and the public keys of GET /v1/webhooks/keys'
          : 'no webhook-signature matches the secret',
      };
    }
    result = { ok: true, scheme: 'standard-webhooks', id, timestamp, event, payload: null };
  } else {
    if (options.requireTimestamp ?? true) {
      return {
        ok: false,
        code: 'missing_signature',
        message:
          'the webhook-id, webhook-timestamp and webhook-signature headers are required (requireTimestamp: false accepts X-Service-Signature alone, without replay protection)',
      };
    }
    const xs = header(headers, 'x-service-signature');
    if (!xs) return { ok: false, code: 'missing_signature', message: 'no X-Service-Signature header' };
    if (!verifyServiceSignature(rawBody, xs, secret)) return { ok: false, code: 'bad_signature', message: 'X-Service-Signature does not match the secret' };
    const xts = header(headers, 'x-service-timestamp');
    result = {
      ok: true,
      scheme: 'x-service-signature',
      id: header(headers, 'x-service-delivery') ?? null,
      timestamp: xts && /^\d+$/.test(xts) ? Number(xts) : null,
      event,
      payload: null,
    };
  }
  try {
    result.payload = JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'));
  } catch {
    return { ok: false, code: 'bad_body', message: 'the body is not JSON' };
  }
  return result;
}

/** Public keys for v1a: `whpk_…` strings, or the JWKS document GET /v1/webhooks/keys serves. */
export type PublicKeys = string | readonly string[] | { keys: readonly { kty?: string; crv?: string; x: string }[] };

/** The verifying keys of a PublicKeys value; throws on a key that is not a 32-byte ed25519 key. */
export function publicKeysOf(keys: PublicKeys): KeyObject[] {
  const raws =
    typeof keys === 'string'
      ? [Buffer.from(keys.replace(WHPK_PREFIX, ''), 'base64')]
      : Array.isArray(keys)
        ? (keys as readonly string[]).map((k) => Buffer.from(k.replace(WHPK_PREFIX, ''), 'base64'))
        : (keys as { keys: readonly { crv?: string; x: string }[] }).keys
            .filter((k) => k.crv === undefined || k.crv === 'Ed25519')
            .map((k) => Buffer.from(k.x, 'base64url'));
  return raws.map((raw) => {
    if (raw.length !== 32) throw new Error('an ed25519 public key is 32 bytes');
    return ed25519PublicKey(raw);
  });
}

/**
 * Verifies a delivery to an endpoint whose signature_scheme is `v1a` or `both` with the
 * installation's public keys (no shared secret): the Standard Webhooks headers are required, the
 * timestamp must be within the tolerance and one `v1a,` signature must verify under one key.
 * During a key rotation a delivery carries a signature by each key in use, so either key verifies it.
 */
export function verifyWebhookV1a(
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  keys: PublicKeys,
  options: Omit<VerifyOptions, 'requireTimestamp'> = {},
): VerifyResult {
  const now = options.now ?? Date.now;
  const tolerance = options.toleranceSec ?? 300;
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sig = header(headers, 'webhook-signature');
  if (!id || !ts || !sig)
    return { ok: false, code: 'missing_signature', message: 'the webhook-id, webhook-timestamp and webhook-signature headers are required' };
  if (!/^\d{1,12}$/.test(ts.trim())) return { ok: false, code: 'bad_timestamp', message: 'webhook-timestamp is not unix seconds' };
  const timestamp = Number(ts.trim());
  if (Math.abs(Math.floor(now() / 1000) - timestamp) > tolerance) {
    return { ok: false, code: 'timestamp_out_of_range', message: `webhook-timestamp is more than ${tolerance} s from now` };
  }
  if (!verifyAsymmetricSignature(id, timestamp, rawBody, sig, publicKeysOf(keys))) {
    return { ok: false, code: 'bad_signature', message: 'no v1a webhook-signature verifies under the public keys' };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'));
  } catch {
    return { ok: false, code: 'bad_body', message: 'the body is not JSON' };
  }
  return { ok: true, scheme: 'standard-webhooks-v1a', id, timestamp, event: header(headers, 'x-service-event') ?? null, payload };
}
