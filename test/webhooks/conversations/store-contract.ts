import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantId } from '../../../src/identity/types.js';
import { openWebhookStore } from '../../../src/webhooks/open-store.js';
import { openConversationStore } from '../../../src/webhooks/conversations/open-store.js';
import type { ConversationStore } from '../../../src/webhooks/conversations/store.js';
import type { WebhookStore } from '../../../src/webhooks/store.js';
import { defaultSettings, type ConversationId, type VisitorId } from '../../../src/webhooks/conversations/types.js';
import type { WidgetId } from '../../../src/webhooks/types.js';
import type { TestDatabase } from '../../helpers/databases.js';
import { migrate } from '../../../src/store/sqlite.js';
import { migratePg } from '../../../src/store/postgres.js';
import { CONVERSATIONS_MIGRATIONS } from '../../../src/webhooks/conversations/sqlite-store.js';
import { CONVERSATIONS_PG_MIGRATIONS } from '../../../src/webhooks/conversations/postgres-store.js';

const START = Date.UTC(2026, 0, 10, 12);
const T1 = 1 as TenantId;

interface Fixture {
  conversations: ConversationStore;
  webhooks: WebhookStore;
  widget: WidgetId;
  clock: { now: () => number; advance(ms: number): void };
  /** The bodies of every event queued for the widget's one endpoint, in order. */
  bodies(): Promise<Record<string, any>[]>;
}

async function withStores(open: () => Promise<TestDatabase>, body: (f: Fixture) => Promise<void>): Promise<void> {
  let t = START;
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  const db = await open();
  try {
    const webhooks = await openWebhookStore(db.database, clock.now);
    const conversations = await openConversationStore(db.database, webhooks, clock.now);
    const { widget } = await webhooks.createWidget(T1, 'w', { hash: 'h'.repeat(64), preview: 'bwk_x' });
    const ep = await webhooks.createEndpoint(widget.id, {
      url: 'https://example.com/hook',
      secret: 's',
      events: ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'],
      enabled: true,
    });
    const bodies = async () => {
      const page = await webhooks.listDeliveries(ep.id, { limit: 100, before: null });
      const out: Record<string, any>[] = [];
      for (const d of page.data.reverse()) {
        const due = await webhooks.getDelivery(ep.id, d.id);
        out.push({ event: due!.event });
      }
      return out;
    };
    await body({ conversations, webhooks, widget: widget.id, clock, bodies });
  } finally {
    await db.dispose();
  }
}

const conv = (n: number) => ({ id: `ses_c${n}` as ConversationId, visitorId: `vis_v${n}` as VisitorId, tokenHash: `t${n}` });

/** One suite, run on SQLite and on PostgreSQL: conversations, messages, leads, events in the same transaction. */
export function conversationStoreContract(name: string, open: () => Promise<TestDatabase>): void {
  describe(`conversation store contract: ${name}`, () => {
    test('a conversation starts with its conversation.started event; messages append up to the cap; the token finds it', async () => {
      await withStores(open, async ({ conversations: s, widget, bodies }) => {
        const { conversation, deliveries } = await s.start({ ...conv(1), widgetId: widget });
        assert.equal(deliveries, 1);
        assert.equal(conversation.status, 'open');
        assert.equal(conversation.handler, 'agent');
        assert.deepEqual(await bodies(), [{ event: 'conversation.started' }]);
        assert.equal((await s.byToken('ses_c1', 't1'))?.id, 'ses_c1');
        assert.equal(await s.byToken('ses_c1', 'wrong'), null);
        const a = await s.append(conversation.id, 'visitor', 'hello', null, 3);
        const b = await s.append(conversation.id, 'agent', 'hi', 40, 3);
        const c = await s.append(conversation.id, 'visitor', 'again', null, 3);
        assert.ok(a.ok && b.ok && c.ok);
        assert.ok(a.message.seq < b.message.seq && b.message.seq < c.message.seq);
        assert.deepEqual(await s.append(conversation.id, 'visitor', 'one too many', null, 3), { ok: false, reason: 'full' });
        assert.deepEqual(await s.append('ses_nope' as ConversationId, 'visitor', 'x', null, 3), { ok: false, reason: 'missing' });
        const all = await s.messages(conversation.id, 0, 10);
        assert.deepEqual(
          all.map((m) => [m.role, m.text, m.responseMs]),
          [
            ['visitor', 'hello', null],
            ['agent', 'hi', 40],
            ['visitor', 'again', null],
          ],
        );
        assert.deepEqual(
          (await s.messages(conversation.id, all[0]!.seq, 10)).map((m) => m.text),
          ['hi', 'again'],
        );
      });
    });

    test('messages are numbered 1, 2, … within their conversation, whatever other tenants and conversations store meanwhile', async () => {
      await withStores(open, async ({ conversations: s, webhooks, widget }) => {
        const other = await webhooks.createWidget(2 as TenantId, 'theirs', { hash: 'o'.repeat(64), preview: 'bwk_o' });
        const { conversation: a } = await s.start({ ...conv(20), widgetId: widget });
        const { conversation: b } = await s.start({ ...conv(21), widgetId: other.widget.id });
        const seqs: Record<string, number[]> = { a: [], b: [] };
        for (let i = 0; i < 3; i++) {
          for (const [name, c] of [
            ['a', a],
            ['b', b],
            ['b', b],
          ] as const) {
            const r = await s.append(c.id, i % 2 ? 'agent' : 'visitor', `${name}${i}`, null, 10);
            assert.ok(r.ok);
            seqs[name]!.push(r.message.seq);
          }
        }
        assert.deepEqual(seqs, { a: [1, 2, 3], b: [1, 2, 3, 4, 5, 6] });
        assert.deepEqual(
          (await s.messages(b.id, 4, 10)).map((m) => [m.seq, m.text]),
          [
            [5, 'b2'],
            [6, 'b2'],
          ],
        );
        assert.deepEqual(
          (await s.messages(a.id, 0, 2)).map((m) => m.seq),
          [1, 2],
        );
        // A removed conversation's numbers are its own: a new one starts from 1 again.
        await s.remove(a.id);
        const { conversation: c } = await s.start({ ...conv(22), widgetId: widget });
        const first = await s.append(c.id, 'visitor', 'new', null, 10);
        assert.ok(first.ok && first.message.seq === 1);
      });
    });

    test('migration 2 numbers the messages of a version-1 database within each conversation, in the order they were stored', async () => {
      const db = await open();
      try {
        const d = db.database;
        const rows: [number, string, string][] = [
          [10, 'ses_old1', 'a'],
          [11, 'ses_old2', 'x'],
          [12, 'ses_old1', 'b'],
          [15, 'ses_old2', 'y'],
          [16, 'ses_old1', 'c'],
        ];
        if (d.kind === 'sqlite') {
          migrate(d.db, 'conversations', CONVERSATIONS_MIGRATIONS.slice(0, 1));
          for (const id of ['ses_old1', 'ses_old2'])
            d.db
              .prepare(
                `INSERT INTO conversations (id, widget_id, visitor_id, token_hash, status, handler, started_at, last_activity_at, message_count) VALUES (?, 'wid_x', 'vis_x', 't', 'open', 'agent', 1, 1, ?)`,
              )
              .run(id, id === 'ses_old1' ? 3 : 2);
          for (const [seq, c, text] of rows)
            d.db.prepare(`INSERT INTO conversation_messages (seq, conversation_id, role, text, created_at) VALUES (?, ?, 'visitor', ?, 1)`).run(seq, c, text);
        } else {
          await migratePg(d.pool, 'conversations', CONVERSATIONS_PG_MIGRATIONS.slice(0, 1));
          for (const id of ['ses_old1', 'ses_old2'])
            await d.pool.query(
              `INSERT INTO conversations (id, widget_id, visitor_id, token_hash, status, handler, started_at, last_activity_at, message_count) VALUES ($1, 'wid_x', 'vis_x', 't', 'open', 'agent', 1, 1, $2)`,
              [id, id === 'ses_old1' ? 3 : 2],
            );
          for (const [seq, c, text] of rows)
            await d.pool.query(`INSERT INTO conversation_messages (seq, conversation_id, role, text, created_at) VALUES ($1, $2, 'visitor', $3, 1)`, [
              seq,
              c,
              text,
            ]);
        }
        const webhooks = await openWebhookStore(d, () => START);
        const s = await openConversationStore(d, webhooks, () => START);
        assert.deepEqual(
          (await s.messages('ses_old1' as ConversationId, 0, 10)).map((m) => [m.seq, m.text]),
          [
            [1, 'a'],
            [2, 'b'],
            [3, 'c'],
          ],
        );
        assert.deepEqual(
          (await s.messages('ses_old2' as ConversationId, 1, 10)).map((m) => [m.seq, m.text]),
          [[2, 'y']],
        );
        const next = await s.append('ses_old2' as ConversationId, 'agent', 'z', 5, 10);
        assert.ok(next.ok && next.message.seq === 3);
      } finally {
        await db.dispose();
      }
    });

    test('lead, escalation and end each queue their event once; the end only once and nothing after it', async () => {
      await withStores(open, async ({ conversations: s, widget, bodies, webhooks }) => {
        const { conversation: c } = await s.start({ ...conv(2), widgetId: widget });
        const lead = await s.saveLead(c.id, { name: 'Ann', email: 'ann@example.com', phone: null });
        assert.equal(lead.changed, true);
        assert.equal(lead.conversation?.hasLead, true);
        assert.deepEqual(await s.lead(c.id), { conversationId: c.id, name: 'Ann', email: 'ann@example.com', phone: null, createdAt: START });
        assert.equal((await s.escalate(c.id, 'asked for a person')).changed, true);
        assert.equal((await s.escalate(c.id, 'again')).changed, false, 'escalated already: no second event');
        assert.equal((await s.get(c.id))?.handler, 'human');
        assert.equal((await s.setHandler(c.id, 'agent')).changed, true);
        assert.equal((await s.get(c.id))?.escalated, false);
        assert.equal((await s.end(c.id, 'visitor_left')).changed, true);
        assert.equal((await s.end(c.id, 'inactivity')).changed, false);
        assert.equal((await s.saveLead(c.id, { name: null, email: null, phone: '555 123 4567' })).changed, false);
        assert.deepEqual(await s.append(c.id, 'visitor', 'late', null, 10), { ok: false, reason: 'ended' });
        assert.deepEqual(
          (await bodies()).map((b) => b.event),
          ['conversation.started', 'lead.captured', 'escalation.triggered', 'conversation.ended'],
        );
        // The injection route's once-only rule sees the conversation's own events.
        const again = await webhooks.enqueue(widget, 'conversation.ended', '{}', `conversation.ended:${c.id}`, `conversation.started:${c.id}`);
        assert.equal(again.duplicate, true);
        const ended = await s.get(c.id);
        assert.equal(ended?.endedReason, 'visitor_left');
      });
    });

    test('the lead.captured body carries has_email and has_phone, never the address or number', async () => {
      await withStores(open, async ({ conversations: s, widget, webhooks }) => {
        const { conversation: c } = await s.start({ ...conv(3), widgetId: widget });
        await s.saveLead(c.id, { name: 'Bo', email: 'bo@example.org', phone: '+44 20 7946 0958' });
        const claimed = await webhooks.claimDue({ owner: 'x', ms: 60_000 }, 10, { each: Infinity, busy: new Map() });
        const lead = claimed.map((d) => JSON.parse(d.body)).find((b) => b.event === 'lead.captured');
        assert.deepEqual(lead, {
          event: 'lead.captured',
          widget_id: widget,
          data: { conversation_id: c.id, visitor_id: c.visitorId, has_email: true, has_phone: true },
        });
        assert.ok(!claimed.some((d) => d.body.includes('bo@example.org') || d.body.includes('7946')));
      });
    });

    test('idle conversations are found by their last activity; prune removes those that ended before the cut, with their messages', async () => {
      await withStores(open, async ({ conversations: s, widget, clock }) => {
        const { conversation: a } = await s.start({ ...conv(4), widgetId: widget });
        clock.advance(60_000);
        const { conversation: b } = await s.start({ ...conv(5), widgetId: widget });
        await s.append(b.id, 'visitor', 'hi', null, 10);
        assert.deepEqual(await s.idle(START + 30_000, 10), [a.id]);
        await s.end(a.id, 'inactivity');
        clock.advance(86_400_000);
        assert.equal(await s.prune(START + 120_000), 1);
        assert.equal(await s.get(a.id), null);
        assert.ok(await s.get(b.id));
        assert.equal(await s.remove(b.id), true);
        assert.deepEqual(await s.messages(b.id, 0, 10), []);
      });
    });

    test('settings are saved against the settings they were made from: a change that landed since is never overwritten', async () => {
      await withStores(open, async ({ conversations: s, webhooks, widget }) => {
        const base = defaultSettings('Shop');
        const a = { ...base, greeting: 'from a' };
        const b = { ...base, name: 'Shop b', color: '#000000' };
        assert.equal(await s.saveSettings(widget, a, null), true, 'the first save of none');
        assert.equal(await s.saveSettings(widget, b, null), false, 'another was saved first');
        assert.deepEqual(await s.getSettings(widget), a);
        assert.equal(await s.saveSettings(widget, b, base), false, 'made from settings no longer stored');
        assert.deepEqual(await s.getSettings(widget), a);
        assert.notEqual((await webhooks.getWidget(T1, widget))?.name, 'Shop b', 'the widget is not renamed either');
        const stored = await s.getSettings(widget);
        assert.equal(await s.saveSettings(widget, { ...stored!, ...b, greeting: 'from a' }, stored), true);
        assert.deepEqual(await s.getSettings(widget), { ...b, greeting: 'from a' });
        assert.equal((await webhooks.getWidget(T1, widget))?.name, 'Shop b');
      });
    });

    test('settings round-trip and rename the widget; listing pages newest first; analytics per day', async () => {
      await withStores(open, async ({ conversations: s, webhooks, widget, clock }) => {
        assert.equal(await s.getSettings(widget), null);
        const settings = { ...defaultSettings('Shop help'), color: '#112233', allowedOrigins: ['https://shop.example'] };
        await s.saveSettings(widget, settings);
        assert.deepEqual(await s.getSettings(widget), settings);
        assert.equal((await webhooks.getWidget(T1, widget))?.name, 'Shop help');
        for (let i = 10; i < 13; i++) {
          const { conversation } = await s.start({ ...conv(i), widgetId: widget });
          await s.append(conversation.id, 'visitor', 'q', null, 10);
          await s.append(conversation.id, 'agent', 'a', 100 * (i - 9), 10);
          if (i === 11) await s.escalate(conversation.id, null);
          if (i === 12) await s.saveLead(conversation.id, { name: null, email: 'x@example.com', phone: null });
          clock.advance(86_400_000);
        }
        const first = await s.list({ widgetId: widget, limit: 2, before: null });
        assert.deepEqual(
          first.data.map((c) => c.id),
          ['ses_c12', 'ses_c11'],
        );
        const second = await s.list({ widgetId: widget, limit: 2, before: first.nextCursor });
        assert.deepEqual(
          second.data.map((c) => c.id),
          ['ses_c10'],
        );
        assert.equal(second.nextCursor, null);
        const days = await s.analytics(widget, Date.UTC(2026, 0, 9), Date.UTC(2026, 0, 13));
        assert.deepEqual(
          days.map((d) => [d.day, d.conversations, d.leads, d.escalations, d.medianResponseMs]),
          [
            ['2026-01-09', 0, 0, 0, null],
            ['2026-01-10', 1, 0, 0, 100],
            ['2026-01-11', 1, 0, 1, 200],
            ['2026-01-12', 1, 1, 0, 300],
          ],
        );
      });
    });
  });
}
