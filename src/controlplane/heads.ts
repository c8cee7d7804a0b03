import type { ControlPlaneStore } from './store.js';
import type { PublishedBundle, ServerId } from './types.js';
import type { TenantId } from '../identity/types.js';
import { prepared, type Reply } from '../http/reply.js';
import { matchesEtag } from '../http/etag.js';

export { matchesEtag };
import { BUNDLE_KEY_ID_HEADER, BUNDLE_SIGNATURE_HEADER } from '../signing/bundle.js';
import type { BundleSigner } from './bundle-signer.js';

/** What a config pull needs, prepared once per publish so that a pull touches no storage. */
export interface Head {
  serverId: ServerId;
  tenantId: TenantId;
  version: number;
  etag: string;
  /** The bundle as sent on a 200. */
  body: string;
  /** The installation key's id and signature over `body` for this server; null until a key was loaded. */
  keyId: string | null;
  signature: string | null;
  /** The replies themselves, built once per publish (a pull allocates none). */
  full: Reply;
  notModified: Reply;
}

export function etagOf(version: number): string {
  return `"v${version}"`;
}

/**
 * The current head of every server that has been pulled, in memory. Filled from the store on
 * the first pull and replaced on every publish or rollback, of this process or (told through
 * the control plane's broadcast) of another replica on the same database.
 */
export class HeadCache {
  private readonly heads = new Map<ServerId, Head>();
  private readonly listeners: ((head: Head) => void)[] = [];

  constructor(
    private readonly store: ControlPlaneStore,
    private readonly signer: BundleSigner | null = null,
  ) {}

  /** Told of every head set (a publish, a rollback, a reload); the live streams announce the new versions. */
  onHead(listener: (head: Head) => void): void {
    this.listeners.push(listener);
  }

  /** Builds every cached head again (the signing key changed: each is signed with the new one). */
  resignAll(): void {
    for (const head of [...this.heads.values()]) {
      const bundle = JSON.parse(head.body) as PublishedBundle['bundle'];
      this.heads.delete(head.serverId);
      this.build(head.serverId, head.tenantId, bundle, head.body);
    }
  }

  /** The cached head, without a storage read; undefined when not loaded yet. */
  peek(serverId: ServerId): Head | undefined {
    return this.heads.get(serverId);
  }

  async get(serverId: ServerId): Promise<Head | null> {
    const cached = this.heads.get(serverId);
    if (cached) return cached;
    await this.signer?.ready();
    const server = await this.store.getServer(serverId);
    if (!server) return null;
    const head = await this.store.head(serverId);
    if (!head) return null;
    return this.set(serverId, server.tenantId, head);
  }

  /** Drops a server's cached head when it is older than `version`. */
  forget(serverId: ServerId, version: number): void {
    const current = this.heads.get(serverId);
    if (current && current.version < version) this.heads.delete(serverId);
  }

  /** Reads a server's head again (another replica published); a server that is gone is dropped. */
  async reload(serverId: ServerId): Promise<void> {
    await this.signer?.ready();
    const [server, head] = await Promise.all([this.store.getServer(serverId), this.store.head(serverId)]);
    if (!server || !head) this.heads.delete(serverId);
    else this.set(serverId, server.tenantId, head);
  }

  /** Reads every cached head again (after missing what other replicas published). */
  async reloadAll(): Promise<void> {
    await Promise.all([...this.heads.keys()].map((id) => this.reload(id)));
  }

  set(serverId: ServerId, tenantId: TenantId, published: PublishedBundle): Head {
    const current = this.heads.get(serverId);
    // A slower load must not replace a newer publish that landed meanwhile.
    if (current && current.version > published.bundle.version) return current;
    return this.build(serverId, tenantId, published.bundle, JSON.stringify(published.bundle));
  }

  private build(serverId: ServerId, tenantId: TenantId, bundle: PublishedBundle['bundle'], body: string): Head {
    const etag = etagOf(bundle.version);
    const signed = this.signer?.sign(serverId, body) ?? null;
    const headers: Record<string, string> = { 'content-type': 'application/json', etag, 'cache-control': 'no-cache' };
    if (signed) {
      headers[BUNDLE_KEY_ID_HEADER] = signed.keyId;
      headers[BUNDLE_SIGNATURE_HEADER] = signed.signature;
    }
    const head: Head = {
      serverId,
      tenantId,
      version: bundle.version,
      etag,
      body,
      keyId: signed?.keyId ?? null,
      signature: signed?.signature ?? null,
      // Written from one prepared block each: every pull answers one of these two unchanged.
      full: prepared({ status: 200, headers, body }),
      notModified: prepared({ status: 304, headers: { etag } }),
    };
    this.heads.set(serverId, head);
    for (const l of this.listeners) l(head);
    return head;
  }
}
