import type { PageRead } from '../store/page.js';
import type { ConfigBundle, Survivor } from '../../brain/index.js';
import type { TenantId } from '../identity/types.js';
import type {
  ActivityEvent,
  CheckoutId,
  CheckoutRecord,
  CheckoutStatus,
  ConfigVersion,
  DailyUsage,
  IngestOutcome,
  KeyOwner,
  LatestReport,
  MapSample,
  PublishedBundle,
  PublishResult,
  RollbackResult,
  ServerId,
  ServerKeyId,
  ServerKeyRecord,
  ServerRecord,
  SignedRecord,
  TelemetryRecord,
  UsageTotals,
} from './types.js';
import type { BundleKeyRecord } from './bundle-keys-store.js';

/**
 * Everything the control plane keeps. Methods return promises so that a store on a network
 * database can stand in for SQLite; writes that belong together are one transaction.
 */
export interface ControlPlaneStore {
  /** Creates a server with `bundle` published as version 1, in one transaction. */
  createServer(tenantId: TenantId, name: string, bundle: ConfigBundle, publishedBy: string): Promise<ServerRecord>;
  /** As above unless the tenant already has `maxServers` servers ('limit'); the count and the insert are one transaction. */
  createServer(tenantId: TenantId, name: string, bundle: ConfigBundle, publishedBy: string, maxServers: number): Promise<ServerRecord | 'limit'>;
  getServer(id: ServerId): Promise<ServerRecord | null>;
  /** The tenant's servers by id; all of them without `page`. */
  listServers(tenantId: TenantId, page?: PageRead): Promise<ServerRecord[]>;
  /** How many servers the tenant has (a count, not a read of them all). */
  countServers(tenantId: TenantId): Promise<number>;

  createServerKey(serverId: ServerId, tokenHash: string, preview: string): Promise<ServerKeyRecord>;
  /** The same, refused ('limit') when the server already has `maxLive` live keys, counted and created in one step. */
  createServerKey(serverId: ServerId, tokenHash: string, preview: string, maxLive: number): Promise<ServerKeyRecord | 'limit'>;
  /** The server's keys by id, revoked ones included; with `page`, at most `page.limit` of them with ids above `page.from`. */
  listServerKeys(serverId: ServerId, page?: PageRead): Promise<ServerKeyRecord[]>;
  /** Revokes a live key; returns its token hash (so caches can drop it) or null when there was none. */
  revokeServerKey(serverId: ServerId, keyId: ServerKeyId): Promise<{ tokenHash: string } | null>;
  /** The owner of a live (unrevoked) key. */
  findServerKey(tokenHash: string): Promise<KeyOwner | null>;

  /** The current head of a server's configuration. */
  head(serverId: ServerId): Promise<PublishedBundle | null>;
  /**
   * Publishes `bundle` as the next version when `baseVersion` is the head; the check and the
   * insert are one transaction, so of two publishes on one base exactly one wins.
   */
  publish(serverId: ServerId, baseVersion: number, bundle: ConfigBundle, publishedBy: string, note: string): Promise<PublishResult>;
  /** Publishes the content of an old version as a fresh head. */
  rollback(serverId: ServerId, version: number, publishedBy: string, note: string): Promise<RollbackResult>;
  /** History, newest first: at most `limit` versions below `before` (null: from the head); `nextCursor` is the last version given when older ones follow. */
  listVersions(serverId: ServerId, limit: number, before: number | null): Promise<{ data: ConfigVersion[]; nextCursor: number | null }>;
  getVersion(serverId: ServerId, version: number): Promise<PublishedBundle | null>;

  /** Stores reports in one transaction; outcomes in input order. */
  ingest(records: readonly TelemetryRecord[]): Promise<IngestOutcome[]>;
  /**
   * Only on a store that holds the replay record the replicas share (PostgreSQL): `ingest`, where
   * each signed record's signature is recorded in the same statement and the record stored only
   * when its signature was new (the first use on any replica); a replay stores nothing and its
   * outcome is null. Signed and plain records may share a batch; a batch holds each signature at
   * most once (the replica's own replay guard refuses a second use before it is queued).
   */
  ingestSigned?(records: readonly (TelemetryRecord | SignedRecord)[]): Promise<(IngestOutcome | null)[]>;
  latestReport(serverId: ServerId): Promise<LatestReport | null>;
  roster(serverId: ServerId): Promise<Survivor[]>;
  /** The server's latest live map sample, or null before the first. */
  mapSample(serverId: ServerId): Promise<MapSample | null>;
  /**
   * Keeps `sample` as the server's latest unless the stored one is at least as new (by atMs);
   * true when it was stored. A repeat of the stored sample changes nothing.
   */
  putMapSample(serverId: ServerId, sample: MapSample): Promise<boolean>;
  activity(serverId: ServerId, limit: number): Promise<ActivityEvent[]>;
  /** Per-day aggregates for days in [fromDay, toDay] (YYYY-MM-DD, inclusive), oldest first. */
  dailyUsage(serverId: ServerId, fromDay: string, toDay: string): Promise<DailyUsage[]>;
  /** Aggregates summed over every server of a tenant for days in [fromDay, toDay]. */
  tenantUsage(tenantId: TenantId, fromDay: string, toDay: string): Promise<UsageTotals>;
  countReports(serverId: ServerId): Promise<number>;
  /**
   * Deletes up to `max` raw reports received before `before` (epoch ms), oldest first, and
   * returns how many went. Each server's newest report is kept whatever its age; daily
   * usage is never deleted.
   */
  pruneReports(before: number, max: number): Promise<number>;

  createCheckout(record: Omit<CheckoutRecord, 'id' | 'createdAt' | 'completedAt'>): Promise<CheckoutRecord>;
  getCheckout(id: CheckoutId): Promise<CheckoutRecord | null>;
  findCheckout(provider: string, providerRef: string): Promise<CheckoutRecord | null>;
  setCheckoutStatus(id: CheckoutId, status: CheckoutStatus): Promise<CheckoutRecord | null>;
  /** Whether a checkout the tenant started after checkout `id` is complete already. */
  laterCheckoutComplete(tenantId: TenantId, id: CheckoutId): Promise<boolean>;

  /** The installation's bundle-signing keys, oldest first (the last one signs). */
  bundleKeys(): Promise<BundleKeyRecord[]>;
  /** Adds a key at position `seq`; false (nothing changed) when another process took that position first. */
  addBundleKey(key: Omit<BundleKeyRecord, 'createdAt'>): Promise<boolean>;
}

export const EMPTY_TOTALS: UsageTotals = { reports: 0, linesSpoken: 0, llmTokens: 0, ttsCharacters: 0, spendUsd: 0, cacheHits: 0, ttsUsd: 0, llmUsd: 0 };
