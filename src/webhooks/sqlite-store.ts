import { realpathSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { Db } from '../store/sqlite.js';
import { migrate } from '../store/sqlite.js';
import type { TenantId } from '../identity/types.js';
import { newId } from './ids.js';
import { conversationOf, endpointDisabledBody } from './events.js';
import { rateSpacingMs } from './schedule.js';
import {
  roomFor,
  type AttemptResult,
  type CreatedWidget,
  type EndpointInput,
  type EndpointPatch,
  type ClaimOptions,
  type Claimed,
  type EndpointRoom,
  type Enqueued,
  type WebhookStore,
} from './store.js';
import type { Lease } from '../store/lease.js';
import type { PageRead } from '../store/page.js';
import {
  attemptLogSql,
  attemptOf,
  DELIVERY_COLUMNS,
  deliveryOf,
  dueOfParts,
  endpointOf,
  keyOf,
  pageByPlace,
  pageMapped,
  pageRows,
  nextState,
  orderNote,
  signingKeyOf,
  widgetOf,
  type SigningKeyRow,
  type AttemptRow,
  type DeliveryRow,
  type DueDeliveryRow,
  type DueEndpointRow,
  type EndpointRow,
  type KeyRow,
  type WidgetRow,
} from './rows.js';
import type { DeliveryId, DeliveryStatus, DisabledReason, EndpointId, EndpointRecord, EventId, EventType, WidgetId, WidgetKeyRecord } from './types.js';

/**
 * True for a delivery with an earlier unfinished one of its conversation to the same endpoint:
 * such a delivery waits 'blocked', outside the due index (used in statements on webhook_deliveries).
 */
const EARLIER_UNFINISHED = `(webhook_deliveries.order_key IS NOT NULL AND EXISTS (
  SELECT 1 FROM webhook_deliveries o WHERE o.endpoint_id = webhook_deliveries.endpoint_id AND o.order_key = webhook_deliveries.order_key
    AND o.seq < webhook_deliveries.seq AND o.status IN ('pending', 'inflight')))`;

const MIGRATIONS = [
  {
    version: 1,
    sql: `
      CREATE TABLE webhook_widgets (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        tenant_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_widgets_tenant ON webhook_widgets(tenant_id, seq);
      CREATE TABLE webhook_widget_keys (
        id TEXT PRIMARY KEY,
        widget_id TEXT NOT NULL REFERENCES webhook_widgets(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        preview TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE TABLE webhook_endpoints (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        widget_id TEXT NOT NULL REFERENCES webhook_widgets(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at INTEGER,
        events TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        disabled_reason TEXT,
        failing_since INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_endpoints_widget ON webhook_endpoints(widget_id, seq);
      CREATE TABLE webhook_events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        widget_id TEXT NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE webhook_deliveries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        event_seq INTEGER NOT NULL REFERENCES webhook_events(seq),
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        widget_id TEXT NOT NULL,
        event TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER,
        last_status_code INTEGER,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, endpoint_id) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_inflight ON webhook_deliveries(status) WHERE status = 'inflight';
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, seq);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_seq);
      CREATE TABLE webhook_attempts (
        seq INTEGER PRIMARY KEY,
        delivery_seq INTEGER NOT NULL REFERENCES webhook_deliveries(seq) ON DELETE CASCADE,
        started_at INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        status_code INTEGER,
        response_excerpt TEXT,
        error TEXT,
        outcome TEXT NOT NULL
      );
      CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_seq, seq);
    `,
  },
  {
    version: 2,
    // Events that happen once per key (conversation.started per conversation_id). Kept beyond the
    // event retention: a repeat a month later is still the same conversation's start.
    sql: `
      CREATE TABLE webhook_once (
        widget_id TEXT NOT NULL,
        once_key TEXT NOT NULL,
        event_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (widget_id, once_key)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    // Claims are leases: the holder and when the claim lapses. Deliveries in flight before this
    // migration have no holder, so they are made claimable at once.
    sql: `
      ALTER TABLE webhook_deliveries ADD COLUMN lease_owner TEXT;
      ALTER TABLE webhook_deliveries ADD COLUMN lease_until INTEGER;
      UPDATE webhook_deliveries SET lease_until = 0 WHERE status = 'inflight';
      DROP INDEX webhook_deliveries_inflight;
      CREATE INDEX webhook_deliveries_lease ON webhook_deliveries(lease_until) WHERE status = 'inflight';
    `,
  },
  {
    version: 4,
    // v1a signing keys, the signature scheme and rate of an endpoint, per-conversation order,
    // and the tenant's operational endpoint. Endpoints disabled before this are dated by their last change.
    sql: `
      ALTER TABLE webhook_endpoints ADD COLUMN signature_scheme TEXT NOT NULL DEFAULT 'hmac';
      ALTER TABLE webhook_endpoints ADD COLUMN rate_limit INTEGER;
      ALTER TABLE webhook_endpoints ADD COLUMN rate_next_at REAL;
      ALTER TABLE webhook_endpoints ADD COLUMN disabled_at INTEGER;
      UPDATE webhook_endpoints SET disabled_at = updated_at WHERE enabled = 0;
      ALTER TABLE webhook_deliveries ADD COLUMN order_key TEXT;
      ALTER TABLE webhook_deliveries ADD COLUMN order_note TEXT;
      CREATE INDEX webhook_deliveries_order ON webhook_deliveries(endpoint_id, order_key, seq) WHERE status IN ('pending', 'inflight');
      CREATE TABLE webhook_signing_keys (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        seed TEXT NOT NULL,
        public_key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        retires_at INTEGER
      );
      CREATE TABLE webhook_tenant_settings (
        tenant_id INTEGER PRIMARY KEY,
        operational_endpoint_id TEXT,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    // The claim reads due deliveries oldest first, by (next_attempt_at, seq). Every SQLite index
    // ends with the rowid (seq), so an index on next_attempt_at alone is in exactly that order and
    // the claim stops after the rows it needs; the old (next_attempt_at, endpoint_id) order made it
    // sort every delivery that fell due in the same millisecond before taking any.
    sql: `
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
    `,
  },
  {
    version: 6,
    // A delivery queued behind an unfinished earlier one of its conversation (same endpoint) is
    // 'blocked': kept out of the due index, so claims no longer read and probe it again each time,
    // until its predecessor's result releases it (or it has waited the order bound, read from its
    // own index). The endpoints with a rate limit get an index so a claim finds them without a scan.
    // Both indexes carry what the claim reads (in claim order: next_attempt_at, then seq), so it
    // never visits the table rows it passes over.
    sql: `
      ALTER TABLE webhook_deliveries ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0;
      UPDATE webhook_deliveries SET blocked = 1 WHERE status = 'pending' AND ${EARLIER_UNFINISHED};
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, seq, endpoint_id, order_key) WHERE status = 'pending' AND blocked = 0;
      CREATE INDEX webhook_deliveries_blocked ON webhook_deliveries(next_attempt_at, seq, endpoint_id, order_key) WHERE status = 'pending' AND blocked = 1;
      CREATE INDEX webhook_endpoints_rated ON webhook_endpoints(id) WHERE rate_limit IS NOT NULL;
    `,
  },
  {
    version: 7,
    // The order index leads with the conversation: every lookup names both the conversation and
    // the endpoint, and an event's deliveries to all its endpoints (which finish together) now sit
    // side by side, so recording a batch of results rewrites a few pages of this index instead of
    // one per endpoint (each a page written to the WAL at commit).
    sql: `
      DROP INDEX webhook_deliveries_order;
      CREATE INDEX webhook_deliveries_order ON webhook_deliveries(order_key, endpoint_id, seq) WHERE status IN ('pending', 'inflight');
    `,
  },
  {
    version: 8,
    // A delivery whose first attempt succeeds (nearly every one) keeps that attempt in its own row,
    // written by the finishing UPDATE, instead of a row of webhook_attempts: one insert and one
    // index entry less per delivery. Later attempts (after a failure or a manual retry) are rows
    // as before; the attempt log reads the first attempt from here, then the rows.
    sql: `
      ALTER TABLE webhook_deliveries ADD COLUMN first_started_at INTEGER;
      ALTER TABLE webhook_deliveries ADD COLUMN first_duration_ms INTEGER;
      ALTER TABLE webhook_deliveries ADD COLUMN first_status_code INTEGER;
      ALTER TABLE webhook_deliveries ADD COLUMN first_response_excerpt TEXT;
    `,
  },
];

interface DueCandidate {
  seq: number;
  endpoint_id: string;
  order_key: string | null;
  next_attempt_at: number;
}

/** Two lists in claim order (next_attempt_at, seq), merged into one in that order. */
function mergeDue(a: DueCandidate[], b: DueCandidate[]): DueCandidate[] {
  const out: DueCandidate[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && (x.next_attempt_at < y.next_attempt_at || (x.next_attempt_at === y.next_attempt_at && x.seq < y.seq)))) {
      out.push(x!);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}

/** A delivery claimed by a dispatcher of this process: its row stays `pending` while the claim runs. */
interface HeldLease {
  seq: number;
  id: string;
  endpointId: string;
  /** Its conversation (null: not ordered), so recording its result needs no row back to unblock the next one. */
  orderKey: string | null;
  /** Its next_attempt_at when claimed: with seq, its place in claim order. */
  dueAt: number;
  /** Attempts made before this claim: a first attempt that succeeds is kept in the delivery's own row. */
  attempts: number;
  owner: string;
  until: number;
}

/** A place in claim order: (next_attempt_at, seq). */
interface ClaimPlace {
  at: number;
  seq: number;
}

/**
 * The claims on one SQLite file, kept in memory. One process delivers from a SQLite file (the
 * server takes the file's lock), so no other process needs to see them: a claim reads the
 * outbox and writes nothing, and only the attempt's outcome is written, once, with the batch
 * of results. Every store this process opens on the file shares the table, so two dispatchers
 * (or two stores) in the process still never hold one delivery at once. If the process dies,
 * the claims die with it and the rows they covered are still `pending`: the next start sends
 * them again (at least once), and the deliveries queued behind them stay blocked meanwhile.
 */
class LeaseTable {
  readonly bySeq = new Map<number, HeldLease>();
  readonly byId = new Map<string, HeldLease>();

  add(h: HeldLease): void {
    this.bySeq.set(h.seq, h);
    this.byId.set(h.id, h);
  }

  delete(h: HeldLease): void {
    this.bySeq.delete(h.seq);
    this.byId.delete(h.id);
  }

  /** The held rows as a JSON list of seqs (for `json_each`), of one endpoint or all. */
  seqs(endpointId?: string): string {
    const out: number[] = [];
    for (const h of this.bySeq.values()) if (endpointId === undefined || h.endpointId === endpointId) out.push(h.seq);
    return JSON.stringify(out);
  }
}

/**
 * The claim floor of a connection: every row of the due index before `place` in claim order is
 * held by a claim or remembered in `known`, so a claim's scan starts there instead of reading
 * those rows again (null: from the start). A claim moves it past the rows it read, remembering
 * those it could not take (their endpoint at its limit, or the claim full), and takes an
 * endpoint's remembered rows first when that endpoint has room: so a claim never reads again the
 * rows of endpoints at their limit. A finished delivery's unblocked successor before the floor
 * is remembered; any other write through a store on the connection that puts a row into the due
 * index before the floor (a retry, an enqueue) moves the floor back to that row (rows already
 * remembered are passed over when read again). Handing claims back, retrying and recovering
 * deliveries, and any commit by another connection (PRAGMA data_version) drop the floor and what
 * it remembers; disabling or deleting an endpoint drops that endpoint's remembered rows.
 */
interface ClaimFloor {
  place: ClaimPlace | null;
  /** Due rows before `place` that no claim holds, by endpoint, each list in claim order; at most KNOWN_DUE_MAX in all. */
  known: Map<string, DueCandidate[]>;
  /** The seqs of the rows in `known`. */
  knownSeqs: Set<number>;
  /** PRAGMA data_version when last looked at: another connection's commit changes it. */
  version: number;
  /** How many endpoints are enabled (null: read it again); cleared with the floor and when a store on this connection adds or changes an endpoint. */
  enabled: number | null;
  /**
   * Each endpoint's part of what its deliveries send (URL, secrets, scheme), read once rather than
   * with every claimed delivery; dropped with the floor on another connection's commit and when a
   * store on this connection changes an endpoint, and started again past ENDPOINT_CACHE_MAX entries.
   */
  endpoints: Map<string, DueEndpointRow>;
  /**
   * Each endpoint's breaker state (enabled, failing since), read once and kept current by the
   * results this connection records rather than read with every batch; dropped like `endpoints`,
   * and when recording fails.
   */
  states: Map<string, EndpointState>;
}
interface EndpointState {
  enabled: number;
  failing_since: number | null;
}
const claimFloors = new WeakMap<Db, ClaimFloor>();
/** Endpoints whose sending part (and, apart, whose breaker state) a connection keeps for its claims and results; past this many each starts again (it refills from the endpoints in use). */
export const ENDPOINT_CACHE_MAX = 4096;
/**
 * Due rows a connection remembers past the claim floor for endpoints at their limit. Past this
 * many the floor stops at the first row it could not remember, and claims read on from there
 * (a claim that reaches past saturated endpoints still finds the rows behind them).
 */
export const KNOWN_DUE_MAX = 4096;

/** By the database file's real path (a `:memory:` database by its connection): tables with no claim are dropped. */
const leaseTables = new Map<string, LeaseTable>();
const memoryLeaseTables = new WeakMap<Db, LeaseTable>();

export class SqliteWebhookStore implements WebhookStore {
  private readonly q;
  /** Where this store's lease table is registered: the file's real path, or null for an in-memory database. */
  private readonly leaseKey: string | null;
  /** The claim floor of this store's connection (shared by every store on it). */
  private readonly cursor: ClaimFloor;
  private readonly inTransaction: (fn: () => unknown) => unknown;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db, 'webhooks', MIGRATIONS);
    this.leaseKey = db.memory ? null : realpathSync(db.name);
    let cursor = claimFloors.get(db);
    if (!cursor)
      claimFloors.set(
        db,
        (cursor = { place: null, known: new Map(), knownSeqs: new Set(), version: -1, enabled: null, endpoints: new Map(), states: new Map() }),
      );
    this.cursor = cursor;
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
    this.q = {
      insertWidget: db.prepare('INSERT INTO webhook_widgets (id, tenant_id, name, created_at) VALUES (?, ?, ?, ?) RETURNING *'),
      widgets: db.prepare('SELECT * FROM webhook_widgets WHERE tenant_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
      widgetCount: db.prepare('SELECT COUNT(*) AS n FROM webhook_widgets WHERE tenant_id = ?'),
      widget: db.prepare('SELECT * FROM webhook_widgets WHERE tenant_id = ? AND id = ?'),
      widgetById: db.prepare('SELECT * FROM webhook_widgets WHERE id = ?'),
      insertKey: db.prepare('INSERT INTO webhook_widget_keys (id, widget_id, token_hash, preview, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *'),
      keys: db.prepare('SELECT * FROM webhook_widget_keys WHERE widget_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?'),
      liveKeys: db.prepare('SELECT COUNT(*) AS n FROM webhook_widget_keys WHERE widget_id = ? AND revoked_at IS NULL'),
      revokeKey: db.prepare('UPDATE webhook_widget_keys SET revoked_at = ? WHERE widget_id = ? AND id = ? AND revoked_at IS NULL'),
      keyByHash: db.prepare(
        'SELECT w.* FROM webhook_widget_keys k JOIN webhook_widgets w ON w.id = k.widget_id WHERE k.token_hash = ? AND k.revoked_at IS NULL',
      ),
      insertEndpoint: db.prepare(
        `INSERT INTO webhook_endpoints (id, widget_id, url, secret, events, enabled, disabled_reason, disabled_at, signature_scheme, rate_limit, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ),
      endpoints: db.prepare('SELECT * FROM webhook_endpoints WHERE widget_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
      countEndpoints: db.prepare('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE widget_id = ?'),
      endpoint: db.prepare('SELECT * FROM webhook_endpoints WHERE widget_id = ? AND id = ?'),
      enabledEndpoints: db.prepare('SELECT id, events FROM webhook_endpoints WHERE widget_id = ? AND enabled = 1 ORDER BY seq'),
      setFields: db.prepare('UPDATE webhook_endpoints SET url = ?, events = ?, signature_scheme = ?, rate_limit = ?, updated_at = ? WHERE id = ?'),
      enable: db.prepare(
        'UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, disabled_at = NULL, failing_since = NULL, updated_at = ? WHERE id = ?',
      ),
      disable: db.prepare('UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ? WHERE id = ? AND enabled = 1'),
      // Not the ones held by a claim (the last ?: their seqs): each attempt under way records its own outcome.
      failPending: db.prepare(
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = ?, updated_at = ?
         WHERE endpoint_id = ? AND status = 'pending' AND seq NOT IN (SELECT value FROM json_each(?))`,
      ),
      deleteEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE widget_id = ? AND id = ?'),
      rotate: db.prepare(
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ? WHERE widget_id = ? AND id = ? RETURNING *`,
      ),
      claimOnce: db.prepare('INSERT OR IGNORE INTO webhook_once (widget_id, once_key, event_id, created_at) VALUES (?, ?, ?, ?)'),
      onceEvent: db.prepare('SELECT event_id FROM webhook_once WHERE widget_id = ? AND once_key = ?'),
      insertEvent: db.prepare('INSERT INTO webhook_events (id, widget_id, event, body, created_at) VALUES (?, ?, ?, ?, ?)'),
      // Blocked at once when an earlier delivery of its conversation to the endpoint is unfinished (the last ?s: order key, endpoint, order key).
      insertDelivery: db.prepare(
        `INSERT INTO webhook_deliveries (id, event_seq, endpoint_id, widget_id, event, status, next_attempt_at, order_key, created_at, updated_at, blocked)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ? IS NOT NULL AND EXISTS (
           SELECT 1 FROM webhook_deliveries INDEXED BY webhook_deliveries_order WHERE endpoint_id = ? AND order_key = ? AND status IN ('pending', 'inflight')))`,
      ),
      status: db.prepare('SELECT status FROM webhook_deliveries WHERE seq = ?'),
      // A delivery with an earlier unfinished one of its conversation to the same endpoint is blocked,
      // outside this index, until its predecessor finishes or it has waited the order bound (heldPast).
      due: db.prepare(claimable('webhook_deliveries_due', 0, true)),
      // The same with no endpoint to skip (a claim's first look): the skip list costs more to set up than the scan.
      dueAny: db.prepare(claimable('webhook_deliveries_due', 0, false)),
      // The same from a place in claim order on (the claim floor: every due row before it is held), in two parts.
      dueSame: db.prepare(claimable('webhook_deliveries_due', 0, true, 'same')),
      dueSameAny: db.prepare(claimable('webhook_deliveries_due', 0, false, 'same')),
      dueLater: db.prepare(claimable('webhook_deliveries_due', 0, true, 'later')),
      dueLaterAny: db.prepare(claimable('webhook_deliveries_due', 0, false, 'later')),
      // Changes when another connection commits: what this store knows of the due index is then stale.
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      // Blocked deliveries that have waited the order bound (at or before the cut): let go without their predecessor.
      heldPast: db.prepare(claimable('webhook_deliveries_blocked', 1, true)),
      heldPastAny: db.prepare(claimable('webhook_deliveries_blocked', 1, false)),
      // A finished delivery releases the earliest unfinished one of its conversation, if that one is blocked.
      // Read, then written only when blocked: an UPDATE … RETURNING builds a temporary table for its rows at every run.
      nextUnfinished: db.prepare(
        `SELECT seq, next_attempt_at, blocked FROM webhook_deliveries INDEXED BY webhook_deliveries_order
         WHERE endpoint_id = ? AND order_key = ? AND status IN ('pending', 'inflight') ORDER BY seq LIMIT 1`,
      ),
      unblock: db.prepare('UPDATE webhook_deliveries SET blocked = 0 WHERE seq = ?'),
      blocker: db.prepare(
        `SELECT id, status FROM webhook_deliveries INDEXED BY webhook_deliveries_order
         WHERE endpoint_id = ? AND order_key = ? AND seq < ? AND status IN ('pending', 'inflight') ORDER BY seq LIMIT 1`,
      ),
      setOrderNote: db.prepare('UPDATE webhook_deliveries SET order_note = ? WHERE seq = ?'),
      enabledCount: db.prepare('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE enabled = 1'),
      rates: db.prepare('SELECT id, rate_limit, rate_next_at FROM webhook_endpoints WHERE rate_limit IS NOT NULL'),
      spendRate: db.prepare('UPDATE webhook_endpoints SET rate_next_at = ? WHERE id = ?'),
      // What a claimed delivery sends; its endpoint's part is read once per claim (dueEndpoint), not joined into every row.
      dueRow: db.prepare(
        `SELECT d.id, d.event, d.attempts, d.created_at, d.order_note, d.status, d.blocked, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
         WHERE d.seq = ?`,
      ),
      dueEndpoint: db.prepare('SELECT url, secret, previous_secret, previous_secret_expires_at, signature_scheme FROM webhook_endpoints WHERE id = ?'),
      // The holder was checked in the lease table; no row changed: the delivery was deleted with its endpoint meanwhile.
      finishHeld: db.prepare(
        `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?, last_status_code = ?, last_error = ?, updated_at = ?,
           blocked = CASE WHEN ? = 'pending' THEN ${EARLIER_UNFINISHED} ELSE 0 END
         WHERE seq = ?`,
      ),
      // The same for a first attempt that succeeded: the attempt goes into the row (no attempt row).
      finishFirst: db.prepare(
        `UPDATE webhook_deliveries SET status = 'succeeded', attempts = attempts + 1, next_attempt_at = NULL, last_status_code = ?, last_error = NULL,
           updated_at = ?, blocked = 0, first_started_at = ?, first_duration_ms = ?, first_status_code = ?, first_response_excerpt = ?
         WHERE seq = ?`,
      ),
      // By the held seq: the delivery is not looked up by its id.
      insertAttempt: db.prepare(
        `INSERT INTO webhook_attempts (delivery_seq, started_at, duration_ms, status_code, response_excerpt, error, outcome)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      endpointWidget: db.prepare('SELECT widget_id FROM webhook_endpoints WHERE id = ?'),
      endpointState: db.prepare('SELECT enabled, failing_since FROM webhook_endpoints WHERE id = ?'),
      endpointOk: db.prepare('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL'),
      endpointFailing: db.prepare('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL'),
      // After deliveries went back to pending (requeued, released, retried, recovered): those now behind an unfinished one wait blocked.
      reblockDue: db.prepare(
        `UPDATE webhook_deliveries INDEXED BY webhook_deliveries_due SET blocked = 1
         WHERE status = 'pending' AND blocked = 0 AND next_attempt_at = ? AND ${EARLIER_UNFINISHED}`,
      ),
      reblockAll: db.prepare(
        `UPDATE webhook_deliveries INDEXED BY webhook_deliveries_due SET blocked = 1 WHERE status = 'pending' AND blocked = 0 AND ${EARLIER_UNFINISHED}`,
      ),
      reblockConversation: db.prepare(
        `UPDATE webhook_deliveries INDEXED BY webhook_deliveries_order SET blocked = 1
         WHERE endpoint_id = ? AND order_key = (SELECT order_key FROM webhook_deliveries WHERE id = ?) AND status IN ('pending', 'inflight')
           AND blocked = 0 AND status = 'pending' AND ${EARLIER_UNFINISHED}`,
      ),
      reblockEndpoint: db.prepare(
        `UPDATE webhook_deliveries SET blocked = 1 WHERE endpoint_id = ? AND created_at >= ? AND status = 'pending' AND blocked = 0 AND ${EARLIER_UNFINISHED}`,
      ),
      requeue: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL WHERE status = 'inflight'`,
      ),
      // Claims handed back (the ?: their seqs): due at once. Their rows never left 'pending', so their blocked flags still hold.
      releaseHeld: db.prepare(
        `UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ? WHERE status = 'pending' AND seq IN (SELECT value FROM json_each(?))`,
      ),
      // The earliest pending ones of each index, in claim order, for nextDueAt to pass over those held by a claim.
      firstDue: db.prepare(`SELECT seq, next_attempt_at FROM webhook_deliveries INDEXED BY webhook_deliveries_due
         WHERE status = 'pending' AND blocked = 0 ORDER BY next_attempt_at, seq LIMIT ?`),
      firstBlocked: db.prepare(`SELECT seq, next_attempt_at FROM webhook_deliveries INDEXED BY webhook_deliveries_blocked
         WHERE status = 'pending' AND blocked = 1 ORDER BY next_attempt_at, seq LIMIT ?`),
      // The status filter as stored, then (when not null) whether the row is among the held seqs: 'inflight' is a held 'pending' row.
      deliveriesPage: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
         WHERE d.endpoint_id = ? AND d.seq < ? AND (? IS NULL OR d.status = ?)
           AND (? IS NULL OR (d.seq IN (SELECT value FROM json_each(?))) = ?) ORDER BY d.seq DESC LIMIT ?`,
      ),
      delivery: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq WHERE d.endpoint_id = ? AND d.id = ?`,
      ),
      attempts: db.prepare(attemptLogSql('?', '?')),
      payload: db.prepare('SELECT e.body FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq WHERE d.seq = ?'),
      countFailed: db.prepare(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'failed' AND created_at >= ?`),
      signingKeys: db.prepare(
        'SELECT * FROM webhook_signing_keys WHERE retires_at IS NULL OR retires_at > ? ORDER BY retires_at IS NOT NULL, retires_at DESC, seq DESC',
      ),
      insertSigningKey: db.prepare('INSERT INTO webhook_signing_keys (id, seed, public_key, created_at) VALUES (?, ?, ?, ?)'),
      retireActive: db.prepare('UPDATE webhook_signing_keys SET retires_at = ? WHERE retires_at IS NULL'),
      opsEndpoint: db.prepare(
        `SELECT p.* FROM webhook_tenant_settings s JOIN webhook_endpoints p ON p.id = s.operational_endpoint_id
         JOIN webhook_widgets w ON w.id = p.widget_id WHERE s.tenant_id = ? AND w.tenant_id = s.tenant_id`,
      ),
      tenantEndpoint: db.prepare('SELECT p.id FROM webhook_endpoints p JOIN webhook_widgets w ON w.id = p.widget_id WHERE w.tenant_id = ? AND p.id = ?'),
      setOps: db.prepare(
        `INSERT INTO webhook_tenant_settings (tenant_id, operational_endpoint_id, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (tenant_id) DO UPDATE SET operational_endpoint_id = excluded.operational_endpoint_id, updated_at = excluded.updated_at`,
      ),
      // The operational endpoint of the disabled endpoint's tenant, when it is enabled and another endpoint.
      opsFor: db.prepare(
        `SELECT p.id, x.widget_id, x.url, x.failing_since FROM webhook_endpoints x JOIN webhook_widgets w ON w.id = x.widget_id
         JOIN webhook_tenant_settings s ON s.tenant_id = w.tenant_id JOIN webhook_endpoints p ON p.id = s.operational_endpoint_id
         JOIN webhook_widgets pw ON pw.id = p.widget_id AND pw.tenant_id = w.tenant_id
         WHERE x.id = ? AND p.enabled = 1 AND p.id <> x.id`,
      ),
      disabledEndpoints: db.prepare(
        `SELECT p.id, p.widget_id, p.url, p.disabled_reason, p.disabled_at FROM webhook_endpoints p JOIN webhook_widgets w ON w.id = p.widget_id
         WHERE w.tenant_id = ? AND p.enabled = 0 AND p.disabled_reason IN ('failing', 'gone') ORDER BY p.disabled_at DESC, p.seq DESC LIMIT 100`,
      ),
      retry: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', blocked = 0, next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND id = ? AND status IN ('failed', 'succeeded', 'pending')`,
      ),
      pruneDeliveries: db.prepare(
        `DELETE FROM webhook_deliveries WHERE seq IN (
           SELECT seq FROM webhook_deliveries WHERE status IN ('succeeded', 'failed') AND updated_at < ? LIMIT 2000)`,
      ),
      pruneEvents: db.prepare(
        `DELETE FROM webhook_events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = webhook_events.seq)`,
      ),
      recover: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', blocked = 0, next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'failed' AND created_at >= ?`,
      ),
    };
  }

  /**
   * Runs `fn` in a transaction (a savepoint inside a caller's), through one wrapper made once:
   * better-sqlite3's transaction() builds its wrappers at every call (about 5 µs), which the
   * claims, the recorded results and the enqueues paid each time.
   */
  private tx<T>(fn: () => T): T {
    return this.inTransaction(fn) as T;
  }

  /** The claims on this store's database, shared with every store of this process on the same file. */
  private leases(): LeaseTable {
    if (this.leaseKey === null) {
      let t = memoryLeaseTables.get(this.db);
      if (!t) memoryLeaseTables.set(this.db, (t = new LeaseTable()));
      return t;
    }
    let t = leaseTables.get(this.leaseKey);
    if (!t) leaseTables.set(this.leaseKey, (t = new LeaseTable()));
    return t;
  }

  /** Forgets a file's table once no claim is left in it, so the files a process opened and closed leave nothing behind. */
  /** Up to `want` due rows at or after the floor, in claim order, optionally skipping a JSON list of endpoints. */
  private dueFrom(floor: ClaimPlace | null, at: number, skipping: string | null, want: number): DueCandidate[] {
    const q = this.q;
    if (floor === null) return (skipping === null ? q.dueAny.all(at, want) : q.due.all(at, skipping, want)) as DueCandidate[];
    // Every row before the floor is held: nothing is free unless the floor's millisecond is due.
    if (floor.at > at) return [];
    const same = (skipping === null ? q.dueSameAny.all(floor.at, floor.seq, want) : q.dueSame.all(floor.at, skipping, floor.seq, want)) as DueCandidate[];
    if (same.length >= want || floor.at === at) return same;
    const later = (
      skipping === null ? q.dueLaterAny.all(floor.at, at, want - same.length) : q.dueLater.all(floor.at, at, skipping, want - same.length)
    ) as DueCandidate[];
    return same.length === 0 ? later : same.concat(later);
  }

  /** A row of this store's writing is due at this place (or will be, unless it waits blocked): the claim floor moves back to it if it comes first. */
  private dueAgain(at: number, seq: number): void {
    const floor = this.cursor.place;
    if (floor !== null && before({ at, seq }, floor)) this.cursor.place = { at, seq };
  }

  /** Another connection committed since this one last looked (PRAGMA data_version): what the connection keeps is read again. */
  private syncVersion(): void {
    const c = this.cursor;
    const version = this.q.dataVersion.get() as number;
    if (version === c.version) return;
    c.version = version;
    this.dropFloor();
    c.endpoints.clear();
    c.states.clear();
  }

  /** Forgets the claim floor and the rows it remembers: the next claim reads the due index from its start. */
  private dropFloor(): void {
    const c = this.cursor;
    c.place = null;
    c.enabled = null;
    if (c.knownSeqs.size > 0) {
      c.known.clear();
      c.knownSeqs.clear();
    }
  }

  /**
   * An endpoint's pending deliveries leave the due index (failed when it is disabled, or deleted
   * with it): the floor is dropped with what it remembers (rare; dropping is right even if the
   * change is rolled back, where forgetting only that endpoint's rows would lose them).
   */
  private forgetEndpoint(id: string): void {
    this.cursor.endpoints.delete(id);
    this.cursor.states.delete(id);
    this.dropFloor();
  }

  /** Remembers a due row that no claim holds; false when KNOWN_DUE_MAX rows are remembered already. */
  private remember(r: DueCandidate): boolean {
    const c = this.cursor;
    if (c.knownSeqs.has(r.seq)) return true;
    if (c.knownSeqs.size >= KNOWN_DUE_MAX) return false;
    let list = c.known.get(r.endpoint_id);
    if (list === undefined) c.known.set(r.endpoint_id, (list = []));
    // Usually last in claim order (the scan remembers rows as it reads them); an unblocked successor goes back to its place.
    if (list.length === 0 || precedes(list[list.length - 1]!, r)) list.push(r);
    else {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (precedes(list[mid]!, r)) lo = mid + 1;
        else hi = mid;
      }
      list.splice(lo, 0, r);
    }
    c.knownSeqs.add(r.seq);
    return true;
  }

  /**
   * A finished delivery's successor left the blocked index for the due index (inside recordResults'
   * transaction): before the floor it is remembered, or the floor moves back to it. One a claim
   * holds (let go past the order bound while blocked) is left to its claim.
   */
  private unblocked(r: DueCandidate, held: LeaseTable): void {
    const floor = this.cursor.place;
    if (floor === null || held.bySeq.has(r.seq) || !before({ at: r.next_attempt_at, seq: r.seq }, floor)) return;
    if (!this.remember(r)) this.cursor.place = { at: r.next_attempt_at, seq: r.seq };
  }

  /**
   * Takes up to `want` remembered rows of the endpoints with room (`roomOf`), oldest first across
   * endpoints, and forgets the ones taken. A remembered row the claim finds held is forgotten too.
   */
  private takeKnown(want: number, roomOf: (endpointId: string) => number, take: (r: DueCandidate) => boolean): void {
    const c = this.cursor;
    const picks: DueCandidate[] = [];
    for (const [endpointId, list] of c.known) {
      let n = roomOf(endpointId);
      for (let i = 0; i < list.length && n > 0; i++) {
        if (!c.knownSeqs.has(list[i]!.seq)) continue;
        picks.push(list[i]!);
        n--;
      }
    }
    if (picks.length === 0) return;
    if (picks.length > want) picks.sort((a, b) => (precedes(a, b) ? -1 : 1));
    const held = this.leases();
    let got = 0;
    for (const r of picks) {
      if (got >= want) break;
      if (held.bySeq.has(r.seq)) c.knownSeqs.delete(r.seq);
      else if (take(r)) {
        c.knownSeqs.delete(r.seq);
        got++;
      }
    }
    // What was taken is a head of each endpoint's list.
    for (const [endpointId, list] of c.known) {
      let k = 0;
      while (k < list.length && !c.knownSeqs.has(list[k]!.seq)) k++;
      if (k === list.length) c.known.delete(endpointId);
      else if (k > 0) list.splice(0, k);
    }
  }

  private tidy(t: LeaseTable): void {
    if (this.leaseKey !== null && t.bySeq.size === 0 && leaseTables.get(this.leaseKey) === t) leaseTables.delete(this.leaseKey);
  }

  /** The delivery as its row says, `inflight` while a claim holds it. */
  private viewOf(r: DeliveryRow) {
    const d = deliveryOf(r);
    if (r.status === 'pending' && this.leases().bySeq.has(r.seq)) d.status = 'inflight';
    return d;
  }

  createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }): Promise<CreatedWidget>;
  createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }, maxWidgets: number): Promise<CreatedWidget | 'limit'>;
  async createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }, maxWidgets = Infinity) {
    return this.db.transaction(() => {
      if (Number.isFinite(maxWidgets) && (this.q.widgetCount.get(tenantId) as { n: number }).n >= maxWidgets) return 'limit' as const;
      const at = this.now();
      const widget = widgetOf(this.q.insertWidget.get(newId('wid_'), tenantId, name, at) as WidgetRow);
      const k = keyOf(this.q.insertKey.get(newId('wk_'), widget.id, key.hash, key.preview, at) as KeyRow);
      return { widget, key: k };
    })();
  }

  async listWidgets(tenantId: TenantId, page?: PageRead) {
    return pageMapped(this.q.widgets.all(tenantId, page?.from ?? 0, pageRows(page) ?? -1) as (WidgetRow & { seq: number })[], page, widgetOf);
  }

  async countWidgets(tenantId: TenantId) {
    return (this.q.widgetCount.get(tenantId) as { n: number }).n;
  }

  async getWidget(tenantId: TenantId, id: string) {
    const r = this.q.widget.get(tenantId, id) as WidgetRow | undefined;
    return r ? widgetOf(r) : null;
  }

  async findWidget(id: string) {
    const r = this.q.widgetById.get(id) as WidgetRow | undefined;
    return r ? widgetOf(r) : null;
  }

  createWidgetKey(widgetId: WidgetId, key: { hash: string; preview: string }): Promise<WidgetKeyRecord>;
  createWidgetKey(widgetId: WidgetId, key: { hash: string; preview: string }, maxLive: number): Promise<WidgetKeyRecord | 'limit'>;
  async createWidgetKey(widgetId: WidgetId, key: { hash: string; preview: string }, maxLive = Infinity): Promise<WidgetKeyRecord | 'limit'> {
    return this.db
      .transaction((): WidgetKeyRecord | 'limit' => {
        if ((this.q.liveKeys.get(widgetId) as { n: number }).n >= maxLive) return 'limit';
        return keyOf(this.q.insertKey.get(newId('wk_'), widgetId, key.hash, key.preview, this.now()) as KeyRow);
      })
      .immediate();
  }

  async listWidgetKeys(widgetId: WidgetId, page?: PageRead) {
    const from = page?.from ?? 0;
    return pageByPlace(this.q.keys.all(widgetId, pageRows(page) ?? -1, from) as KeyRow[], page, keyOf);
  }

  async revokeWidgetKey(widgetId: WidgetId, keyId: string) {
    return this.q.revokeKey.run(this.now(), widgetId, keyId).changes > 0;
  }

  async findWidgetKey(hash: string) {
    const r = this.q.keyByHash.get(hash) as WidgetRow | undefined;
    return r ? widgetOf(r) : null;
  }

  createEndpoint(widgetId: WidgetId, input: EndpointInput): Promise<EndpointRecord>;
  createEndpoint(widgetId: WidgetId, input: EndpointInput, maxPerWidget: number): Promise<EndpointRecord | 'limit'>;
  async createEndpoint(widgetId: WidgetId, input: EndpointInput, maxPerWidget = Infinity): Promise<EndpointRecord | 'limit'> {
    this.cursor.enabled = null;
    return this.db
      .transaction((): EndpointRecord | 'limit' => {
        if ((this.q.countEndpoints.get(widgetId) as { n: number }).n >= maxPerWidget) return 'limit';
        const at = this.now();
        const row = this.q.insertEndpoint.get(
          newId('ep_'),
          widgetId,
          input.url,
          input.secret,
          JSON.stringify(input.events),
          input.enabled ? 1 : 0,
          input.enabled ? null : 'user',
          input.enabled ? null : at,
          input.signatureScheme ?? 'hmac',
          input.rateLimit ?? null,
          at,
          at,
        ) as EndpointRow;
        return endpointOf(row);
      })
      .immediate();
  }

  async listEndpoints(widgetId: WidgetId, page?: PageRead) {
    return pageMapped(this.q.endpoints.all(widgetId, page?.from ?? 0, pageRows(page) ?? -1) as (EndpointRow & { seq: number })[], page, endpointOf);
  }

  async getEndpoint(widgetId: WidgetId, id: string) {
    const r = this.q.endpoint.get(widgetId, id) as EndpointRow | undefined;
    return r ? endpointOf(r) : null;
  }

  async updateEndpoint(widgetId: WidgetId, id: EndpointId, patch: EndpointPatch) {
    this.cursor.endpoints.delete(id);
    this.cursor.states.delete(id);
    this.cursor.enabled = null;
    return this.db.transaction(() => {
      const current = this.q.endpoint.get(widgetId, id) as EndpointRow | undefined;
      if (!current) return null;
      const at = this.now();
      this.q.setFields.run(
        patch.url ?? current.url,
        patch.events ? JSON.stringify(patch.events) : current.events,
        patch.signatureScheme ?? current.signature_scheme,
        patch.rateLimit === undefined ? current.rate_limit : patch.rateLimit,
        at,
        id,
      );
      if (patch.enabled === true && current.enabled === 0) this.q.enable.run(at, id);
      if (patch.enabled === false && current.enabled === 1) this.disableEndpoint(id, 'user', at);
      return endpointOf(this.q.endpoint.get(widgetId, id) as EndpointRow);
    })();
  }

  private disableEndpoint(id: string, reason: DisabledReason, at: number): boolean {
    if (this.q.disable.run(reason, at, at, id).changes === 0) return false;
    this.forgetEndpoint(id);
    this.q.failPending.run(`endpoint disabled (${reason})`, at, id, this.leases().seqs(id));
    return true;
  }

  async deleteEndpoint(widgetId: WidgetId, id: string) {
    this.forgetEndpoint(id);
    return this.q.deleteEndpoint.run(widgetId, id).changes > 0;
  }

  async rotateSecret(widgetId: WidgetId, id: EndpointId, secret: string, previousExpiresAt: number) {
    this.cursor.endpoints.delete(id);
    const r = this.q.rotate.get(previousExpiresAt, secret, this.now(), widgetId, id) as EndpointRow | undefined;
    return r ? endpointOf(r) : null;
  }

  async enqueue(widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string, orderKey?: string | null): Promise<Enqueued> {
    return this.enqueueNow(widgetId, event, body, onceKey, after, orderKey);
  }

  /**
   * `enqueue` without the promise: inside a caller's transaction on the same database (a
   * conversation's change and its event) it is a savepoint of that transaction, so both commit
   * or neither does.
   */
  enqueueNow(widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string, orderKey?: string | null): Enqueued {
    const order = orderKey === undefined ? conversationOf(body) : orderKey;
    return this.tx((): Enqueued => {
      const at = this.now();
      const eventId = newId<EventId>('evt_');
      if (after !== undefined && this.q.onceEvent.get(widgetId, after) === undefined) return { eventId, deliveries: [], duplicate: false, unmet: true };
      if (onceKey !== undefined && this.q.claimOnce.run(widgetId, onceKey, eventId, at).changes === 0) {
        const first = this.q.onceEvent.get(widgetId, onceKey) as { event_id: string };
        return { eventId: first.event_id as EventId, deliveries: [], duplicate: true };
      }
      const eventSeq = this.q.insertEvent.run(eventId, widgetId, event, body, at).lastInsertRowid;
      const deliveries: DeliveryId[] = [];
      for (const ep of this.q.enabledEndpoints.all(widgetId) as { id: string; events: string }[]) {
        if (!(JSON.parse(ep.events) as string[]).includes(event)) continue;
        const id = newId<DeliveryId>('dlv_');
        this.dueAgain(at, Number(this.q.insertDelivery.run(id, eventSeq, ep.id, widgetId, event, at, order, at, at, order, ep.id, order).lastInsertRowid));
        deliveries.push(id);
      }
      return { eventId, deliveries, duplicate: false };
    });
  }

  async claimDue(lease: Lease, limit: number, room: EndpointRoom, options: ClaimOptions = {}) {
    const held = this.leases();
    // A read transaction (one snapshot for the due query and the rows it names): a claim writes
    // nothing to the file, unless it spends a rate-limited endpoint's slot or notes an order bypass.
    try {
      return this.tx((): Claimed => {
        const at = this.now();
        const until = at + lease.ms;
        const hold = options.orderHoldMs ?? 0;
        const out: Claimed = [];
        /** Where each claimed delivery stands in claim order (parallel to out). */
        const places: DueCandidate[] = [];
        const taken = new Map<string, number>();
        const saturated: string[] = [];
        // Usually none: one look per claim at the endpoints with a rate limit, not one per endpoint.
        const rates = new Map(
          (this.q.rates.all() as { id: string; rate_limit: number; rate_next_at: number | null }[]).map((r) => [
            r.id,
            { limit: r.rate_limit, next: r.rate_next_at ?? 0 },
          ]),
        );
        const skip = (endpointId: string) => {
          if (!saturated.includes(endpointId)) saturated.push(endpointId);
        };
        const c = this.cursor;
        const endpointParts = c.endpoints;
        /** Takes a due row for this claim; false when its endpoint has no room left (or waits for its rate). */
        const take = (r: DueCandidate, lapsed?: HeldLease, known?: true): boolean => {
          if (roomFor(room, r.endpoint_id) - (taken.get(r.endpoint_id) ?? 0) <= 0) {
            skip(r.endpoint_id);
            return false;
          }
          const rate = rates.get(r.endpoint_id);
          if (rate && rate.next > at) {
            out.throttledUntil = Math.min(out.throttledUntil ?? Infinity, rate.next);
            skip(r.endpoint_id);
            return false;
          }
          const row = this.q.dueRow.get(r.seq) as (DueDeliveryRow & { status: string; blocked: number }) | undefined;
          // A remembered row is due unless a write path failed to say otherwise: then nothing remembered is trusted.
          if (known && (row === undefined || row.status !== 'pending' || row.blocked !== 0)) {
            this.dropFloor();
            return false;
          }
          if (rate) {
            rate.next = Math.max(rate.next, at) + rateSpacingMs(rate.limit);
            this.q.spendRate.run(rate.next, r.endpoint_id);
          }
          // Held to the bound and let go: say which earlier delivery it passed.
          if (hold > 0 && r.order_key !== null && r.next_attempt_at <= at - hold) {
            const blocker = this.q.blocker.get(r.endpoint_id, r.order_key, r.seq) as { id: string; status: string } | undefined;
            if (blocker) {
              row!.order_note = orderNote(blocker, hold);
              this.q.setOrderNote.run(row!.order_note, r.seq);
            }
          }
          let endpoint = endpointParts.get(r.endpoint_id);
          if (endpoint === undefined) {
            endpoint = this.q.dueEndpoint.get(r.endpoint_id) as DueEndpointRow;
            if (endpointParts.size >= ENDPOINT_CACHE_MAX) endpointParts.clear();
            endpointParts.set(r.endpoint_id, endpoint);
          }
          const d = dueOfParts(r.endpoint_id, row!, endpoint);
          if (rate) d.slotAt = at;
          if (lapsed) {
            lapsed.owner = lease.owner;
            lapsed.until = until;
          } else
            held.add({
              seq: r.seq,
              id: d.id,
              endpointId: r.endpoint_id,
              orderKey: r.order_key,
              dueAt: r.next_attempt_at,
              attempts: d.attempts,
              owner: lease.owner,
              until,
            });
          taken.set(r.endpoint_id, (taken.get(r.endpoint_id) ?? 0) + 1);
          out.push(d);
          places.push(r);
          return true;
        };
        this.syncVersion();
        /** Claims that run, from the floor on in claim order: the scan reads them again and passes over them. */
        const liveFrom = (floor: ClaimPlace | null) => {
          let n = 0;
          for (const h of held.bySeq.values()) if (h.until > at && (floor === null || h.dueAt > floor.at || (h.dueAt === floor.at && h.seq >= floor.seq))) n++;
          return n;
        };
        // Lapsed claims first: their deliveries were due before anything pending now. One whose row
        // is no longer pending (failed or deleted with its endpoint meanwhile) is simply forgotten.
        for (const h of held.bySeq.values()) {
          if (out.length >= limit) break;
          if (h.until > at) continue;
          if ((this.q.status.get(h.seq) as { status: string } | undefined)?.status !== 'pending') held.delete(h);
          else take({ seq: h.seq, endpoint_id: h.endpointId, order_key: h.orderKey, next_attempt_at: h.dueAt }, h);
        }
        const lapsedCount = out.length;
        // Then the remembered rows of the endpoints with room, oldest first: they come before every row the scan reads.
        if (c.knownSeqs.size > 0 && out.length < limit)
          this.takeKnown(
            limit - out.length,
            (endpointId) => roomFor(room, endpointId) - (taken.get(endpointId) ?? 0),
            (r) => take(r, undefined, true),
          );
        // The due index from the floor on, a chunk at a time: each row read is taken, or passed over
        // (held, or remembered already), or remembered for when its endpoint has room, and the floor
        // follows. It stops at the end of what is due, when the claim is full, when every enabled
        // endpoint is at its limit, or when KNOWN_DUE_MAX rows are remembered (the floor stops there).
        // Endpoints with no room left in this claim, and whether any enabled one may still take a row.
        const full = () => {
          let n = 0;
          for (const id of room.busy.keys()) if (roomFor(room, id) - (taken.get(id) ?? 0) <= 0) n++;
          for (const [id, t] of taken) if (!room.busy.has(id) && room.each - t <= 0) n++;
          return n;
        };
        const someRoom = () => {
          const enabled = (c.enabled ??= (this.q.enabledCount.get() as { n: number }).n);
          // An enabled endpoint with nothing in flight and nothing taken has room: no need to count the full ones.
          return room.busy.size + taken.size < enabled || full() < enabled;
        };
        let moving = true;
        for (let chunk = 0; out.length < limit && someRoom(); chunk++) {
          const floor = c.place;
          const want = limit - out.length + 8 + liveFrom(floor);
          const rows = this.dueFrom(floor, at, null, want);
          // Usually none: a blocked delivery is due here only once it has waited the order bound (or order is off).
          const blocked = chunk === 0 ? (this.q.heldPastAny.all(at - hold, want) as DueCandidate[]) : [];
          const fromBlocked = blocked.length === 0 ? null : new Set(blocked.map((r) => r.seq));
          for (const r of blocked.length === 0 ? rows : mergeDue(rows, blocked)) {
            // The claim is full: the rows after are left for the next one to read (remembering them costs about as much).
            if (out.length >= limit) break;
            if (fromBlocked?.has(r.seq)) {
              if (!held.bySeq.has(r.seq)) take(r);
              continue;
            }
            const passed = held.bySeq.has(r.seq) || c.knownSeqs.has(r.seq) || take(r) || this.remember(r);
            if (!passed) moving = false;
            else if (moving) c.place = { at: r.next_attempt_at, seq: r.seq + 1 };
          }
          if (rows.length < want || !moving) break;
        }
        // Past the rows the floor could not remember (KNOWN_DUE_MAX): the caller says how often to
        // read past the endpoints at their limit to find those behind them.
        if (!moving && options.reachPast && out.length < limit && saturated.length > 0 && someRoom()) {
          const want = limit - out.length + 8 + liveFrom(c.place);
          const skipping = JSON.stringify(saturated);
          const rows = this.dueFrom(c.place, at, skipping, want);
          const blocked = this.q.heldPast.all(at - hold, skipping, want) as DueCandidate[];
          for (const r of blocked.length === 0 ? rows : mergeDue(rows, blocked)) {
            if (out.length >= limit) break;
            if (held.bySeq.has(r.seq) || c.knownSeqs.has(r.seq)) continue;
            take(r);
          }
        }
        // Remembered rows come first in claim order unless a retry or an enqueue moved the floor back before them.
        return inClaimOrder(out, places, lapsedCount);
      });
    } catch (err) {
      // What the floor remembers may name rows this rolled-back transaction changed: read them again.
      this.dropFloor();
      throw err;
    }
  }

  async recordResults(owner: string, results: AttemptResult[], disableAfterMs: number) {
    const held = this.leases();
    // Claims are let go as their results are written; put back if the transaction fails, so they lapse (and are claimed again) as before.
    const ended: HeldLease[] = [];
    try {
      return this.tx(() => {
        const at = this.now();
        const disabled: EndpointId[] = [];
        let lost = 0;
        this.syncVersion();
        // Each endpoint's state is read once and kept current as results change it (gone with a deleted endpoint: read each time).
        const states = this.cursor.states;
        for (const r of results) {
          // The holder check: a result whose claim lapsed and passed to another (or was handed back) is not written.
          const h = held.byId.get(r.deliveryId);
          if (h === undefined || h.owner !== owner) {
            lost++;
            continue;
          }
          held.delete(h);
          ended.push(h);
          let state = states.get(r.endpointId);
          if (state === undefined) {
            state = this.q.endpointState.get(r.endpointId) as EndpointState | undefined;
            if (state !== undefined) {
              if (states.size >= ENDPOINT_CACHE_MAX) states.clear();
              states.set(r.endpointId, state);
            }
          }
          const a = r.attempt;
          const next = nextState(r, state?.enabled === 1);
          // A first attempt that succeeded is written into the delivery's row, not as an attempt row.
          const first = h.attempts === 0 && a.outcome === 'succeeded' && next.status === 'succeeded';
          const changes = first
            ? this.q.finishFirst.run(a.statusCode, at, a.startedAt, a.durationMs, a.statusCode, a.responseExcerpt, h.seq).changes
            : this.q.finishHeld.run(next.status, next.status === 'pending' ? next.at : null, a.statusCode, a.error, at, next.status, h.seq).changes;
          if (changes === 0) {
            lost++;
            continue;
          }
          if (next.status === 'pending') this.dueAgain(next.at, h.seq);
          else if (h.orderKey !== null) {
            const freed = this.q.nextUnfinished.get(h.endpointId, h.orderKey) as { seq: number; next_attempt_at: number; blocked: number } | undefined;
            if (freed !== undefined && freed.blocked === 1) {
              this.q.unblock.run(freed.seq);
              this.unblocked({ seq: freed.seq, endpoint_id: h.endpointId, order_key: h.orderKey, next_attempt_at: freed.next_attempt_at }, held);
            }
          }
          if (!first) this.q.insertAttempt.run(h.seq, a.startedAt, a.durationMs, a.statusCode, a.responseExcerpt, a.error, a.outcome);
          if (!state) continue;
          if (r.endpoint === 'success') {
            if (state.failing_since !== null) {
              this.q.endpointOk.run(r.endpointId);
              state.failing_since = null;
            }
          } else {
            const since = state.failing_since ?? a.startedAt;
            if (state.failing_since === null) {
              this.q.endpointFailing.run(a.startedAt, r.endpointId);
              state.failing_since = a.startedAt;
            }
            const reason: 'gone' | 'failing' | null = r.endpoint === 'gone' ? 'gone' : at - since >= disableAfterMs ? 'failing' : null;
            if (reason && this.disableEndpoint(r.endpointId, reason, at)) {
              state.enabled = 0;
              disabled.push(r.endpointId);
              this.tellOperations(r, reason, since, at);
            }
          }
        }
        return { disabled, lost };
      });
    } catch (err) {
      for (const h of ended) held.add(h);
      // The floor may remember successors, and the breaker states changes, of this rolled-back transaction: read them again.
      this.dropFloor();
      this.cursor.states.clear();
      throw err;
    } finally {
      this.tidy(held);
    }
  }

  /** Queues `endpoint.disabled` to the tenant's operational endpoint, if set (inside recordResults' transaction). */
  private tellOperations(r: AttemptResult, reason: 'gone' | 'failing', failingSince: number, at: number): void {
    const ops = this.q.opsFor.get(r.endpointId) as { id: string; widget_id: string; url: string } | undefined;
    if (!ops) return;
    const body = endpointDisabledBody(ops.widget_id, {
      endpoint_id: r.endpointId,
      url: ops.url,
      reason,
      disabled_at: new Date(at).toISOString(),
      failing_since: new Date(failingSince).toISOString(),
      last_status_code: r.attempt.statusCode,
      last_error: r.attempt.error,
    });
    const eventSeq = this.q.insertEvent.run(newId<EventId>('evt_'), ops.widget_id, 'endpoint.disabled', body, at).lastInsertRowid;
    const opsWidget = (this.q.endpointWidget.get(ops.id) as { widget_id: string }).widget_id;
    this.dueAgain(
      at,
      Number(
        this.q.insertDelivery.run(newId<DeliveryId>('dlv_'), eventSeq, ops.id, opsWidget, 'endpoint.disabled', at, null, at, at, null, ops.id, null)
          .lastInsertRowid,
      ),
    );
  }

  async releaseLeases(owner: string, ids?: readonly DeliveryId[]) {
    const held = this.leases();
    const only = ids === undefined ? null : new Set<string>(ids);
    const mine = [...held.bySeq.values()].filter((h) => h.owner === owner && (only === null || only.has(h.id)));
    if (mine.length === 0) return 0;
    const at = this.now();
    this.dropFloor();
    this.q.releaseHeld.run(at, at, JSON.stringify(mine.map((h) => h.seq)));
    for (const h of mine) held.delete(h);
    this.tidy(held);
    return mine.length;
  }

  async requeueInflight() {
    const held = this.leases();
    const at = this.now();
    const claims = [...held.bySeq.values()];
    this.dropFloor();
    return this.db.transaction(() => {
      // Rows a version that wrote its claims to the file left in flight, then this process's own claims.
      const n = this.q.requeue.run(at, at).changes;
      if (claims.length > 0) this.q.releaseHeld.run(at, at, JSON.stringify(claims.map((h) => h.seq)));
      for (const h of claims) held.delete(h);
      this.tidy(held);
      // Every pending delivery, not only those requeued: rows copied in by migrate-store carry no flag of their own.
      this.q.reblockAll.run();
      return n + claims.length;
    })();
  }

  async nextDueAt() {
    const held = this.leases();
    const first = (q: Database.Statement) =>
      (q.all(held.bySeq.size + 1) as { seq: number; next_attempt_at: number }[]).find((r) => !held.bySeq.has(r.seq))?.next_attempt_at ?? null;
    const a = first(this.q.firstDue);
    const b = first(this.q.firstBlocked);
    return a === null ? b : b === null ? a : Math.min(a, b);
  }

  async listDeliveries(endpointId: EndpointId, options: { limit: number; before: number | null; status?: DeliveryStatus }) {
    const status = options.status ?? null;
    // A claim's row is stored 'pending': 'inflight' asks for the held pending rows, 'pending' for the others.
    const stored = status === 'inflight' ? 'pending' : status;
    const heldFilter = status === 'inflight' ? 1 : status === 'pending' ? 0 : null;
    const rows = this.q.deliveriesPage.all(
      endpointId,
      options.before ?? Number.MAX_SAFE_INTEGER,
      stored,
      stored,
      heldFilter,
      heldFilter === null ? '[]' : this.leases().seqs(endpointId),
      heldFilter,
      options.limit + 1,
    ) as DeliveryRow[];
    const more = rows.length > options.limit;
    const page = rows.slice(0, options.limit);
    return { data: page.map((r) => this.viewOf(r)), nextCursor: more ? page[page.length - 1]!.seq : null };
  }

  async getDelivery(endpointId: EndpointId, id: string) {
    const r = this.q.delivery.get(endpointId, id) as DeliveryRow | undefined;
    if (!r) return null;
    const attemptLog = (this.q.attempts.all(r.seq, r.seq) as AttemptRow[]).map((a) => attemptOf(r.id as DeliveryId, a));
    const payload = (this.q.payload.get(r.seq) as { body: string }).body;
    return { ...this.viewOf(r), payload, attemptLog };
  }

  async retryDelivery(endpointId: EndpointId, id: DeliveryId) {
    return this.db.transaction(() => {
      const current = this.q.delivery.get(endpointId, id) as DeliveryRow | undefined;
      if (!current) return null;
      if (current.status === 'inflight' || this.leases().bySeq.has(current.seq)) return 'inflight' as const;
      const at = this.now();
      this.dropFloor();
      this.q.retry.run(at, at, endpointId, id);
      this.q.reblockConversation.run(endpointId, id);
      return this.viewOf(this.q.delivery.get(endpointId, id) as DeliveryRow);
    })();
  }

  async prune(before: number) {
    let deliveries = 0;
    // In slices, so the writer lock is never held for long.
    for (;;) {
      const n = this.q.pruneDeliveries.run(before).changes;
      deliveries += n;
      if (n < 2000) break;
    }
    return { deliveries, events: this.q.pruneEvents.run(before).changes };
  }

  async countFailed(endpointId: EndpointId, since: number) {
    return (this.q.countFailed.get(endpointId, since) as { n: number }).n;
  }

  async signingKeys() {
    return (this.q.signingKeys.all(this.now()) as SigningKeyRow[]).map(signingKeyOf);
  }

  async ensureSigningKey(key: { seed: string; publicKey: string }) {
    return this.db
      .transaction(() => {
        const at = this.now();
        const live = (this.q.signingKeys.all(at) as SigningKeyRow[]).map(signingKeyOf);
        if (live.some((k) => k.retiresAt === null)) return live;
        this.q.insertSigningKey.run(newId('whk_'), key.seed, key.publicKey, at);
        return (this.q.signingKeys.all(at) as SigningKeyRow[]).map(signingKeyOf);
      })
      .immediate();
  }

  async rotateSigningKey(key: { seed: string; publicKey: string }, retiresAt: number) {
    return this.db
      .transaction(() => {
        const at = this.now();
        this.q.retireActive.run(retiresAt);
        this.q.insertSigningKey.run(newId('whk_'), key.seed, key.publicKey, at);
        return (this.q.signingKeys.all(at) as SigningKeyRow[]).map(signingKeyOf);
      })
      .immediate();
  }

  async getOperationalEndpoint(tenantId: TenantId) {
    const r = this.q.opsEndpoint.get(tenantId) as EndpointRow | undefined;
    return r ? endpointOf(r) : null;
  }

  async setOperationalEndpoint(tenantId: TenantId, endpointId: string | null) {
    return this.db.transaction(() => {
      if (endpointId !== null && !this.q.tenantEndpoint.get(tenantId, endpointId)) return false;
      this.q.setOps.run(tenantId, endpointId, this.now());
      return true;
    })();
  }

  async disabledEndpoints(tenantId: TenantId) {
    return (
      this.q.disabledEndpoints.all(tenantId) as {
        id: string;
        widget_id: string;
        url: string;
        disabled_reason: 'failing' | 'gone';
        disabled_at: number | null;
      }[]
    ).map((r) => ({
      endpointId: r.id as EndpointId,
      widgetId: r.widget_id as WidgetId,
      url: r.url,
      reason: r.disabled_reason,
      disabledAt: r.disabled_at ?? 0,
    }));
  }

  async recoverFailed(endpointId: EndpointId, since: number) {
    const at = this.now();
    this.dropFloor();
    return this.db.transaction(() => {
      const n = this.q.recover.run(at, at, endpointId, since).changes;
      if (n > 0) this.q.reblockEndpoint.run(endpointId, since);
      return n;
    })();
  }
}

/** Pending deliveries due at or before a time, blocked or not, in claim order, optionally skipping a JSON list of endpoints. */
function claimable(index: string, blocked: 0 | 1, skipEndpoints: boolean, from?: 'same' | 'later'): string {
  const skip = skipEndpoints ? ' AND endpoint_id NOT IN (SELECT value FROM json_each(?))' : '';
  // From a place in claim order, in two parts the index seeks to exactly: the rest of the place's
  // millisecond (next_attempt_at = ? AND seq >= ?), then the later ones up to now. (A row-value
  // range would seek on next_attempt_at alone and read every row of that millisecond again.)
  const due = from === 'same' ? 'next_attempt_at = ?' : from === 'later' ? 'next_attempt_at > ? AND next_attempt_at <= ?' : 'next_attempt_at <= ?';
  const seq = from === 'same' ? ' AND seq >= ?' : '';
  return `SELECT seq, endpoint_id, order_key, next_attempt_at FROM webhook_deliveries INDEXED BY ${index}
         WHERE status = 'pending' AND blocked = ${blocked} AND ${due}${skip}${seq}
         ORDER BY next_attempt_at, seq LIMIT ?`;
}

/** True when place a comes before place b in claim order. */
function before(a: ClaimPlace, b: ClaimPlace): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** The claimed deliveries after the first `from` (the lapsed claims, first by design) in claim order, as they usually already are. */
function inClaimOrder(out: Claimed, places: DueCandidate[], from: number): Claimed {
  let sorted = true;
  for (let i = from + 1; i < places.length && sorted; i++) sorted = precedes(places[i - 1]!, places[i]!);
  if (sorted) return out;
  const order = places.map((_, i) => i).slice(from);
  order.sort((a, b) => (precedes(places[a]!, places[b]!) ? -1 : 1));
  const again: Claimed = out.slice(0, from);
  for (const i of order) again.push(out[i]!);
  if (out.throttledUntil !== undefined) again.throttledUntil = out.throttledUntil;
  return again;
}

/** True when due row a comes before due row b in claim order. */
function precedes(a: DueCandidate, b: DueCandidate): boolean {
  return a.next_attempt_at < b.next_attempt_at || (a.next_attempt_at === b.next_attempt_at && a.seq < b.seq);
}
