import type { TenantId, TenantRecord } from '../identity/types.js';
import type { Logger } from '../log.js';
import type { Broadcast } from '../store/broadcast.js';
import type { WidgetRecord } from './types.js';

/** A widget as a key's owner: its id and tenant, which never change (its name may). */
export type WidgetRef = Pick<WidgetRecord, 'id' | 'tenantId'>;

/** The channel on which replicas tell each other that a widget's keys changed (the widget's id) or a tenant did (`tenant:` and its id). */
export const WEBHOOKS_KEYS_CHANNEL = 'brainstem_webhook_keys';
const TENANT_MESSAGE = 'tenant:';
/** Resolved widget keys kept per replica; past this many the cache starts again (only live keys are kept, so a flood of bad ones cannot fill it). */
export const KEY_CACHE_MAX = 10_000;
/** The longest a resolved key is trusted without a read, should a revocation's message be lost without the connection dropping. */
export const KEY_TTL_MS = 60_000;
/** The longest a tenant's status is trusted without a read: a change no replica announced (the `admin` CLI on the database) reaches every replica's widget-key check within this. */
export const TENANT_TTL_MS = 1_000;

/**
 * What a replica on a shared database keeps of the widget-key credential, so that an event
 * post reads nothing but its insert: the widget of each live key (by the key's hash) and its
 * tenant. A revocation drops the widget's keys here at once and, through the broadcast, on
 * every other replica as soon as the message arrives; a tenant's change (a suspension) likewise
 * drops the tenant; a replica whose listening connection was lost forgets every key and tenant
 * when it is back. Tenants are read again after TENANT_TTL_MS in any case. A read that began
 * before a drop is not kept, so a key revoked (a tenant suspended) during its look-up is not cached.
 */
export class WidgetKeyCache {
  private readonly keys = new Map<string, { value: WidgetRef; until: number }>();
  private readonly tenants = new Map<TenantId, { value: TenantRecord; until: number }>();
  /** Counts drops: a read that saw a drop while it ran keeps nothing. */
  private drops = 0;

  constructor(
    private readonly broadcast: Broadcast,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {
    broadcast.listen(
      WEBHOOKS_KEYS_CHANNEL,
      (payload) => (payload.startsWith(TENANT_MESSAGE) ? this.dropTenant(Number(payload.slice(TENANT_MESSAGE.length)) as TenantId) : this.dropWidget(payload)),
      () => this.clear(),
    );
  }

  /** The widget of a live key, read through `read` unless kept (only its id and tenant are kept). */
  widget(hash: string, read: () => Promise<WidgetRef | null>): Promise<WidgetRef | null> {
    return this.through(this.keys, hash, KEY_TTL_MS, async () => {
      const found = await read();
      return found === null ? null : { id: found.id, tenantId: found.tenantId };
    });
  }

  /** The tenant, read through `read` unless read within TENANT_TTL_MS. */
  tenant(id: TenantId, read: () => Promise<TenantRecord | null>): Promise<TenantRecord | null> {
    return this.through(this.tenants, id, TENANT_TTL_MS, read);
  }

  /** `map`'s entry for `key` while younger than `ttlMs`, else read and kept (not a null, nor an answer a drop overtook). */
  private async through<K, V>(map: Map<K, { value: V; until: number }>, key: K, ttlMs: number, read: () => Promise<V | null>): Promise<V | null> {
    const at = this.now();
    const kept = map.get(key);
    if (kept !== undefined && kept.until > at) return kept.value;
    const drops = this.drops;
    const value = await read();
    if (value !== null && drops === this.drops) {
      if (map.size >= KEY_CACHE_MAX) map.clear();
      map.set(key, { value, until: at + ttlMs });
    }
    return value;
  }

  /**
   * A key of the widget was revoked here: dropped at once, then announced (awaited, so the
   * other replicas are told before the revocation is answered). Never rejects: a failed send
   * is logged, and the other replicas read the key again within KEY_TTL_MS (a tenant within
   * TENANT_TTL_MS).
   */
  async revoked(widgetId: string): Promise<void> {
    this.dropWidget(widgetId);
    await this.announce(widgetId);
  }

  /** The tenant changed here (suspended, resumed): dropped at once, then announced like a revocation. */
  async tenantChanged(id: TenantId): Promise<void> {
    this.dropTenant(id);
    await this.announce(`${TENANT_MESSAGE}${id}`);
  }

  private async announce(payload: string): Promise<void> {
    try {
      await this.broadcast.send(WEBHOOKS_KEYS_CHANNEL, payload);
    } catch (err) {
      this.logger.error('webhooks: could not tell the other replicas of a widget key or tenant change', { message: payload, error: String(err) });
    }
  }

  private dropWidget(widgetId: string): void {
    this.drops++;
    for (const [hash, kept] of this.keys) if (kept.value.id === widgetId) this.keys.delete(hash);
  }

  private dropTenant(id: TenantId): void {
    this.drops++;
    this.tenants.delete(id);
  }

  private clear(): void {
    this.drops++;
    this.keys.clear();
    this.tenants.clear();
  }
}
