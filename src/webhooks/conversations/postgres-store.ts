import { migratePg, queryCount, queryRow, queryRows, transaction, type PgMigration, type Pool, type Queryable } from '../../store/postgres.js';
import type { Enqueued } from '../store.js';
import type { EventType, WidgetId } from '../types.js';
import {
  buildDays,
  conversationEvent,
  endedEvent,
  type Appended,
  type Changed,
  type ConversationEvent,
  type ConversationListing,
  type ConversationStore,
  type NewConversation,
} from './store.js';
import { CONVERSATION_COLUMNS, conversationOf, leadOf, messageOf, type ConversationRow, type LeadRow, type MessageRow } from './rows.js';
import type { ConversationId, ConversationRecord, EndedReason, MessageRole, WidgetSettings } from './types.js';

/** The outbox of the webhook store on the same PostgreSQL database: an event stored on the caller's transaction. */
export interface PostgresOutbox {
  enqueueOn(c: Queryable, widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string): Promise<Enqueued>;
}

export const CONVERSATIONS_PG_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE conversation_settings (
        widget_id TEXT PRIMARY KEY,
        settings TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE TABLE conversations (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        widget_id TEXT NOT NULL,
        visitor_id TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        handler TEXT NOT NULL,
        escalated INTEGER NOT NULL DEFAULT 0,
        escalated_at BIGINT,
        lead_at BIGINT,
        started_at BIGINT NOT NULL,
        last_activity_at BIGINT NOT NULL,
        ended_at BIGINT,
        ended_reason TEXT,
        message_count INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX conversations_widget ON conversations(widget_id, seq);
      CREATE INDEX conversations_open ON conversations(last_activity_at) WHERE status = 'open';
      CREATE INDEX conversations_ended ON conversations(ended_at) WHERE status = 'ended';
      CREATE INDEX conversations_started ON conversations(widget_id, started_at);
      CREATE TABLE conversation_messages (
        seq BIGSERIAL PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        response_ms BIGINT
      );
      CREATE INDEX conversation_messages_conversation ON conversation_messages(conversation_id, seq);
      CREATE TABLE conversation_leads (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        name TEXT,
        email TEXT,
        phone TEXT,
        created_at BIGINT NOT NULL
      );
    `,
  },
  {
    // A message's number within its conversation: see the SQLite store's migration 2.
    version: 2,
    sql: `
      ALTER TABLE conversation_messages ADD COLUMN ordinal INTEGER NOT NULL DEFAULT 0;
      UPDATE conversation_messages SET ordinal = r.n
        FROM (SELECT seq, ROW_NUMBER() OVER (PARTITION BY conversation_id ORDER BY seq) AS n FROM conversation_messages) AS r
        WHERE conversation_messages.seq = r.seq;
      DROP INDEX conversation_messages_conversation;
      CREATE UNIQUE INDEX conversation_messages_ordinal ON conversation_messages(conversation_id, ordinal);
    `,
  },
];

const SELECT = `SELECT ${CONVERSATION_COLUMNS} FROM conversations`;

export class PostgresConversationStore implements ConversationStore {
  private constructor(
    private readonly pool: Pool,
    private readonly outbox: PostgresOutbox,
    private readonly now: () => number,
  ) {}

  static async open(pool: Pool, outbox: PostgresOutbox, now: () => number = Date.now): Promise<PostgresConversationStore> {
    await migratePg(pool, 'conversations', CONVERSATIONS_PG_MIGRATIONS);
    return new PostgresConversationStore(pool, outbox, now);
  }

  private async emit(c: Queryable, conv: ConversationRecord, e: ConversationEvent): Promise<number> {
    return (await this.outbox.enqueueOn(c, conv.widgetId, e.event, e.body, e.once, e.after)).deliveries.length;
  }

  private async row(q: Queryable, id: string) {
    const r = await queryRow<ConversationRow>(q, `${SELECT} WHERE id = $1`, [id]);
    return r ? conversationOf(r) : null;
  }

  async getSettings(widgetId: WidgetId) {
    const r = await queryRow<{ settings: string }>(this.pool, 'SELECT settings FROM conversation_settings WHERE widget_id = $1', [widgetId]);
    return r ? (JSON.parse(r.settings) as WidgetSettings) : null;
  }

  async saveSettings(widgetId: WidgetId, settings: WidgetSettings, expected?: WidgetSettings | null) {
    return transaction(this.pool, async (c) => {
      const text = JSON.stringify(settings);
      const at = this.now();
      if (expected === undefined)
        await c.query(
          `INSERT INTO conversation_settings (widget_id, settings, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (widget_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
          [widgetId, text, at],
        );
      else if (expected === null) {
        const added = await c.query(
          'INSERT INTO conversation_settings (widget_id, settings, updated_at) VALUES ($1, $2, $3) ON CONFLICT (widget_id) DO NOTHING',
          [widgetId, text, at],
        );
        if (added.rowCount === 0) return false;
      } else {
        const replaced = await c.query('UPDATE conversation_settings SET settings = $1, updated_at = $2 WHERE widget_id = $3 AND settings = $4', [
          text,
          at,
          widgetId,
          JSON.stringify(expected),
        ]);
        if (replaced.rowCount === 0) return false;
      }
      await c.query('UPDATE webhook_widgets SET name = $1 WHERE id = $2', [settings.name, widgetId]);
      return true;
    });
  }

  async start(input: NewConversation) {
    return transaction(this.pool, async (c) => {
      const at = this.now();
      const r = await queryRow<ConversationRow>(
        c,
        `INSERT INTO conversations (id, widget_id, visitor_id, token_hash, status, handler, started_at, last_activity_at)
         VALUES ($1, $2, $3, $4, 'open', 'agent', $5, $5) RETURNING ${CONVERSATION_COLUMNS}`,
        [input.id, input.widgetId, input.visitorId, input.tokenHash, at],
      );
      const conversation = conversationOf(r!);
      const deliveries = await this.emit(c, conversation, conversationEvent('conversation.started', conversation));
      return { conversation, deliveries };
    });
  }

  async get(id: string) {
    return this.row(this.pool, id);
  }

  async byToken(id: string, tokenHash: string) {
    const r = await queryRow<ConversationRow>(this.pool, `${SELECT} WHERE id = $1 AND token_hash = $2`, [id, tokenHash]);
    return r ? conversationOf(r) : null;
  }

  async append(id: ConversationId, role: MessageRole, text: string, responseMs: number | null, maxMessages: number): Promise<Appended> {
    return transaction(this.pool, async (c): Promise<Appended> => {
      const at = this.now();
      const bumped = await queryRow<ConversationRow>(
        c,
        `UPDATE conversations SET message_count = message_count + 1, last_activity_at = $1 WHERE id = $2 AND status = 'open' AND message_count < $3
         RETURNING ${CONVERSATION_COLUMNS}`,
        [at, id, maxMessages],
      );
      if (!bumped) {
        const conv = await this.row(c, id);
        return { ok: false, reason: !conv ? 'missing' : conv.status === 'ended' ? 'ended' : 'full' };
      }
      const m = await queryRow<MessageRow>(
        c,
        // The conversation's row, locked by the bump above, orders appends to one conversation:
        // each reads the numbers the one before it committed.
        `INSERT INTO conversation_messages (conversation_id, ordinal, role, text, created_at, response_ms)
         VALUES ($1, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM conversation_messages WHERE conversation_id = $1), $2, $3, $4, $5) RETURNING *`,
        [id, role, text, at, responseMs],
      );
      return { ok: true, message: messageOf(m!), conversation: conversationOf(bumped) };
    });
  }

  async messages(id: ConversationId, afterSeq: number, limit: number) {
    const rows = await queryRows<MessageRow>(
      this.pool,
      'SELECT * FROM conversation_messages WHERE conversation_id = $1 AND ordinal > $2::bigint ORDER BY ordinal LIMIT $3',
      [id, afterSeq, limit],
    );
    return rows.map(messageOf);
  }

  async saveLead(id: ConversationId, lead: { name: string | null; email: string | null; phone: string | null }): Promise<Changed> {
    return transaction(this.pool, async (c): Promise<Changed> => {
      const at = this.now();
      // The row lock orders this against an end of the same conversation.
      const before = await queryRow<ConversationRow>(c, `${SELECT} WHERE id = $1 FOR UPDATE`, [id]);
      if (!before || before.status !== 'open') return { changed: false, conversation: before ? conversationOf(before) : null, deliveries: 0 };
      await c.query(
        `INSERT INTO conversation_leads (conversation_id, name, email, phone, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (conversation_id) DO UPDATE SET name = excluded.name, email = excluded.email, phone = excluded.phone, created_at = excluded.created_at`,
        [id, lead.name, lead.email, lead.phone, at],
      );
      await c.query('UPDATE conversations SET lead_at = COALESCE(lead_at, $1), last_activity_at = $1 WHERE id = $2', [at, id]);
      const conversation = (await this.row(c, id))!;
      const deliveries = await this.emit(
        c,
        conversation,
        conversationEvent('lead.captured', conversation, { has_email: lead.email !== null, has_phone: lead.phone !== null }),
      );
      return { changed: true, conversation, deliveries };
    });
  }

  async lead(id: ConversationId) {
    const r = await queryRow<LeadRow>(this.pool, 'SELECT * FROM conversation_leads WHERE conversation_id = $1', [id]);
    return r ? leadOf(r) : null;
  }

  async escalate(id: ConversationId, reason: string | null): Promise<Changed> {
    return transaction(this.pool, async (c): Promise<Changed> => {
      const at = this.now();
      const n = await queryCount(
        c,
        `UPDATE conversations SET escalated = 1, handler = 'human', escalated_at = COALESCE(escalated_at, $1), last_activity_at = $1
         WHERE id = $2 AND status = 'open' AND escalated = 0`,
        [at, id],
      );
      if (n === 0) return { changed: false, conversation: await this.row(c, id), deliveries: 0 };
      const conversation = (await this.row(c, id))!;
      const deliveries = await this.emit(c, conversation, conversationEvent('escalation.triggered', conversation, reason === null ? {} : { reason }));
      return { changed: true, conversation, deliveries };
    });
  }

  async setHandler(id: ConversationId, handler: 'agent' | 'human'): Promise<Changed> {
    const n = await queryCount(
      this.pool,
      handler === 'human'
        ? `UPDATE conversations SET handler = 'human' WHERE id = $1 AND status = 'open' AND handler = 'agent'`
        : `UPDATE conversations SET handler = 'agent', escalated = 0 WHERE id = $1 AND status = 'open' AND (handler = 'human' OR escalated = 1)`,
      [id],
    );
    return { changed: n > 0, conversation: await this.row(this.pool, id), deliveries: 0 };
  }

  async end(id: ConversationId, reason: EndedReason): Promise<Changed> {
    return transaction(this.pool, async (c): Promise<Changed> => {
      const at = this.now();
      const n = await queryCount(c, `UPDATE conversations SET status = 'ended', ended_at = $1, ended_reason = $2 WHERE id = $3 AND status = 'open'`, [
        at,
        reason,
        id,
      ]);
      if (n === 0) return { changed: false, conversation: await this.row(c, id), deliveries: 0 };
      const conversation = (await this.row(c, id))!;
      return { changed: true, conversation, deliveries: await this.emit(c, conversation, endedEvent(conversation, reason, at)) };
    });
  }

  async idle(before: number, limit: number) {
    const rows = await queryRows<{ id: string }>(
      this.pool,
      `SELECT id FROM conversations WHERE status = 'open' AND last_activity_at < $1 ORDER BY last_activity_at LIMIT $2`,
      [before, limit],
    );
    return rows.map((r) => r.id as ConversationId);
  }

  async list(query: ConversationListing) {
    const rows = await queryRows<ConversationRow>(
      this.pool,
      `${SELECT} WHERE widget_id = $1 AND seq < $2 AND ($3::text IS NULL OR status = $3) ORDER BY seq DESC LIMIT $4`,
      [query.widgetId, query.before ?? Number.MAX_SAFE_INTEGER, query.status ?? null, query.limit + 1],
    );
    const more = rows.length > query.limit;
    const data = rows.slice(0, query.limit).map(conversationOf);
    return { data, nextCursor: more ? data[data.length - 1]!.seq : null };
  }

  async remove(id: ConversationId) {
    return (await queryCount(this.pool, 'DELETE FROM conversations WHERE id = $1', [id])) > 0;
  }

  async prune(before: number) {
    let n = 0;
    for (;;) {
      const k = await queryCount(
        this.pool,
        `DELETE FROM conversations WHERE seq IN (SELECT seq FROM conversations WHERE status = 'ended' AND ended_at < $1 LIMIT 2000)`,
        [before],
      );
      n += k;
      if (k < 2000) return n;
    }
  }

  async analytics(widgetId: WidgetId, from: number, to: number) {
    const at = async (column: string) =>
      (
        await queryRows<{ at: number }>(this.pool, `SELECT ${column} AS at FROM conversations WHERE widget_id = $1 AND ${column} >= $2 AND ${column} < $3`, [
          widgetId,
          from,
          to,
        ])
      ).map((r) => r.at);
    const responses = await queryRows<{ at: number; ms: number }>(
      this.pool,
      `SELECT m.created_at AS at, m.response_ms AS ms FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
       WHERE c.widget_id = $1 AND m.response_ms IS NOT NULL AND m.created_at >= $2 AND m.created_at < $3`,
      [widgetId, from, to],
    );
    return buildDays(from, to, { started: await at('started_at'), leads: await at('lead_at'), escalations: await at('escalated_at'), responses });
  }
}
