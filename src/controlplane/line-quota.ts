import type { ConfigBundle } from '../../brain/index.js';
import type { TenantPlans } from '../identity/plan-limits.js';
import type { TenantId } from '../identity/types.js';
import type { ControlPlaneSync } from './cluster.js';
import type { HeadCache } from './heads.js';
import type { ControlPlaneStore } from './store.js';
import { monthOf } from './read-models.js';
import type { TenantLookup } from './server-key-auth.js';
import type { PublishedBundle, ServerId } from './types.js';

/** Who the history names for the versions the line quota publishes. */
export const QUOTA_PUBLISHER = 'brainstem (monthly line quota)';

interface Watch {
  /** First day (UTC) of the month counted. */
  month: string;
  lines: number;
  limit: number | null;
  /** When the month's total was last read from the store (epoch ms). */
  readAt: number;
  /** Dialogue was switched off this month (so a later report checks only its own server). */
  held: boolean;
  /** Under quota and the servers' heads were checked for a hold to lift. */
  released: boolean;
}

/**
 * The monthly line quota of a plan. When the lines a tenant's servers reported this month
 * reach its plan's `linesPerMonth`, each of its servers gets a new version of its bundle with
 * `llm_dialogue` off, published by QUOTA_PUBLISHER, so the next config pull (an ordinary new
 * version and ETag) switches dialogue off in the sidecar. When the tenant is under quota again
 * (a new month, or a plan with more lines), each bundle so published gets its dialogue back
 * with one more version. Counting happens in memory after the first report of the month
 * (which reads the month's total), so a report costs a map lookup.
 */
export class LineQuota {
  private readonly watches = new Map<TenantId, Watch>();
  /** The head version of each held server last seen with dialogue off. */
  private readonly offAt = new Map<ServerId, number>();

  /**
   * `refreshMs`: with several replicas on one database each counts only the reports it took,
   * so the month's total is read again from the store when the count is older than this
   * (null: never, a single process sees every report).
   */
  constructor(
    private readonly ctx: { store: ControlPlaneStore; heads: HeadCache; now: () => number; sync: ControlPlaneSync },
    private readonly plans: TenantPlans,
    private readonly tenants: TenantLookup,
    private readonly refreshMs: number | null = null,
  ) {}

  /** Forgets a tenant's count and limit (changed by another replica); the next report reads them again. */
  forget(tenantId: TenantId): void {
    this.watches.delete(tenantId);
    this.offAt.clear();
  }

  forgetAll(): void {
    this.watches.clear();
    this.offAt.clear();
  }

  /** A tenant's plan changed: re-read its limit and apply or lift the hold at once. */
  async reconsider(tenantId: TenantId): Promise<void> {
    this.forget(tenantId);
    await this.afterIngest(tenantId, null, 0);
  }

  /**
   * Called after a report of `serverId` was stored with `lines` spoken. The common case (the
   * month's count is current and the hold neither starts nor needs re-applying) is counted
   * synchronously, with no promise: it runs once per telemetry report.
   */
  afterIngest(tenantId: TenantId, serverId: ServerId | null, lines: number): void | Promise<void> {
    const now = this.ctx.now();
    const w = this.watches.get(tenantId);
    if (w !== undefined && w.month === monthOf(now).firstDay && (this.refreshMs === null || now - w.readAt < this.refreshMs)) {
      const counted = w.lines + lines;
      const over = w.limit !== null && counted >= w.limit;
      const settled = over ? w.held && (serverId === null || this.holdCurrent(serverId)) : w.released;
      if (settled) {
        w.lines = counted;
        return;
      }
    }
    return this.track(tenantId, serverId, lines);
  }

  /** The server's head in memory is the one the hold last published (dialogue off). */
  private holdCurrent(serverId: ServerId): boolean {
    const head = this.ctx.heads.peek(serverId);
    return head !== undefined && this.offAt.get(serverId) === head.version;
  }

  private async track(tenantId: TenantId, serverId: ServerId | null, lines: number): Promise<void> {
    const month = monthOf(this.ctx.now());
    const now = this.ctx.now();
    let w = this.watches.get(tenantId);
    if (w === undefined || w.month !== month.firstDay) {
      const tenant = await this.tenants.getTenant(tenantId);
      if (!tenant) return;
      const used = await this.ctx.store.tenantUsage(tenantId, month.firstDay, month.lastDay);
      w = { month: month.firstDay, lines: used.linesSpoken, limit: this.plans.limits(tenant.plan).linesPerMonth, readAt: now, held: false, released: false };
      this.watches.set(tenantId, w);
    } else if (this.refreshMs !== null && now - w.readAt >= this.refreshMs) {
      // One read per refresh: the reports stored while it is at the database count in memory
      // meanwhile (readAt moves first), where each used to start a read of its own (a replica
      // under load sent as many identical sums as it had reports in flight, every second).
      // The stored total already holds this report; those of the others that committed after
      // the read's snapshot count from the next refresh on, as the other replicas' reports do.
      w.readAt = now;
      w.lines = (await this.ctx.store.tenantUsage(tenantId, month.firstDay, month.lastDay)).linesSpoken;
    } else w.lines += lines;
    const over = w.limit !== null && w.lines >= w.limit;
    if (over) {
      const note = `${w.lines} lines this month reached the plan's ${w.limit}: llm_dialogue off until ${new Date(month.end).toISOString()}`;
      if (!w.held) {
        w.held = true;
        for (const s of await this.ctx.store.listServers(tenantId)) await this.hold(s.id, tenantId, note);
      } else if (serverId !== null) {
        // A bundle published since (or a new server) may have dialogue on again.
        const head = this.ctx.heads.peek(serverId);
        if (head === undefined || this.offAt.get(serverId) !== head.version) await this.hold(serverId, tenantId, note);
      }
    } else if (!w.released) {
      w.released = true;
      for (const s of await this.ctx.store.listServers(tenantId)) await this.release(s.id, tenantId);
    }
  }

  private async hold(serverId: ServerId, tenantId: TenantId, note: string): Promise<void> {
    const head = await this.ctx.store.head(serverId);
    if (!head) return;
    if (head.bundle.policy.llm_dialogue === false) return void this.offAt.set(serverId, head.bundle.version);
    const published = await this.publish(serverId, tenantId, head, withDialogue(head.bundle, false), note);
    if (published !== null) this.offAt.set(serverId, published);
  }

  private async release(serverId: ServerId, tenantId: TenantId): Promise<void> {
    const head = await this.ctx.store.head(serverId);
    if (!head || head.entry.publishedBy !== QUOTA_PUBLISHER || head.bundle.policy.llm_dialogue !== false) return;
    const before = await this.ctx.store.getVersion(serverId, head.entry.version - 1);
    await this.publish(
      serverId,
      tenantId,
      head,
      withDialogue(head.bundle, before?.bundle.policy.llm_dialogue),
      'line quota renewed: llm_dialogue as before the hold',
    );
  }

  /** The version published, or null when a user's publish landed first (the next report retries). */
  private async publish(serverId: ServerId, tenantId: TenantId, head: PublishedBundle, bundle: ConfigBundle, note: string): Promise<number | null> {
    const result = await this.ctx.store.publish(serverId, head.bundle.version, bundle, QUOTA_PUBLISHER, note);
    if (!result.ok) return null;
    this.ctx.heads.set(serverId, tenantId, result.published);
    await this.ctx.sync.announce({ kind: 'head', serverId, version: result.published.bundle.version });
    return result.published.bundle.version;
  }
}

/** The bundle with `llm_dialogue` set (or, for undefined, omitted: the all-on default). */
function withDialogue(bundle: ConfigBundle, on: boolean | undefined): ConfigBundle {
  const policy = { ...bundle.policy };
  if (on === undefined) delete policy.llm_dialogue;
  else policy.llm_dialogue = on;
  return { ...bundle, policy };
}
