import type { Db } from '../../store/sqlite.js';
import { migrate } from '../../store/sqlite.js';
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

/** The outbox of the webhook store on the same SQLite database: an event stored inside the caller's transaction. */
export interface SqliteOutbox {
  enqueueNow(widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string): Enqueued;
}

export const CONVERSATIONS_MIGRATIONS = [
  {
    version: 1,
    sql: `
      CREATE TABLE conversation_settings (
        widget_id TEXT PRIMARY KEY,
        settings TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE conversations (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        widget_id TEXT NOT NULL,
        visitor_id TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        handler TEXT NOT NULL,
        escalated INTEGER NOT NULL DEFAULT 0,
        escalated_at INTEGER,
        lead_at INTEGER,
        started_at INTEGER NOT NULL,
        last_activity_at INTEGER NOT NULL,
        ended_at INTEGER,
        ended_reason TEXT,
        message_count INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX conversations_widget ON conversations(widget_id, seq);
      CREATE INDEX conversations_open ON conversations(last_activity_at) WHERE status = 'open';
      CREATE INDEX conversations_ended ON conversations(ended_at) WHERE status = 'ended';
      CREATE INDEX conversations_started ON conversations(widget_id, started_at);
      CREATE TABLE conversation_messages (
        seq INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        response_ms INTEGER
      );
      CREATE INDEX conversation_messages_conversation ON conversation_messages(conversation_id, seq);
      CREATE TABLE conversation_leads (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        name TEXT,
        email TEXT,
        phone TEXT,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    // A message's number within its conversation (1, 2, …): the `seq` the visitor API shows and
    // takes back (`after=`, Last-Event-ID). The row's own seq counts every message of every
    // tenant, so showing it told any visitor how busy the whole installation was.
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

export class SqliteConversationStore implements ConversationStore {
  private readonly q;

  constructor(
    private readonly db: Db,
    private readonly outbox: SqliteOutbox,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db, 'conversations', CONVERSATIONS_MIGRATIONS);
    this.q = {
      settings: db.prepare('SELECT settings FROM conversation_settings WHERE widget_id = ?'),
      saveSettings: db.prepare(
        `INSERT INTO conversation_settings (widget_id, settings, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (widget_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
      ),
      addSettings: db.prepare('INSERT INTO conversation_settings (widget_id, settings, updated_at) VALUES (?, ?, ?) ON CONFLICT (widget_id) DO NOTHING'),
      replaceSettings: db.prepare('UPDATE conversation_settings SET settings = ?, updated_at = ? WHERE widget_id = ? AND settings = ?'),
      renameWidget: db.prepare('UPDATE webhook_widgets SET name = ? WHERE id = ?'),
      insert: db.prepare(
        `INSERT INTO conversations (id, widget_id, visitor_id, token_hash, status, handler, started_at, last_activity_at)
         VALUES (?, ?, ?, ?, 'open', 'agent', ?, ?) RETURNING ${CONVERSATION_COLUMNS}`,
      ),
      get: db.prepare(`${SELECT} WHERE id = ?`),
      byToken: db.prepare(`${SELECT} WHERE id = ? AND token_hash = ?`),
      bump: db.prepare(
        `UPDATE conversations SET message_count = message_count + 1, last_activity_at = ? WHERE id = ? AND status = 'open' AND message_count < ?
         RETURNING ${CONVERSATION_COLUMNS}`,
      ),
      insertMessage: db.prepare(
        `INSERT INTO conversation_messages (conversation_id, ordinal, role, text, created_at, response_ms)
         VALUES (?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM conversation_messages WHERE conversation_id = ?), ?, ?, ?, ?) RETURNING *`,
      ),
      messages: db.prepare('SELECT * FROM conversation_messages WHERE conversation_id = ? AND ordinal > ? ORDER BY ordinal LIMIT ?'),
      upsertLead: db.prepare(
        `INSERT INTO conversation_leads (conversation_id, name, email, phone, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (conversation_id) DO UPDATE SET name = excluded.name, email = excluded.email, phone = excluded.phone, created_at = excluded.created_at`,
      ),
      markLead: db.prepare(`UPDATE conversations SET lead_at = COALESCE(lead_at, ?), last_activity_at = ? WHERE id = ? AND status = 'open'`),
      lead: db.prepare('SELECT * FROM conversation_leads WHERE conversation_id = ?'),
      escalate: db.prepare(
        `UPDATE conversations SET escalated = 1, handler = 'human', escalated_at = COALESCE(escalated_at, ?), last_activity_at = ?
         WHERE id = ? AND status = 'open' AND escalated = 0`,
      ),
      takeOver: db.prepare(`UPDATE conversations SET handler = 'human' WHERE id = ? AND status = 'open' AND handler = 'agent'`),
      handBack: db.prepare(
        `UPDATE conversations SET handler = 'agent', escalated = 0 WHERE id = ? AND status = 'open' AND (handler = 'human' OR escalated = 1)`,
      ),
      end: db.prepare(`UPDATE conversations SET status = 'ended', ended_at = ?, ended_reason = ? WHERE id = ? AND status = 'open'`),
      idle: db.prepare(`SELECT id FROM conversations WHERE status = 'open' AND last_activity_at < ? ORDER BY last_activity_at LIMIT ?`),
      list: db.prepare(`${SELECT} WHERE widget_id = ? AND seq < ? AND (? IS NULL OR status = ?) ORDER BY seq DESC LIMIT ?`),
      remove: db.prepare('DELETE FROM conversations WHERE id = ?'),
      prune: db.prepare(`DELETE FROM conversations WHERE seq IN (SELECT seq FROM conversations WHERE status = 'ended' AND ended_at < ? LIMIT 2000)`),
      started: db.prepare('SELECT started_at AS at FROM conversations WHERE widget_id = ? AND started_at >= ? AND started_at < ?'),
      leads: db.prepare('SELECT lead_at AS at FROM conversations WHERE widget_id = ? AND lead_at >= ? AND lead_at < ?'),
      escalations: db.prepare('SELECT escalated_at AS at FROM conversations WHERE widget_id = ? AND escalated_at >= ? AND escalated_at < ?'),
      responses: db.prepare(
        `SELECT m.created_at AS at, m.response_ms AS ms FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
         WHERE c.widget_id = ? AND m.response_ms IS NOT NULL AND m.created_at >= ? AND m.created_at < ?`,
      ),
    };
  }

  private emit(c: ConversationRecord, e: ConversationEvent): number {
    return this.outbox.enqueueNow(c.widgetId, e.event, e.body, e.once, e.after).deliveries.length;
  }

  private row(id: string): (ConversationRecord & { seq: number }) | null {
    const r = this.q.get.get(id) as ConversationRow | undefined;
    return r ? conversationOf(r) : null;
  }

  async getSettings(widgetId: WidgetId) {
    const r = this.q.settings.get(widgetId) as { settings: string } | undefined;
    return r ? (JSON.parse(r.settings) as WidgetSettings) : null;
  }

  async saveSettings(widgetId: WidgetId, settings: WidgetSettings, expected?: WidgetSettings | null) {
    return this.db.transaction(() => {
      const text = JSON.stringify(settings);
      const at = this.now();
      if (expected === undefined) this.q.saveSettings.run(widgetId, text, at);
      else if (expected === null) {
        if (this.q.addSettings.run(widgetId, text, at).changes === 0) return false;
      } else if (this.q.replaceSettings.run(text, at, widgetId, JSON.stringify(expected)).changes === 0) return false;
      this.q.renameWidget.run(settings.name, widgetId);
      return true;
    })();
  }

  async start(input: NewConversation) {
    return this.db.transaction(() => {
      const at = this.now();
      const conversation = conversationOf(this.q.insert.get(input.id, input.widgetId, input.visitorId, input.tokenHash, at, at) as ConversationRow);
      const deliveries = this.emit(conversation, conversationEvent('conversation.started', conversation));
      return { conversation, deliveries };
    })();
  }

  async get(id: string) {
    return this.row(id);
  }

  async byToken(id: string, tokenHash: string) {
    const r = this.q.byToken.get(id, tokenHash) as ConversationRow | undefined;
    return r ? conversationOf(r) : null;
  }

  async append(id: ConversationId, role: MessageRole, text: string, responseMs: number | null, maxMessages: number): Promise<Appended> {
    return this.db.transaction((): Appended => {
      const at = this.now();
      const bumped = this.q.bump.get(at, id, maxMessages) as ConversationRow | undefined;
      if (!bumped) {
        const c = this.row(id);
        return { ok: false, reason: !c ? 'missing' : c.status === 'ended' ? 'ended' : 'full' };
      }
      const message = messageOf(this.q.insertMessage.get(id, id, role, text, at, responseMs) as MessageRow);
      return { ok: true, message, conversation: conversationOf(bumped) };
    })();
  }

  async messages(id: ConversationId, afterSeq: number, limit: number) {
    return (this.q.messages.all(id, afterSeq, limit) as MessageRow[]).map(messageOf);
  }

  async saveLead(id: ConversationId, lead: { name: string | null; email: string | null; phone: string | null }): Promise<Changed> {
    return this.db.transaction((): Changed => {
      const at = this.now();
      const before = this.row(id);
      if (!before || before.status !== 'open') return { changed: false, conversation: before, deliveries: 0 };
      this.q.upsertLead.run(id, lead.name, lead.email, lead.phone, at);
      this.q.markLead.run(at, at, id);
      const conversation = this.row(id)!;
      const deliveries = this.emit(
        conversation,
        conversationEvent('lead.captured', conversation, { has_email: lead.email !== null, has_phone: lead.phone !== null }),
      );
      return { changed: true, conversation, deliveries };
    })();
  }

  async lead(id: ConversationId) {
    const r = this.q.lead.get(id) as LeadRow | undefined;
    return r ? leadOf(r) : null;
  }

  async escalate(id: ConversationId, reason: string | null): Promise<Changed> {
    return this.db.transaction((): Changed => {
      const at = this.now();
      if (this.q.escalate.run(at, at, id).changes === 0) return { changed: false, conversation: this.row(id), deliveries: 0 };
      const conversation = this.row(id)!;
      const deliveries = this.emit(conversation, conversationEvent('escalation.triggered', conversation, reason === null ? {} : { reason }));
      return { changed: true, conversation, deliveries };
    })();
  }

  async setHandler(id: ConversationId, handler: 'agent' | 'human'): Promise<Changed> {
    const changed = (handler === 'human' ? this.q.takeOver : this.q.handBack).run(id).changes > 0;
    return { changed, conversation: this.row(id), deliveries: 0 };
  }

  async end(id: ConversationId, reason: EndedReason): Promise<Changed> {
    return this.db.transaction((): Changed => {
      const at = this.now();
      if (this.q.end.run(at, reason, id).changes === 0) return { changed: false, conversation: this.row(id), deliveries: 0 };
      const conversation = this.row(id)!;
      return { changed: true, conversation, deliveries: this.emit(conversation, endedEvent(conversation, reason, at)) };
    })();
  }

  async idle(before: number, limit: number) {
    return (this.q.idle.all(before, limit) as { id: string }[]).map((r) => r.id as ConversationId);
  }

  async list(query: ConversationListing) {
    const status = query.status ?? null;
    const rows = this.q.list.all(query.widgetId, query.before ?? Number.MAX_SAFE_INTEGER, status, status, query.limit + 1) as ConversationRow[];
    const more = rows.length > query.limit;
    const data = rows.slice(0, query.limit).map(conversationOf);
    return { data, nextCursor: more ? data[data.length - 1]!.seq : null };
  }

  async remove(id: ConversationId) {
    return this.q.remove.run(id).changes > 0;
  }

  async prune(before: number) {
    let n = 0;
    for (;;) {
      const k = this.q.prune.run(before).changes;
      n += k;
      if (k < 2000) return n;
    }
  }

  async analytics(widgetId: WidgetId, from: number, to: number) {
    const at = (rows: unknown[]) => (rows as { at: number }[]).map((r) => r.at);
    return buildDays(from, to, {
      started: at(this.q.started.all(widgetId, from, to)),
      leads: at(this.q.leads.all(widgetId, from, to)),
      escalations: at(this.q.escalations.all(widgetId, from, to)),
      responses: this.q.responses.all(widgetId, from, to) as { at: number; ms: number }[],
    });
  }
}
