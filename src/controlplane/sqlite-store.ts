import { pageOf, type PageRead } from '../store/page.js';
import type { ConfigBundle, Survivor } from '../../brain/index.js';
import type { TenantId } from '../identity/types.js';
import { migrate, type Db } from '../store/sqlite.js';
import {
  activityOf,
  checkoutOf,
  entryOf,
  keyOf,
  serverOf,
  totalsOf,
  UsageFold,
  type ActivityRow,
  type CheckoutRow,
  type KeyRow,
  type ServerRow,
  type UsageRow,
  type VersionRow,
  latestOf,
  mapSampleOf,
  type LatestRow,
  type MapSampleRow,
} from './rows.js';
import { EMPTY_TOTALS, type ControlPlaneStore } from './store.js';
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
  TelemetryRecord,
  UsageTotals,
} from './types.js';
import { bundleKeyOf, type BundleKeyRecord, type BundleKeyRow } from './bundle-keys-store.js';
import { LATENCY_LOOKBACK } from './types.js';

const MIGRATIONS = [
  {
    version: 1,
    sql: `
      CREATE TABLE cp_servers (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX cp_servers_tenant ON cp_servers(tenant_id, id);
      CREATE TABLE cp_server_keys (
        id INTEGER PRIMARY KEY,
        server_id INTEGER NOT NULL REFERENCES cp_servers(id),
        token_hash TEXT NOT NULL UNIQUE,
        preview TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX cp_server_keys_server ON cp_server_keys(server_id, id);
      -- Append-only: rows are only ever inserted.
      CREATE TABLE cp_config_versions (
        server_id INTEGER NOT NULL REFERENCES cp_servers(id),
        version INTEGER NOT NULL,
        bundle TEXT NOT NULL,
        published_at TEXT NOT NULL,
        published_by TEXT NOT NULL,
        note TEXT NOT NULL,
        PRIMARY KEY (server_id, version)
      ) WITHOUT ROWID;
      CREATE TABLE cp_reports (
        id INTEGER PRIMARY KEY,
        server_id INTEGER NOT NULL REFERENCES cp_servers(id),
        report_id TEXT,
        ts TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        bot_count INTEGER NOT NULL,
        players_online INTEGER NOT NULL,
        lines_spoken INTEGER NOT NULL,
        spend_usd REAL NOT NULL,
        llm_tokens INTEGER NOT NULL,
        tts_characters INTEGER NOT NULL,
        cache_hits INTEGER NOT NULL,
        latency_p50 REAL,
        latency_p99 REAL,
        tts_usd REAL NOT NULL,
        llm_usd REAL NOT NULL,
        -- The report's events [{kind, count}] as JSON: the activity feed reads them back from
        -- the newest reports, which keeps ingest at one row per report.
        events TEXT NOT NULL
      );
      CREATE UNIQUE INDEX cp_reports_dedupe ON cp_reports(server_id, report_id) WHERE report_id IS NOT NULL;
      CREATE INDEX cp_reports_server ON cp_reports(server_id, id);
      CREATE TABLE cp_roster (
        server_id INTEGER PRIMARY KEY REFERENCES cp_servers(id),
        received_at INTEGER NOT NULL,
        roster TEXT NOT NULL
      );
      CREATE TABLE cp_usage_daily (
        server_id INTEGER NOT NULL REFERENCES cp_servers(id),
        day TEXT NOT NULL,
        reports INTEGER NOT NULL,
        lines_spoken INTEGER NOT NULL,
        llm_tokens INTEGER NOT NULL,
        tts_characters INTEGER NOT NULL,
        spend_usd REAL NOT NULL,
        cache_hits INTEGER NOT NULL,
        tts_usd REAL NOT NULL,
        llm_usd REAL NOT NULL,
        PRIMARY KEY (server_id, day)
      ) WITHOUT ROWID;
      CREATE TABLE cp_checkouts (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        provider TEXT NOT NULL,
        provider_ref TEXT NOT NULL,
        status TEXT NOT NULL,
        url TEXT NOT NULL,
        plan TEXT NOT NULL,
        tier TEXT,
        amount_usd REAL NOT NULL,
        interval TEXT NOT NULL,
        created_at TEXT NOT NULL,
        completed_at TEXT
      );
      CREATE UNIQUE INDEX cp_checkouts_ref ON cp_checkouts(provider, provider_ref);
    `,
  },
  {
    version: 2,
    // Retention deletes raw reports by age.
    sql: 'CREATE INDEX cp_reports_received ON cp_reports(received_at);',
  },
  {
    version: 3,
    // The installation's bundle-signing keys, in order; the newest signs. Append-only.
    sql: `CREATE TABLE cp_bundle_keys (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        public_key TEXT NOT NULL,
        private_pem TEXT NOT NULL,
        created_at TEXT NOT NULL,
        previous TEXT,
        endorsement TEXT
      );`,
  },
  {
    version: 4,
    // Where the sidecar's lines come from ({source, model?} as JSON), as its reports say.
    sql: 'ALTER TABLE cp_reports ADD COLUMN dialogue TEXT;',
  },
  {
    version: 5,
    // The latest live map sample per server (characters with positions, as JSON): one row a server, replaced by a newer sample.
    sql: `CREATE TABLE cp_map_samples (
        server_id INTEGER PRIMARY KEY REFERENCES cp_servers(id),
        at_ms INTEGER NOT NULL,
        ts TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        characters TEXT NOT NULL
      );`,
  },
];

/**
 * TOTAL, not SUM: SQLite's SUM of integers fails with "integer overflow" past 2^63, which
 * would make every read of the tenant a 500; TOTAL is a float and never fails. The result is
 * saturated to a safe integer as it is read (totalsOf).
 */
const SUMS = `TOTAL(reports) AS reports, TOTAL(lines_spoken) AS lines_spoken, TOTAL(llm_tokens) AS llm_tokens,
  TOTAL(tts_characters) AS tts_characters, TOTAL(spend_usd) AS spend_usd, TOTAL(cache_hits) AS cache_hits,
  TOTAL(tts_usd) AS tts_usd, TOTAL(llm_usd) AS llm_usd`;

/**
 * A daily counter saturates at the largest integer JSON and JavaScript hold exactly, rather
 * than overflowing (SQLite turns an overflowing integer sum into a float, then the column
 * would hold 9.2e18 and up). `MIN` of that float and this bound is the bound, as an integer.
 */
const SATURATED = `${Number.MAX_SAFE_INTEGER}`;
const addSaturated = (column: string): string => `${column} = MIN(${column} + excluded.${column}, ${SATURATED})`;

export class SqliteControlPlaneStore implements ControlPlaneStore {
  private readonly q;
  private readonly publishTx;
  private readonly ingestTx;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db, 'controlplane', MIGRATIONS);
    this.q = {
      insertServer: db.prepare('INSERT INTO cp_servers (tenant_id, name, created_at) VALUES (?, ?, ?) RETURNING *'),
      server: db.prepare('SELECT * FROM cp_servers WHERE id = ?'),
      servers: db.prepare('SELECT * FROM cp_servers WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?'),
      serverCount: db.prepare('SELECT COUNT(*) AS n FROM cp_servers WHERE tenant_id = ?'),
      insertKey: db.prepare('INSERT INTO cp_server_keys (server_id, token_hash, preview, created_at) VALUES (?, ?, ?, ?) RETURNING *'),
      keys: db.prepare('SELECT * FROM cp_server_keys WHERE server_id = ? AND id > ? ORDER BY id LIMIT ?'),
      liveKeys: db.prepare('SELECT COUNT(*) AS n FROM cp_server_keys WHERE server_id = ? AND revoked_at IS NULL'),
      revokeKey: db.prepare('UPDATE cp_server_keys SET revoked_at = ? WHERE server_id = ? AND id = ? AND revoked_at IS NULL RETURNING token_hash'),
      keyByHash: db.prepare(
        'SELECT k.id AS key_id, k.server_id, s.tenant_id FROM cp_server_keys k JOIN cp_servers s ON s.id = k.server_id WHERE k.token_hash = ? AND k.revoked_at IS NULL',
      ),
      insertVersion: db.prepare('INSERT INTO cp_config_versions (server_id, version, bundle, published_at, published_by, note) VALUES (?, ?, ?, ?, ?, ?)'),
      headVersion: db.prepare('SELECT MAX(version) AS v FROM cp_config_versions WHERE server_id = ?'),
      head: db.prepare('SELECT * FROM cp_config_versions WHERE server_id = ? ORDER BY version DESC LIMIT 1'),
      version: db.prepare('SELECT * FROM cp_config_versions WHERE server_id = ? AND version = ?'),
      versions: db.prepare(
        'SELECT version, published_at, published_by, note FROM cp_config_versions WHERE server_id = ? AND version < ? ORDER BY version DESC LIMIT ?',
      ),
      insertReport: db.prepare(
        `INSERT OR IGNORE INTO cp_reports (server_id, report_id, ts, received_at, bot_count, players_online, lines_spoken, spend_usd,
           llm_tokens, tts_characters, cache_hits, latency_p50, latency_p99, tts_usd, llm_usd, events, dialogue)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      upsertRoster: db.prepare(
        `INSERT INTO cp_roster (server_id, received_at, roster) VALUES (?, ?, ?)
         ON CONFLICT (server_id) DO UPDATE SET received_at = excluded.received_at, roster = excluded.roster WHERE excluded.received_at >= cp_roster.received_at`,
      ),
      upsertUsage: db.prepare(
        `INSERT INTO cp_usage_daily (server_id, day, reports, lines_spoken, llm_tokens, tts_characters, spend_usd, cache_hits, tts_usd, llm_usd)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (server_id, day) DO UPDATE SET ${['reports', 'lines_spoken', 'llm_tokens', 'tts_characters', 'cache_hits'].map(addSaturated).join(', ')},
           spend_usd = spend_usd + excluded.spend_usd, tts_usd = tts_usd + excluded.tts_usd, llm_usd = llm_usd + excluded.llm_usd`,
      ),
      // The latest report, and the tick latency of the latest recent one that carried it.
      latest: db.prepare(`SELECT r.received_at, r.ts, r.bot_count, r.players_online, l.latency_p50, l.latency_p99, l.received_at AS latency_at, d.dialogue
         FROM (SELECT received_at, ts, bot_count, players_online FROM cp_reports WHERE server_id = ? ORDER BY id DESC LIMIT 1) r
         LEFT JOIN (SELECT latency_p50, latency_p99, received_at FROM (SELECT id, latency_p50, latency_p99, received_at FROM cp_reports WHERE server_id = ? ORDER BY id DESC LIMIT ${LATENCY_LOOKBACK})
                     WHERE latency_p50 IS NOT NULL ORDER BY id DESC LIMIT 1) l ON 1 = 1
         LEFT JOIN (SELECT dialogue FROM (SELECT id, dialogue FROM cp_reports WHERE server_id = ? ORDER BY id DESC LIMIT ${LATENCY_LOOKBACK})
                     WHERE dialogue IS NOT NULL ORDER BY id DESC LIMIT 1) d ON 1 = 1`),
      roster: db.prepare('SELECT roster FROM cp_roster WHERE server_id = ?'),
      mapSample: db.prepare('SELECT at_ms, ts, received_at, characters FROM cp_map_samples WHERE server_id = ?'),
      putMapSample: db.prepare(
        `INSERT INTO cp_map_samples (server_id, at_ms, ts, received_at, characters) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (server_id) DO UPDATE SET at_ms = excluded.at_ms, ts = excluded.ts, received_at = excluded.received_at, characters = excluded.characters
         WHERE excluded.at_ms > cp_map_samples.at_ms`,
      ),
      activity: db.prepare("SELECT id, ts, events FROM cp_reports WHERE server_id = ? AND events <> '[]' ORDER BY id DESC LIMIT ?"),
      daily: db.prepare('SELECT * FROM cp_usage_daily WHERE server_id = ? AND day >= ? AND day <= ? ORDER BY day'),
      tenantUsage: db.prepare(`SELECT ${SUMS} FROM cp_usage_daily u JOIN cp_servers s ON s.id = u.server_id WHERE s.tenant_id = ? AND day >= ? AND day <= ?`),
      countReports: db.prepare('SELECT COUNT(*) AS n FROM cp_reports WHERE server_id = ?'),
      // Oldest first, by the received_at index; a server's newest report stays whatever its
      // age (the overview's "last seen" and latest figures read it).
      pruneReports: db.prepare(
        `DELETE FROM cp_reports WHERE id IN (
           SELECT r.id FROM cp_reports r WHERE r.received_at < ?
             AND r.id <> (SELECT MAX(n.id) FROM cp_reports n WHERE n.server_id = r.server_id)
           ORDER BY r.received_at LIMIT ?)`,
      ),
      insertCheckout: db.prepare(
        `INSERT INTO cp_checkouts (tenant_id, provider, provider_ref, status, url, plan, tier, amount_usd, interval, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ),
      checkout: db.prepare('SELECT * FROM cp_checkouts WHERE id = ?'),
      checkoutByRef: db.prepare('SELECT * FROM cp_checkouts WHERE provider = ? AND provider_ref = ?'),
      laterComplete: db.prepare(`SELECT 1 FROM cp_checkouts WHERE tenant_id = ? AND id > ? AND status = 'complete' LIMIT 1`),
      setCheckout: db.prepare(
        `UPDATE cp_checkouts SET status = ?, completed_at = CASE WHEN ? = 'complete' THEN COALESCE(completed_at, ?) ELSE completed_at END WHERE id = ? RETURNING *`,
      ),
    };

    // IMMEDIATE takes the write lock before reading the head, so another process cannot
    // publish between the check and the insert.
    this.publishTx = db.transaction((serverId: ServerId, baseVersion: number | null, bundle: ConfigBundle, by: string, note: string): PublishResult => {
      const head = (this.q.headVersion.get(serverId) as { v: number | null }).v;
      if (head === null) return { ok: false, reason: 'no_server' };
      if (baseVersion !== null && baseVersion !== head) return { ok: false, reason: 'version_conflict', head };
      const version = head + 1;
      const published = { ...bundle, version };
      const publishedAt = this.iso();
      this.q.insertVersion.run(serverId, version, JSON.stringify(published), publishedAt, by, note);
      return { ok: true, published: { bundle: published, entry: { version, publishedAt, publishedBy: by, note } } };
    });

    this.ingestTx = db.transaction((records: readonly TelemetryRecord[]): IngestOutcome[] => this.ingestBatch(records));
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /**
   * One row per report; the day's usage and the roster are folded per batch, so a batch of
   * many reports costs one upsert per server and day rather than one per report.
   */
  private ingestBatch(records: readonly TelemetryRecord[]): IngestOutcome[] {
    const fold = new UsageFold();
    const outcomes = records.map(({ serverId, receivedAt, report }): IngestOutcome => {
      const llmTokens = report.llmTokens ?? 0;
      const ttsCharacters = report.ttsCharacters ?? 0;
      const cacheHits = report.cacheHits ?? 0;
      const ttsUsd = report.economy?.ttsUsd ?? 0;
      const llmUsd = report.economy?.llmUsd ?? 0;
      const info = this.q.insertReport.run(
        serverId,
        report.reportId ?? null,
        report.ts,
        receivedAt,
        report.botCount,
        report.playersOnline,
        report.linesSpoken,
        report.spendUsd,
        llmTokens,
        ttsCharacters,
        cacheHits,
        report.latency?.p50 ?? null,
        report.latency?.p99 ?? null,
        ttsUsd,
        llmUsd,
        JSON.stringify(report.events),
        report.dialogue ? JSON.stringify(report.dialogue) : null,
      );
      if (info.changes === 0) return { accepted: false, received: 0 };
      fold.add(serverId, receivedAt, report);
      return { accepted: true, received: report.events.length };
    });
    for (const [serverId, day, t] of fold.usage()) {
      this.q.upsertUsage.run(serverId, day, t.reports, t.linesSpoken, t.llmTokens, t.ttsCharacters, t.spendUsd, t.cacheHits, t.ttsUsd, t.llmUsd);
    }
    for (const [serverId, receivedAt, roster] of fold.rosters()) this.q.upsertRoster.run(serverId, receivedAt, roster);
    return outcomes;
  }

  createServer(tenantId: TenantId, name: string, bundle: ConfigBundle, publishedBy: string): Promise<ServerRecord>;
  createServer(tenantId: TenantId, name: string, bundle: ConfigBundle, publishedBy: string, maxServers: number): Promise<ServerRecord | 'limit'>;
  async createServer(tenantId: TenantId, name: string, bundle: ConfigBundle, publishedBy: string, maxServers = Infinity): Promise<ServerRecord | 'limit'> {
    return this.db.transaction((): ServerRecord | 'limit' => {
      if (Number.isFinite(maxServers) && (this.q.serverCount.get(tenantId) as { n: number }).n >= maxServers) return 'limit';
      const server = serverOf(this.q.insertServer.get(tenantId, name, this.iso()) as ServerRow);
      this.q.insertVersion.run(server.id, 1, JSON.stringify({ ...bundle, version: 1 }), server.createdAt, publishedBy, 'initial default bundle');
      return server;
    })();
  }

  async getServer(id: ServerId): Promise<ServerRecord | null> {
    const row = this.q.server.get(id) as ServerRow | undefined;
    return row ? serverOf(row) : null;
  }

  async listServers(tenantId: TenantId, page?: PageRead): Promise<ServerRecord[]> {
    return (this.q.servers.all(tenantId, page?.from ?? 0, page?.limit ?? -1) as ServerRow[]).map(serverOf);
  }

  async countServers(tenantId: TenantId): Promise<number> {
    return (this.q.serverCount.get(tenantId) as { n: number }).n;
  }

  createServerKey(serverId: ServerId, tokenHash: string, preview: string): Promise<ServerKeyRecord>;
  createServerKey(serverId: ServerId, tokenHash: string, preview: string, maxLive: number): Promise<ServerKeyRecord | 'limit'>;
  async createServerKey(serverId: ServerId, tokenHash: string, preview: string, maxLive = Infinity): Promise<ServerKeyRecord | 'limit'> {
    return this.db
      .transaction((): ServerKeyRecord | 'limit' => {
        if ((this.q.liveKeys.get(serverId) as { n: number }).n >= maxLive) return 'limit';
        return keyOf(this.q.insertKey.get(serverId, tokenHash, preview, this.iso()) as KeyRow);
      })
      .immediate();
  }

  async listServerKeys(serverId: ServerId, page?: PageRead): Promise<ServerKeyRecord[]> {
    return (this.q.keys.all(serverId, page?.from ?? 0, page?.limit ?? -1) as KeyRow[]).map(keyOf);
  }

  async revokeServerKey(serverId: ServerId, keyId: ServerKeyId): Promise<{ tokenHash: string } | null> {
    const row = this.q.revokeKey.get(this.iso(), serverId, keyId) as { token_hash: string } | undefined;
    return row ? { tokenHash: row.token_hash } : null;
  }

  async findServerKey(tokenHash: string): Promise<KeyOwner | null> {
    const row = this.q.keyByHash.get(tokenHash) as { key_id: number; server_id: number; tenant_id: number } | undefined;
    return row ? { keyId: row.key_id as ServerKeyId, serverId: row.server_id as ServerId, tenantId: row.tenant_id as TenantId } : null;
  }

  async head(serverId: ServerId): Promise<PublishedBundle | null> {
    const row = this.q.head.get(serverId) as VersionRow | undefined;
    return row ? { bundle: JSON.parse(row.bundle!) as ConfigBundle, entry: entryOf(row) } : null;
  }

  async publish(serverId: ServerId, baseVersion: number, bundle: ConfigBundle, publishedBy: string, note: string): Promise<PublishResult> {
    return this.publishTx.immediate(serverId, baseVersion, bundle, publishedBy, note);
  }

  async rollback(serverId: ServerId, version: number, publishedBy: string, note: string): Promise<RollbackResult> {
    const target = this.q.version.get(serverId, version) as VersionRow | undefined;
    if (!target) return { ok: false, reason: (await this.getServer(serverId)) ? 'no_version' : 'no_server' };
    const result = this.publishTx.immediate(serverId, null, JSON.parse(target.bundle!) as ConfigBundle, publishedBy, note);
    return result.ok ? result : { ok: false, reason: 'no_server' };
  }

  async listVersions(serverId: ServerId, limit: number, before: number | null): Promise<{ data: ConfigVersion[]; nextCursor: number | null }> {
    const rows = (this.q.versions.all(serverId, before ?? Number.MAX_SAFE_INTEGER, limit + 1) as VersionRow[]).map(entryOf);
    return pageOf(rows, limit, (v) => v.version);
  }

  async getVersion(serverId: ServerId, version: number): Promise<PublishedBundle | null> {
    const row = this.q.version.get(serverId, version) as VersionRow | undefined;
    return row ? { bundle: JSON.parse(row.bundle!) as ConfigBundle, entry: entryOf(row) } : null;
  }

  async ingest(records: readonly TelemetryRecord[]): Promise<IngestOutcome[]> {
    return this.ingestTx(records);
  }

  async latestReport(serverId: ServerId): Promise<LatestReport | null> {
    const r = this.q.latest.get(serverId, serverId, serverId) as LatestRow | undefined;
    return r ? latestOf(r) : null;
  }

  async roster(serverId: ServerId): Promise<Survivor[]> {
    const row = this.q.roster.get(serverId) as { roster: string } | undefined;
    return row ? (JSON.parse(row.roster) as Survivor[]) : [];
  }

  async mapSample(serverId: ServerId): Promise<MapSample | null> {
    const row = this.q.mapSample.get(serverId) as MapSampleRow | undefined;
    return row ? mapSampleOf(row) : null;
  }

  async putMapSample(serverId: ServerId, sample: MapSample): Promise<boolean> {
    return this.q.putMapSample.run(serverId, sample.atMs, sample.ts, sample.receivedAt, JSON.stringify(sample.characters)).changes > 0;
  }

  async activity(serverId: ServerId, limit: number): Promise<ActivityEvent[]> {
    // Each report holds at least one event, so `limit` reports are always enough.
    return activityOf(serverId, this.q.activity.all(serverId, limit) as ActivityRow[], limit);
  }

  async dailyUsage(serverId: ServerId, fromDay: string, toDay: string): Promise<DailyUsage[]> {
    return (this.q.daily.all(serverId, fromDay, toDay) as UsageRow[]).map((r) => ({ day: r.day!, ...totalsOf(r) }));
  }

  async tenantUsage(tenantId: TenantId, fromDay: string, toDay: string): Promise<UsageTotals> {
    const row = this.q.tenantUsage.get(tenantId, fromDay, toDay) as UsageRow | undefined;
    return row ? totalsOf(row) : { ...EMPTY_TOTALS };
  }

  async pruneReports(before: number, max: number): Promise<number> {
    return this.q.pruneReports.run(before, max).changes;
  }

  async countReports(serverId: ServerId): Promise<number> {
    return (this.q.countReports.get(serverId) as { n: number }).n;
  }

  async createCheckout(r: Omit<CheckoutRecord, 'id' | 'createdAt' | 'completedAt'>): Promise<CheckoutRecord> {
    return checkoutOf(
      this.q.insertCheckout.get(r.tenantId, r.provider, r.providerRef, r.status, r.url, r.plan, r.tier, r.amountUsd, r.interval, this.iso()) as CheckoutRow,
    );
  }

  async getCheckout(id: CheckoutId): Promise<CheckoutRecord | null> {
    const row = this.q.checkout.get(id) as CheckoutRow | undefined;
    return row ? checkoutOf(row) : null;
  }

  async findCheckout(provider: string, providerRef: string): Promise<CheckoutRecord | null> {
    const row = this.q.checkoutByRef.get(provider, providerRef) as CheckoutRow | undefined;
    return row ? checkoutOf(row) : null;
  }

  async setCheckoutStatus(id: CheckoutId, status: CheckoutStatus): Promise<CheckoutRecord | null> {
    const row = this.q.setCheckout.get(status, status, this.iso(), id) as CheckoutRow | undefined;
    return row ? checkoutOf(row) : null;
  }

  async laterCheckoutComplete(tenantId: TenantId, id: CheckoutId): Promise<boolean> {
    return this.q.laterComplete.get(tenantId, id) !== undefined;
  }

  async bundleKeys(): Promise<BundleKeyRecord[]> {
    return (this.db.prepare('SELECT * FROM cp_bundle_keys ORDER BY seq').all() as BundleKeyRow[]).map(bundleKeyOf);
  }

  async addBundleKey(key: Omit<BundleKeyRecord, 'createdAt'>): Promise<boolean> {
    const row = this.db
      .prepare(
        'INSERT INTO cp_bundle_keys (seq, id, public_key, private_pem, created_at, previous, endorsement) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING seq',
      )
      .get(key.seq, key.id, key.publicKey, key.privatePem, this.iso(), key.previous, key.endorsement);
    return row !== undefined;
  }
}
