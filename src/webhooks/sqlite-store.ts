import type { Db } from '../store/sqlite.js';
import { migrate } from '../store/sqlite.js';
import type { TenantId } from '../identity/types.js';
import { newId } from './ids.js';
import {
  roomFor,
  type AttemptResult,
  type CreatedWidget,
  type EndpointInput,
  type EndpointPatch,
  type EndpointRoom,
  type Enqueued,
  type WebhookStore,
} from './store.js';
import type { Lease } from '../store/lease.js';
import {
  attemptOf,
  DELIVERY_COLUMNS,
  deliveryOf,
  dueOf,
  endpointOf,
  keyOf,
  nextState,
  widgetOf,
  type AttemptRow,
  type DeliveryRow,
  type DueRow,
  type EndpointRow,
  type KeyRow,
  type WidgetRow,
} from './rows.js';
import type {
  DeliveryId,
  DeliveryStatus,
  DisabledReason,
  DueDelivery,
  EndpointId,
  EndpointRecord,
  EventId,
  EventType,
  WidgetId,
  WidgetKeyRecord,
} from './types.js';

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
];

export class SqliteWebhookStore implements WebhookStore {
  private readonly q;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db, 'webhooks', MIGRATIONS);
    this.q = {
      insertWidget: db.prepare('INSERT INTO webhook_widgets (id, tenant_id, name, created_at) VALUES (?, ?, ?, ?) RETURNING *'),
      widgets: db.prepare('SELECT * FROM webhook_widgets WHERE tenant_id = ? ORDER BY seq'),
      widget: db.prepare('SELECT * FROM webhook_widgets WHERE tenant_id = ? AND id = ?'),
      widgetById: db.prepare('SELECT * FROM webhook_widgets WHERE id = ?'),
      insertKey: db.prepare('INSERT INTO webhook_widget_keys (id, widget_id, token_hash, preview, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *'),
      keys: db.prepare('SELECT * FROM webhook_widget_keys WHERE widget_id = ? ORDER BY created_at, id'),
      liveKeys: db.prepare('SELECT COUNT(*) AS n FROM webhook_widget_keys WHERE widget_id = ? AND revoked_at IS NULL'),
      revokeKey: db.prepare('UPDATE webhook_widget_keys SET revoked_at = ? WHERE widget_id = ? AND id = ? AND revoked_at IS NULL'),
      keyByHash: db.prepare(
        'SELECT k.widget_id, w.tenant_id FROM webhook_widget_keys k JOIN webhook_widgets w ON w.id = k.widget_id WHERE k.token_hash = ? AND k.revoked_at IS NULL',
      ),
      insertEndpoint: db.prepare(
        `INSERT INTO webhook_endpoints (id, widget_id, url, secret, events, enabled, disabled_reason, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ),
      endpoints: db.prepare('SELECT * FROM webhook_endpoints WHERE widget_id = ? ORDER BY seq'),
      countEndpoints: db.prepare('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE widget_id = ?'),
      endpoint: db.prepare('SELECT * FROM webhook_endpoints WHERE widget_id = ? AND id = ?'),
      enabledEndpoints: db.prepare('SELECT id, events FROM webhook_endpoints WHERE widget_id = ? AND enabled = 1 ORDER BY seq'),
      setUrlEvents: db.prepare('UPDATE webhook_endpoints SET url = ?, events = ?, updated_at = ? WHERE id = ?'),
      enable: db.prepare('UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, failing_since = NULL, updated_at = ? WHERE id = ?'),
      disable: db.prepare('UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = 1'),
      failPending: db.prepare(
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'pending'`,
      ),
      deleteEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE widget_id = ? AND id = ?'),
      rotate: db.prepare(
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ? WHERE widget_id = ? AND id = ? RETURNING *`,
      ),
      claimOnce: db.prepare('INSERT OR IGNORE INTO webhook_once (widget_id, once_key, event_id, created_at) VALUES (?, ?, ?, ?)'),
      onceEvent: db.prepare('SELECT event_id FROM webhook_once WHERE widget_id = ? AND once_key = ?'),
      insertEvent: db.prepare('INSERT INTO webhook_events (id, widget_id, event, body, created_at) VALUES (?, ?, ?, ?, ?)'),
      insertDelivery: db.prepare(
        `INSERT INTO webhook_deliveries (id, event_seq, endpoint_id, widget_id, event, status, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      ),
      expired: db.prepare(
        `SELECT seq, endpoint_id FROM webhook_deliveries INDEXED BY webhook_deliveries_lease
         WHERE status = 'inflight' AND lease_until <= ? ORDER BY lease_until, seq LIMIT ?`,
      ),
      due: db.prepare(
        `SELECT seq, endpoint_id FROM webhook_deliveries INDEXED BY webhook_deliveries_due
         WHERE status = 'pending' AND next_attempt_at <= ? AND endpoint_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY next_attempt_at, seq LIMIT ?`,
      ),
      dueRow: db.prepare(
        `SELECT d.seq, d.id, d.endpoint_id, d.event, d.attempts, d.created_at, e.body, p.url, p.secret, p.previous_secret, p.previous_secret_expires_at
         FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq JOIN webhook_endpoints p ON p.id = d.endpoint_id
         WHERE d.seq = ?`,
      ),
      lease: db.prepare(
        `UPDATE webhook_deliveries SET status = 'inflight', lease_owner = ?, lease_until = ?, updated_at = ?
         WHERE seq = ? AND (status = 'pending' OR (status = 'inflight' AND lease_until <= ?))`,
      ),
      holder: db.prepare(`SELECT lease_owner FROM webhook_deliveries WHERE id = ? AND status = 'inflight'`),
      insertAttempt: db.prepare(
        `INSERT INTO webhook_attempts (delivery_seq, started_at, duration_ms, status_code, response_excerpt, error, outcome)
         SELECT seq, ?, ?, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?`,
      ),
      finishDelivery: db.prepare(
        `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?, last_status_code = ?, last_error = ?, updated_at = ?,
           lease_owner = NULL, lease_until = NULL
         WHERE id = ?`,
      ),
      endpointState: db.prepare('SELECT enabled, failing_since FROM webhook_endpoints WHERE id = ?'),
      endpointOk: db.prepare('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL'),
      endpointFailing: db.prepare('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL'),
      requeue: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL WHERE status = 'inflight'`,
      ),
      release: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL
         WHERE status = 'inflight' AND lease_owner = ?`,
      ),
      nextDue: db.prepare(`SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`),
      deliveriesPage: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
         WHERE d.endpoint_id = ? AND d.seq < ? AND (? IS NULL OR d.status = ?) ORDER BY d.seq DESC LIMIT ?`,
      ),
      delivery: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq WHERE d.endpoint_id = ? AND d.id = ?`,
      ),
      attempts: db.prepare('SELECT * FROM webhook_attempts WHERE delivery_seq = ? ORDER BY seq'),
      retry: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND id = ? AND status IN ('failed', 'succeeded', 'pending')`,
      ),
      pruneDeliveries: db.prepare(
        `DELETE FROM webhook_deliveries WHERE seq IN (
           SELECT seq FROM webhook_deliveries WHERE status IN ('succeeded', 'failed') AND updated_at < ? LIMIT 2000)`,
      ),
      pruneEvents: db.prepare(
        `DELETE FROM webhook_events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = webhook_events.seq)`,
      ),
      recover: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'failed' AND created_at >= ?`,
      ),
    };
  }

  createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }): Promise<CreatedWidget>;
  createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }, maxWidgets: number): Promise<CreatedWidget | 'limit'>;
  async createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }, maxWidgets = Infinity) {
    return this.db.transaction(() => {
      if (Number.isFinite(maxWidgets) && (this.q.widgets.all(tenantId) as unknown[]).length >= maxWidgets) return 'limit' as const;
      const at = this.now();
      const widget = widgetOf(this.q.insertWidget.get(newId('wid_'), tenantId, name, at) as WidgetRow);
      const k = keyOf(this.q.insertKey.get(newId('wk_'), widget.id, key.hash, key.preview, at) as KeyRow);
      return { widget, key: k };
    })();
  }

  async listWidgets(tenantId: TenantId) {
    return (this.q.widgets.all(tenantId) as WidgetRow[]).map(widgetOf);
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

  async listWidgetKeys(widgetId: WidgetId) {
    return (this.q.keys.all(widgetId) as KeyRow[]).map(keyOf);
  }

  async revokeWidgetKey(widgetId: WidgetId, keyId: string) {
    return this.q.revokeKey.run(this.now(), widgetId, keyId).changes > 0;
  }

  async findWidgetKey(hash: string) {
    const r = this.q.keyByHash.get(hash) as { widget_id: string; tenant_id: number } | undefined;
    return r ? { widgetId: r.widget_id as WidgetId, tenantId: r.tenant_id as TenantId } : null;
  }

  createEndpoint(widgetId: WidgetId, input: EndpointInput): Promise<EndpointRecord>;
  createEndpoint(widgetId: WidgetId, input: EndpointInput, maxPerWidget: number): Promise<EndpointRecord | 'limit'>;
  async createEndpoint(widgetId: WidgetId, input: EndpointInput, maxPerWidget = Infinity): Promise<EndpointRecord | 'limit'> {
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
          at,
          at,
        ) as EndpointRow;
        return endpointOf(row);
      })
      .immediate();
  }

  async listEndpoints(widgetId: WidgetId) {
    return (this.q.endpoints.all(widgetId) as EndpointRow[]).map(endpointOf);
  }

  async getEndpoint(widgetId: WidgetId, id: string) {
    const r = this.q.endpoint.get(widgetId, id) as EndpointRow | undefined;
    return r ? endpointOf(r) : null;
  }

  async updateEndpoint(widgetId: WidgetId, id: EndpointId, patch: EndpointPatch) {
    return this.db.transaction(() => {
      const current = this.q.endpoint.get(widgetId, id) as EndpointRow | undefined;
      if (!current) return null;
      const at = this.now();
      this.q.setUrlEvents.run(patch.url ?? current.url, patch.events ? JSON.stringify(patch.events) : current.events, at, id);
      if (patch.enabled === true && current.enabled === 0) this.q.enable.run(at, id);
      if (patch.enabled === false && current.enabled === 1) this.disableEndpoint(id, 'user', at);
      return endpointOf(this.q.endpoint.get(widgetId, id) as EndpointRow);
    })();
  }

  private disableEndpoint(id: string, reason: DisabledReason, at: number): boolean {
    if (this.q.disable.run(reason, at, id).changes === 0) return false;
    this.q.failPending.run(`endpoint disabled (${reason})`, at, id);
    return true;
  }

  async deleteEndpoint(widgetId: WidgetId, id: string) {
    return this.q.deleteEndpoint.run(widgetId, id).changes > 0;
  }

  async rotateSecret(widgetId: WidgetId, id: EndpointId, secret: string, previousExpiresAt: number) {
    const r = this.q.rotate.get(previousExpiresAt, secret, this.now(), widgetId, id) as EndpointRow | undefined;
    return r ? endpointOf(r) : null;
  }

  async enqueue(widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string): Promise<Enqueued> {
    return this.enqueueNow(widgetId, event, body, onceKey, after);
  }

  /**
   * `enqueue` without the promise: inside a caller's transaction on the same database (a
   * conversation's change and its event) it is a savepoint of that transaction, so both commit
   * or neither does.
   */
  enqueueNow(widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string): Enqueued {
    return this.db.transaction((): Enqueued => {
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
        this.q.insertDelivery.run(id, eventSeq, ep.id, widgetId, event, at, at, at);
        deliveries.push(id);
      }
      return { eventId, deliveries, duplicate: false };
    })();
  }

  async claimDue(lease: Lease, limit: number, room: EndpointRoom, options: { reachPast?: boolean } = {}) {
    return this.db.transaction(() => {
      const at = this.now();
      const until = at + lease.ms;
      const out: DueDelivery[] = [];
      const taken = new Map<string, number>();
      const saturated: string[] = [];
      const take = (r: { seq: number; endpoint_id: string }) => {
        if (roomFor(room, r.endpoint_id) - (taken.get(r.endpoint_id) ?? 0) <= 0) {
          if (!saturated.includes(r.endpoint_id)) saturated.push(r.endpoint_id);
          return;
        }
        if (this.q.lease.run(lease.owner, until, at, r.seq, at).changes === 0) return;
        taken.set(r.endpoint_id, (taken.get(r.endpoint_id) ?? 0) + 1);
        out.push(dueOf(this.q.dueRow.get(r.seq) as DueRow));
      };
      // Lapsed leases first: their deliveries were due before anything pending now.
      for (const r of this.q.expired.all(at, limit) as { seq: number; endpoint_id: string }[]) {
        if (out.length >= limit) break;
        take(r);
      }
      const rounds = options.reachPast ? 2 : 1;
      for (let round = 0; round < rounds && out.length < limit; round++) {
        const want = limit - out.length + 8;
        const rows = this.q.due.all(at, JSON.stringify(saturated), want) as { seq: number; endpoint_id: string }[];
        for (const r of rows) {
          if (out.length >= limit) break;
          take(r);
        }
        if (rows.length < want || saturated.length === 0) break;
      }
      return out;
    })();
  }

  async recordResults(owner: string, results: AttemptResult[], disableAfterMs: number) {
    return this.db.transaction(() => {
      const at = this.now();
      const disabled: EndpointId[] = [];
      let lost = 0;
      for (const r of results) {
        if ((this.q.holder.get(r.deliveryId) as { lease_owner: string | null } | undefined)?.lease_owner !== owner) {
          lost++;
          continue;
        }
        const a = r.attempt;
        this.q.insertAttempt.run(a.startedAt, a.durationMs, a.statusCode, a.responseExcerpt, a.error, a.outcome, r.deliveryId);
        const state = this.q.endpointState.get(r.endpointId) as { enabled: number; failing_since: number | null } | undefined;
        const next = nextState(r, state?.enabled === 1);
        this.q.finishDelivery.run(next.status, next.status === 'pending' ? next.at : null, a.statusCode, a.error, at, r.deliveryId);
        if (!state) continue;
        if (r.endpoint === 'success') this.q.endpointOk.run(r.endpointId);
        else {
          this.q.endpointFailing.run(a.startedAt, r.endpointId);
          const since = state.failing_since ?? a.startedAt;
          const reason: DisabledReason | null = r.endpoint === 'gone' ? 'gone' : at - since >= disableAfterMs ? 'failing' : null;
          if (reason && this.disableEndpoint(r.endpointId, reason, at)) disabled.push(r.endpointId);
        }
      }
      return { disabled, lost };
    })();
  }

  async releaseLeases(owner: string) {
    const at = this.now();
    return this.q.release.run(at, at, owner).changes;
  }

  async requeueInflight() {
    const at = this.now();
    return this.q.requeue.run(at, at).changes;
  }

  async nextDueAt() {
    return (this.q.nextDue.get() as { at: number | null }).at;
  }

  async listDeliveries(endpointId: EndpointId, options: { limit: number; before: number | null; status?: DeliveryStatus }) {
    const status = options.status ?? null;
    const rows = this.q.deliveriesPage.all(endpointId, options.before ?? Number.MAX_SAFE_INTEGER, status, status, options.limit + 1) as DeliveryRow[];
    const more = rows.length > options.limit;
    const page = rows.slice(0, options.limit);
    return { data: page.map(deliveryOf), nextCursor: more ? page[page.length - 1]!.seq : null };
  }

  async getDelivery(endpointId: EndpointId, id: string) {
    const r = this.q.delivery.get(endpointId, id) as DeliveryRow | undefined;
    if (!r) return null;
    const attemptLog = (this.q.attempts.all(r.seq) as AttemptRow[]).map((a) => attemptOf(r.id as DeliveryId, a));
    return { ...deliveryOf(r), attemptLog };
  }

  async retryDelivery(endpointId: EndpointId, id: DeliveryId) {
    return this.db.transaction(() => {
      const current = this.q.delivery.get(endpointId, id) as DeliveryRow | undefined;
      if (!current) return null;
      if (current.status === 'inflight') return 'inflight' as const;
      const at = this.now();
      this.q.retry.run(at, at, endpointId, id);
      return deliveryOf(this.q.delivery.get(endpointId, id) as DeliveryRow);
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

  async recoverFailed(endpointId: EndpointId, since: number) {
    const at = this.now();
    return this.q.recover.run(at, at, endpointId, since).changes;
  }
}
