import type { KeyObject } from 'node:crypto';
import { canonicalPublicKey, endorsedPath, keyIdOf, parsePublicKey, verifyBundle, type PublishedKey } from '../../signing/bundle.js';
import { silentLogger, type Logger } from '../../log.js';
import { readIfExists, writeFileAtomic } from '../state/state-dir.js';

/** Most keys a key list may hold (a longer one from a control plane is refused, not walked). */
export const MAX_PUBLISHED_KEYS = 64;

/** How the pinned key came to be trusted. */
export type PinSource = 'flag' | 'first-use' | 'rotation';

interface Pin {
  id: string;
  publicKey: string;
  pinnedAt: string;
  how: PinSource;
}

/** The trust file: the pinned key and the highest bundle version ever applied. */
interface TrustDoc {
  key: Pin | null;
  highestVersion: number;
}

export type TrustVerdict = { ok: true } | { ok: false; reason: string };

export interface BundleTrustOptions {
  /** Where the pin and the highest applied version are kept; null keeps them in memory only. */
  file: string | null;
  /** `--bundle-key`: the key to trust, pinned over whatever the file holds. */
  givenKey?: string | undefined;
  /** Reads the control plane's published keys (first use, rotation); absent, neither is possible. */
  fetchKeys?: () => Promise<PublishedKey[]>;
  logger?: Logger;
  now?: () => number;
}

/**
 * The sidecar's trust in signed bundles, after TUF's rules: one pinned ed25519 key (from
 * `--bundle-key`, else the control plane's on first use), followed across rotations only
 * along endorsements (each new key signed by the one before), and the highest version ever
 * applied, below which nothing is applied again (rollback). Verdicts say why a bundle was
 * refused, in words a log line can carry.
 */
export class BundleTrust {
  private doc: TrustDoc = { key: null, highestVersion: 0 };
  private key: KeyObject | null = null;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(private readonly options: BundleTrustOptions) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  /** Reads the trust file, then pins the given key over it. Throws on a malformed given key. */
  async load(): Promise<void> {
    if (this.options.file) {
      try {
        const text = await readIfExists(this.options.file);
        if (text !== null) {
          const doc = JSON.parse(text) as Partial<TrustDoc>;
          const version = Number.isSafeInteger(doc.highestVersion) && doc.highestVersion! >= 0 ? doc.highestVersion! : 0;
          this.doc = { key: null, highestVersion: version };
          if (doc.key && typeof doc.key.publicKey === 'string') this.pinKey(doc.key.publicKey, doc.key.how ?? 'first-use', doc.key.pinnedAt);
        }
      } catch (err) {
        this.logger.warn('the bundle trust file is unreadable; starting without a pinned key', { file: this.options.file, error: String(err) });
        this.doc = { key: null, highestVersion: 0 };
        this.key = null;
      }
    }
    if (this.options.givenKey !== undefined) {
      const given = canonicalPublicKey(this.options.givenKey);
      if (this.doc.key?.publicKey !== given) {
        this.pinKey(given, 'flag');
        await this.save();
      }
    }
  }

  get pinnedKeyId(): string | null {
    return this.doc.key?.id ?? null;
  }

  get highestVersion(): number {
    return this.doc.highestVersion;
  }

  status(): { keyId: string | null; pinned: PinSource | null; highestVersion: number } {
    return { keyId: this.doc.key?.id ?? null, pinned: this.doc.key?.how ?? null, highestVersion: this.doc.highestVersion };
  }

  /**
   * Whether `body` may be applied: signed for `scope` by the pinned key, or by a key the pinned
   * one endorsed (then pinned), or, with nothing pinned and `firstUse`, by a published key
   * (then pinned). Never throws: a failure to read the keys is a refusal with its reason.
   */
  async verify(scope: string, body: string, keyId: string | null, signature: string | null, firstUse: boolean): Promise<TrustVerdict> {
    if (!keyId || !signature) return { ok: false, reason: 'the bundle is not signed (no X-Bundle-Key-Id and X-Bundle-Signature)' };
    const pin = this.doc.key;
    if (pin && this.key && pin.id === keyId) {
      return verifyBundle(this.key, scope, body, signature)
        ? { ok: true }
        : { ok: false, reason: `the signature does not match the bundle (key ${keyId}): altered, or a signature of another bundle` };
    }
    if (!this.options.fetchKeys) {
      return pin
        ? { ok: false, reason: `signed by key ${keyId}, not the pinned key ${pin.id}` }
        : { ok: false, reason: 'no bundle key is pinned to check the signature with (give --bundle-key)' };
    }
    let keys: PublishedKey[];
    try {
      keys = await this.options.fetchKeys();
    } catch (err) {
      return { ok: false, reason: `signed by key ${keyId}, and the published keys could not be read (${err instanceof Error ? err.message : String(err)})` };
    }
    if (keys.length > MAX_PUBLISHED_KEYS) return { ok: false, reason: `the control plane lists ${keys.length} keys, more than ${MAX_PUBLISHED_KEYS}` };
    if (pin && this.key) {
      const path = endorsedPath(pin.id, this.key, keys, keyId);
      if (!path)
        return {
          ok: false,
          reason: `signed by key ${keyId}, which the pinned key ${pin.id} has not endorsed (a wrong key, or a new installation: give its key with --bundle-key, or remove ${this.options.file ?? 'the pin'} to pin anew)`,
        };
      const next = path.at(-1)!;
      const nextKey = parsePublicKey(next.publicKey);
      if (!verifyBundle(nextKey, scope, body, signature)) return { ok: false, reason: `the signature does not match the bundle (key ${keyId})` };
      this.logger.info('bundle key rotated: following the endorsed key', { previous: pin.id, keyId: next.id, steps: path.length });
      this.pinKey(next.publicKey, 'rotation');
      await this.save();
      return { ok: true };
    }
    if (!firstUse) return { ok: false, reason: 'no bundle key is pinned to check the signature with' };
    const found = keys.find((k) => k.id === keyId);
    if (!found) return { ok: false, reason: `signed by key ${keyId}, which the control plane does not publish` };
    let key: KeyObject;
    try {
      key = parsePublicKey(found.publicKey);
      if (keyIdOf(found.publicKey) !== keyId) throw new Error('its id does not match it');
    } catch (err) {
      return { ok: false, reason: `the published key ${keyId} is malformed (${err instanceof Error ? err.message : String(err)})` };
    }
    if (!verifyBundle(key, scope, body, signature)) return { ok: false, reason: `the signature does not match the bundle (key ${keyId})` };
    this.logger.info('pinned the control plane bundle key on first use', { keyId, file: this.options.file });
    this.pinKey(found.publicKey, 'first-use');
    await this.save();
    return { ok: true };
  }

  /** A version below the highest applied is a rollback; the reason when it is. */
  rollback(version: number): string | null {
    return version < this.doc.highestVersion
      ? `version ${version} is lower than version ${this.doc.highestVersion}, already applied: refused as a rollback (a rollback is published as a new, higher version)`
      : null;
  }

  /** Records an applied version (kept when higher). */
  async applied(version: number): Promise<void> {
    if (version <= this.doc.highestVersion) return;
    this.doc.highestVersion = version;
    await this.save();
  }

  private pinKey(publicKey: string, how: PinSource, pinnedAt?: string): void {
    const canonical = canonicalPublicKey(publicKey);
    this.key = parsePublicKey(canonical);
    this.doc.key = { id: keyIdOf(canonical), publicKey: canonical, pinnedAt: pinnedAt ?? new Date(this.now()).toISOString(), how };
  }

  private async save(): Promise<void> {
    if (!this.options.file) return;
    try {
      await writeFileAtomic(this.options.file, JSON.stringify(this.doc));
    } catch (err) {
      this.logger.error('the bundle trust file could not be written', { file: this.options.file, error: String(err) });
    }
  }
}

/** Parses a key list answer (`{keys: [...]}`), bounded; throws a clear Error otherwise. */
export function parseKeyList(text: string): PublishedKey[] {
  const doc = JSON.parse(text) as { keys?: unknown };
  if (!Array.isArray(doc.keys)) throw new Error('the key list is not {keys: [...]}');
  if (doc.keys.length > MAX_PUBLISHED_KEYS) throw new Error(`the key list has ${doc.keys.length} keys, more than ${MAX_PUBLISHED_KEYS}`);
  return doc.keys.map((k: Record<string, unknown>) => {
    if (typeof k?.id !== 'string' || typeof k.publicKey !== 'string') throw new Error('a key has no id or publicKey');
    return {
      id: k.id,
      algorithm: 'ed25519',
      publicKey: k.publicKey,
      createdAt: String(k.createdAt ?? ''),
      active: k.active === true,
      previous: typeof k.previous === 'string' ? k.previous : null,
      endorsement: typeof k.endorsement === 'string' ? k.endorsement : null,
    };
  });
}
