import { createPrivateKey, type KeyObject } from 'node:crypto';
import { endorseKey, newKeyPair, signBundle, type PublishedKey } from '../signing/bundle.js';
import { silentLogger, type Logger } from '../log.js';
import type { BundleKeyRecord } from './bundle-keys-store.js';
import type { ControlPlaneStore } from './store.js';

/** How often a process looks for a key another process added (`brainstem keys rotate` beside a running server on SQLite). */
export const BUNDLE_KEY_REFRESH_MS = 60_000;
/** Attempts to add a key when other processes keep taking its position first. */
const ADD_ATTEMPTS = 5;

/** The signature a head carries: which key and the base64 ed25519 signature. */
export interface BundleSignature {
  keyId: string;
  signature: string;
}

function published(records: readonly BundleKeyRecord[]): PublishedKey[] {
  return records.map((r, i) => ({
    id: r.id,
    algorithm: 'ed25519' as const,
    publicKey: r.publicKey,
    createdAt: r.createdAt,
    active: i === records.length - 1,
    previous: r.previous,
    endorsement: r.endorsement,
  }));
}

/**
 * Adds the next key of the installation's chain, endorsed by the current one (the first key
 * when there is none). Safe against a race with another process: a lost position is re-read
 * and the key made again on top of the winner. Returns the key now active.
 */
export async function addNextBundleKey(store: ControlPlaneStore): Promise<PublishedKey> {
  for (let attempt = 0; attempt < ADD_ATTEMPTS; attempt++) {
    const keys = await store.bundleKeys();
    const last = keys.at(-1);
    const pair = newKeyPair();
    const added = await store.addBundleKey({
      seq: (last?.seq ?? 0) + 1,
      id: pair.keyId,
      publicKey: pair.publicKey,
      privatePem: pair.privatePem,
      previous: last?.id ?? null,
      endorsement: last ? endorseKey(last.privatePem, pair.keyId, pair.publicKey) : null,
    });
    if (added) return published(await store.bundleKeys()).at(-1)!;
  }
  throw new Error('could not add a bundle key: other processes kept adding keys at the same time');
}

/**
 * The installation's bundle-signing key in memory: made on first start (the first key of the
 * chain), read again every BUNDLE_KEY_REFRESH_MS and when another replica says keys changed,
 * so a rotation reaches every process. Every head is signed with the newest key.
 */
export class BundleSigner {
  private active: { id: string; key: KeyObject } | null = null;
  private list: PublishedKey[] = [];
  private loading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly store: ControlPlaneStore,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** Resolves once a key is loaded (made when the installation has none). */
  ready(): Promise<void> {
    if (this.active) return Promise.resolve();
    return (this.loading ??= this.load(true).finally(() => (this.loading = null)));
  }

  /** Starts the periodic re-read (unref'd). */
  watch(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.refresh().catch((err: unknown) => this.logger.error('bundle keys could not be read again', { error: String(err) }));
    }, BUNDLE_KEY_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Told when the active key changed (heads are then signed again). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Reads the keys again; tells the listeners when the active key changed. */
  async refresh(): Promise<void> {
    const before = this.active?.id;
    await this.load(false);
    if (this.active && this.active.id !== before) {
      this.logger.info('bundle signing key changed', { keyId: this.active.id, previous: before ?? null });
      for (const l of this.listeners) l();
    }
  }

  get keyId(): string | null {
    return this.active?.id ?? null;
  }

  /** Signs a bundle's bytes for a server; null until ready() resolved. */
  sign(serverId: number, body: string): BundleSignature | null {
    if (!this.active) return null;
    return { keyId: this.active.id, signature: signBundle(this.active.key, String(serverId), body) };
  }

  /** What GET /v1/config/keys shows: every key, oldest first, public parts only. */
  keys(): PublishedKey[] {
    return this.list;
  }

  private async load(create: boolean): Promise<void> {
    let records = await this.store.bundleKeys();
    if (records.length === 0) {
      if (!create) return;
      // Only the first position: a replica starting at the same moment may take it, and then its key is the one.
      const pair = newKeyPair();
      const made = await this.store.addBundleKey({
        seq: 1,
        id: pair.keyId,
        publicKey: pair.publicKey,
        privatePem: pair.privatePem,
        previous: null,
        endorsement: null,
      });
      records = await this.store.bundleKeys();
      if (made) this.logger.info('made the installation bundle-signing key', { keyId: pair.keyId });
    }
    const last = records.at(-1)!;
    if (this.active?.id !== last.id) this.active = { id: last.id, key: createPrivateKey(last.privatePem) };
    this.list = published(records);
  }
}
