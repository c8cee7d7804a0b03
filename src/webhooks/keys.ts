import type { KeyObject } from 'node:crypto';
import { asymmetricSignature, ed25519PrivateKey, generateEd25519, WHPK_PREFIX } from '../signing/webhook.js';
import type { WebhookStore } from './store.js';
import type { SigningKeyRecord } from './types.js';

/** How long the key replaced by a rotation keeps signing (beside the new one) and being served in the JWKS. */
export const SIGNING_KEY_OVERLAP_MS = 24 * 3_600_000;
/**
 * How long a process signs with the keys it last read. A rotation made by another replica is
 * picked up within this; the old key signs on for SIGNING_KEY_OVERLAP_MS, so nothing fails meanwhile.
 */
export const SIGNING_KEY_REFRESH_MS = 10_000;

interface LiveKey {
  record: SigningKeyRecord;
  key: KeyObject;
}

/** One entry of the JWKS (RFC 7517/8037), plus the key in the Standard Webhooks `whpk_` form. */
export interface Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
  /** Standard Webhooks' own form of the same public key. */
  whpk: string;
  /** When a rotation replaced it: it is still served and still signs until then. */
  expires_at?: string;
}

/**
 * The installation's `v1a` keys: created on first use, rotated by an operator, read from the
 * store (so replicas share them) and cached for SIGNING_KEY_REFRESH_MS.
 */
export class SigningKeys {
  private live: LiveKey[] = [];
  private readAt = -Infinity;
  private reading: Promise<LiveKey[]> | null = null;

  constructor(
    private readonly store: WebhookStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** The keys that sign now (the active one first), read again when the cache is stale. */
  async current(): Promise<readonly LiveKey[]> {
    const at = this.now();
    const fresh = at - this.readAt < SIGNING_KEY_REFRESH_MS && at >= this.readAt;
    if (fresh && this.live.every((k) => k.record.retiresAt === null || k.record.retiresAt > at)) return this.live;
    this.reading ??= this.load().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  /** `v1a,` signatures of a delivery, one per key in use. */
  async sign(id: string, timestamp: number, body: string): Promise<string[]> {
    return (await this.current()).map((k) => asymmetricSignature(id, timestamp, body, k.key));
  }

  /** Replaces the active key; the old one signs beside it and stays in the JWKS for SIGNING_KEY_OVERLAP_MS. */
  async rotate(): Promise<SigningKeyRecord[]> {
    const pair = generateEd25519();
    const records = await this.store.rotateSigningKey(
      { seed: pair.seed.toString('base64'), publicKey: pair.publicKey.toString('base64') },
      this.now() + SIGNING_KEY_OVERLAP_MS,
    );
    this.adopt(records);
    return records;
  }

  /** The public keys in use as a JWKS document. */
  async jwks(): Promise<{ keys: Jwk[] }> {
    return { keys: (await this.current()).map((k) => jwkOf(k.record)) };
  }

  private async load(): Promise<LiveKey[]> {
    let records = await this.store.signingKeys();
    if (!records.some((r) => r.retiresAt === null)) {
      const pair = generateEd25519();
      records = await this.store.ensureSigningKey({ seed: pair.seed.toString('base64'), publicKey: pair.publicKey.toString('base64') });
    }
    return this.adopt(records);
  }

  private adopt(records: SigningKeyRecord[]): LiveKey[] {
    const known = new Map(this.live.map((k) => [k.record.id, k.key]));
    this.live = records.map((record) => ({ record, key: known.get(record.id) ?? ed25519PrivateKey(Buffer.from(record.seed, 'base64')) }));
    this.readAt = this.now();
    return this.live;
  }
}

export function jwkOf(r: SigningKeyRecord): Jwk {
  const raw = Buffer.from(r.publicKey, 'base64');
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: raw.toString('base64url'),
    kid: r.id,
    use: 'sig',
    alg: 'EdDSA',
    whpk: WHPK_PREFIX + raw.toString('base64'),
    ...(r.retiresAt !== null ? { expires_at: new Date(r.retiresAt).toISOString() } : {}),
  };
}
