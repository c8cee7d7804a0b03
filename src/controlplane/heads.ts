import type { ControlPlaneStore } from './store.js';
import type { PublishedBundle, ServerId } from './types.js';
import type { TenantId } from '../identity/types.js';
import type { Reply } from '../http/reply.js';

/** What a config pull needs, prepared once per publish so that a pull touches no storage. */
export interface Head {
  serverId: ServerId;
  tenantId: TenantId;
  version: number;
  etag: string;
  /** The bundle as sent on a 200. */
  body: string;
  /** The replies themselves, built once per publish (a pull allocates none). */
  full: Reply;
  notModified: Reply;
}

export function etagOf(version: number): string {
  return `"v${version}"`;
}

/** Whether an If-None-Match header names `etag` (a list, weak validators and `*` included). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag === etag || tag === `W/${etag}`) return true;
  }
  return false;
}

/**
 * The current head of every server that has been pulled, in memory. Filled from the store on
 * the first pull and replaced on every publish or rollback, of this process or (told through
 * the control plane's broadcast) of another replica on the same database.
 */
export class HeadCache {
  private readonly heads = new Map<ServerId, Head>();

  constructor(private readonly store: ControlPlaneStore) {}

  /** The cached head, without a storage read; undefined when not loaded yet. */
  peek(serverId: ServerId): Head | undefined {
    return this.heads.get(serverId);
  }

  async get(serverId: ServerId): Promise<Head | null> {
    const cached = this.heads.get(serverId);
    if (cached) return cached;
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
    const etag = etagOf(published.bundle.version);
    const body = JSON.stringify(published.bundle);
    const head: Head = {
      serverId,
      tenantId,
      version: published.bundle.version,
      etag,
      body,
      full: { status: 200, headers: { 'content-type': 'application/json', etag, 'cache-control': 'no-cache' }, body },
      notModified: { status: 304, headers: { etag } },
    };
    this.heads.set(serverId, head);
    return head;
  }
}
