import { randomBytes } from 'node:crypto';
import { HttpError, quoteId } from '../../http/errors.js';
import { hashToken } from '../../identity/tokens.js';
import type { TenantId, TenantRecord } from '../../identity/types.js';
import type { Logger } from '../../log.js';
import { BROADCAST_MAX_PAYLOAD, type Broadcast } from '../../store/broadcast.js';
import { detectPii } from '../events.js';
import { newId } from '../ids.js';
import type { WebhookService } from '../service.js';
import type { WidgetId, WidgetRecord } from '../types.js';
import type { AgentEvent, Agents } from './agent.js';
import type { SseStream } from './sse.js';
import type { VisitorStreamCaps } from './stream-caps.js';
import type { ConversationStore } from './store.js';
import {
  CONVERSATION_MAX_MESSAGES,
  DEFAULT_IDLE_MS,
  DEFAULT_RETENTION_DAYS,
  defaultSettings,
  REASON_MAX_CHARS,
  type ConversationId,
  type ConversationRecord,
  type EndedReason,
  type MessageRecord,
  type VisitorId,
  type WidgetSettings,
} from './types.js';

/** Idle conversations are looked for this often (and at most this late past their idle time). */
export const IDLE_SWEEP_MS = 30_000;
/** Live event streams one conversation may hold (tabs of one visitor); more closes the oldest. */
export const STREAMS_PER_CONVERSATION = 4;
const PRUNE_EVERY_MS = 3_600_000;
const VISITOR_ID = /^vis_[A-Za-z0-9_-]{1,64}$/;

export interface ConversationServiceOptions {
  store: ConversationStore;
  /** The caps on live visitor streams. */
  streamCaps: VisitorStreamCaps;
  webhooks: WebhookService;
  agents: Agents;
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  now?: () => number;
  logger?: Logger;
  /** No message for this long ends a conversation (`inactivity`); default 30 minutes. */
  idleMs?: number;
  /** How often idle conversations are looked for; default IDLE_SWEEP_MS (at most idleMs). */
  sweepMs?: number;
  /** Days transcripts and leads are kept after a conversation ends; default 90. */
  retentionDays?: number;
  /**
   * Replicas on one PostgreSQL database: what one process publishes to a conversation's live
   * streams reaches the streams other processes hold (a widget's stream may be on another
   * replica than the operator's reply or the idle end).
   */
  relay?: Broadcast;
}

/** The channel on which processes pass on what they publish to conversations' live streams. */
export const CONVERSATIONS_CHANNEL = 'brainstem_conversations';

/** A message as the visitor API and the dashboard show it. */
export function messageView(m: MessageRecord) {
  return { seq: m.seq, role: m.role, text: m.text, created_at: new Date(m.createdAt).toISOString() };
}

/**
 * The chat-widget service: conversations with the agent or a person, the live streams of each
 * conversation, the idle timeout and the retention. Every change goes through the store, which
 * records its webhook event in the same transaction; this class wakes the dispatcher after.
 */
export class ConversationService {
  readonly store: ConversationStore;
  /** Live visitor streams (event and reply streams) by address and tenant; the visitor routes admit each one. */
  readonly streamCaps: VisitorStreamCaps;
  readonly idleMs: number;
  readonly retentionDays: number;
  private readonly webhooks: WebhookService;
  private readonly agents: Agents;
  private readonly getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  private readonly now: () => number;
  private readonly logger: Logger | undefined;
  private readonly sweepMs: number;
  /** Live event streams per conversation. */
  private readonly streams = new Map<string, Set<SseStream>>();
  /** Agent replies being produced, per conversation (a take-over or the end stops them). */
  private readonly replies = new Map<string, AbortController>();
  /** The last visitor message of each conversation waiting for or getting its answer (messages are answered in turn). */
  private readonly turns = new Map<string, Promise<void>>();
  private sweeper: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  private sweeping = false;
  private readonly relay: Broadcast | null;
  /** Tells this process's own relayed messages from other processes'. */
  private readonly origin = randomBytes(6).toString('hex');

  constructor(options: ConversationServiceOptions) {
    this.store = options.store;
    this.streamCaps = options.streamCaps;
    this.webhooks = options.webhooks;
    this.agents = options.agents;
    this.getTenant = options.getTenant;
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.sweepMs = Math.max(10, Math.min(options.sweepMs ?? IDLE_SWEEP_MS, this.idleMs));
    this.retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    this.relay = options.relay ?? null;
    this.relay?.listen(
      CONVERSATIONS_CHANNEL,
      (payload) => this.relayed(payload),
      // Messages may have been missed while the listening connection was down: every widget catches up.
      () => {
        for (const id of this.streams.keys()) this.local(id, 'resync', {});
      },
    );
  }

  private relayed(payload: string): void {
    let m: { o: string; c: string; e: string; d: unknown; s?: number };
    try {
      m = JSON.parse(payload) as typeof m;
    } catch {
      return;
    }
    if (m.o === this.origin || !this.streams.has(m.c)) return;
    this.local(m.c, m.e, m.d, m.s);
    if (m.e === 'ended') for (const s of this.streams.get(m.c) ?? []) s.end();
  }

  start(): void {
    this.sweeper = setInterval(() => void this.sweep(), this.sweepMs);
    this.sweeper.unref();
    this.pruner = setInterval(() => {
      this.prune().catch((err) => this.logger?.error('conversations: pruning failed', { error: String(err) }));
    }, PRUNE_EVERY_MS);
    this.pruner.unref();
    void this.sweep();
  }

  /** Stops the timers, the agent replies in progress and every live stream (the widgets reconnect). */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.pruner) clearInterval(this.pruner);
    this.sweeper = this.pruner = null;
    for (const c of this.replies.values()) c.abort();
    for (const set of this.streams.values()) for (const s of set) s.end();
    this.streams.clear();
  }

  /** Live visitor streams, event and reply streams together (tests). */
  get visitorStreams(): number {
    return this.streamCaps.size;
  }

  /** Open event streams (for the benchmark's memory figure). */
  get liveStreams(): number {
    let n = 0;
    for (const set of this.streams.values()) n += set.size;
    return n;
  }

  async settings(widget: WidgetRecord): Promise<WidgetSettings> {
    return (await this.store.getSettings(widget.id)) ?? defaultSettings(widget.name);
  }

  /** The widget a visitor call names, refused politely when its tenant is suspended. */
  async visitorWidget(widgetId: string): Promise<{ widget: WidgetRecord; settings: WidgetSettings }> {
    const widget = await this.webhooks.store.findWidget(widgetId);
    if (!widget) throw new HttpError('not_found', `No widget with id ${quoteId(widgetId)}.`);
    const tenant = await this.getTenant(widget.tenantId);
    if (!tenant || tenant.status === 'suspended') throw new HttpError('unavailable', 'This chat is unavailable right now. Please try again later.');
    return { widget, settings: await this.settings(widget) };
  }

  /**
   * A widget's settings whatever its tenant's state, or null when there is no such widget: only
   * for the CORS headers of an error answer (a suspended tenant's 503 must be readable by the page).
   */
  async settingsOf(widgetId: string): Promise<WidgetSettings | null> {
    const widget = await this.webhooks.store.findWidget(widgetId);
    return widget ? this.settings(widget) : null;
  }

  /** A new conversation (and its conversation.started); the visitor id is kept when well-formed, else a new one. */
  async open(widget: WidgetRecord, visitorId: string | null): Promise<{ conversation: ConversationRecord; token: string }> {
    const token = `bvt_${randomBytes(32).toString('base64url')}`;
    const visitor = (visitorId && VISITOR_ID.test(visitorId) ? visitorId : newId('vis_')) as VisitorId;
    const { conversation, deliveries } = await this.store.start({
      id: newId<ConversationId>('ses_'),
      widgetId: widget.id,
      visitorId: visitor,
      tokenHash: hashToken(token),
    });
    if (deliveries > 0) this.webhooks.notify();
    return { conversation, token };
  }

  /** The conversation a visitor's bearer token opens; 401 otherwise (the same for an unknown id, so ids cannot be probed). */
  async byToken(id: string, token: string | null): Promise<ConversationRecord> {
    const c = token ? await this.store.byToken(id, hashToken(token)) : null;
    if (!c) throw new HttpError('unauthorized', 'The conversation token is missing or does not match this conversation.');
    return c;
  }

  /** Sends an event to a conversation's live streams here and, through the relay, on every other process. */
  private publish(id: string, event: string, data: unknown, seq?: number): void {
    this.local(id, event, data, seq);
    if (!this.relay) return;
    let payload = JSON.stringify({ o: this.origin, c: id, e: event, d: data, ...(seq === undefined ? {} : { s: seq }) });
    // A long reply does not fit a notification: the other processes' widgets fetch it instead.
    if (Buffer.byteLength(payload) > BROADCAST_MAX_PAYLOAD) payload = JSON.stringify({ o: this.origin, c: id, e: 'resync', d: {} });
    this.relay
      .send(CONVERSATIONS_CHANNEL, payload)
      .catch((err: unknown) => this.logger?.warn('conversations: relaying an event failed', { error: String(err) }));
  }

  private local(id: string, event: string, data: unknown, seq?: number): void {
    const set = this.streams.get(id);
    if (!set) return;
    for (const s of set) s.send(event, data, seq);
  }

  /** Attaches a live event stream, after replaying the replies after `afterSeq` (what a dropped connection missed). */
  async subscribe(c: ConversationRecord, stream: SseStream, afterSeq: number): Promise<void> {
    let set = this.streams.get(c.id);
    if (!set) this.streams.set(c.id, (set = new Set()));
    if (set.size >= STREAMS_PER_CONVERSATION) set.values().next().value!.end();
    set.add(stream);
    stream.onClose(() => {
      const s = this.streams.get(c.id);
      if (!s) return;
      s.delete(stream);
      if (s.size === 0) this.streams.delete(c.id);
    });
    for (const m of await this.store.messages(c.id, afterSeq, CONVERSATION_MAX_MESSAGES)) {
      if (m.role !== 'visitor') stream.send('message', messageView(m), m.seq);
    }
    stream.send('state', { status: c.status, handler: c.handler, escalated: c.escalated });
    if (c.status === 'ended') {
      stream.send('ended', { reason: c.endedReason });
      stream.end();
    }
  }

  private async append(c: ConversationRecord, role: 'visitor' | 'agent' | 'operator', text: string, responseMs: number | null): Promise<MessageRecord> {
    const r = await this.store.append(c.id, role, text, responseMs, CONVERSATION_MAX_MESSAGES);
    if (r.ok) return r.message;
    if (r.reason === 'ended') throw new HttpError('conflict', 'The conversation has ended; start a new one.');
    if (r.reason === 'full') throw new HttpError('plan_limit', `A conversation holds at most ${CONVERSATION_MAX_MESSAGES} messages; start a new one.`);
    throw new HttpError('not_found', 'No such conversation.');
  }

  /**
   * The visitor's message, answered on `stream`: the agent's reply as it streams (`delta`), the
   * tools it runs (`lead_form`, `escalated`), then `done` with the stored reply. When a person
   * handles the conversation, `done` says so at once and the person answers on the event stream.
   * The reply is stored whole even when the visitor's connection drops midway.
   */
  async message(c: ConversationRecord, text: string, stream: SseStream): Promise<void> {
    const visitor = await this.append(c, 'visitor', text, null);
    stream.send('message', messageView(visitor), visitor.seq);
    // One reply at a time per conversation, in the order the messages came: a message sent while
    // the agent answers an earlier one is answered after it, with that reply in its history. (It
    // used to stop the earlier reply: that message's stream said a person would answer, or a
    // half reply was stored.)
    const before = this.turns.get(c.id);
    let finished!: () => void;
    const turn = new Promise<void>((resolve) => (finished = resolve));
    this.turns.set(c.id, turn);
    try {
      if (before) await before;
      await this.answer(c, visitor, stream);
    } finally {
      finished();
      if (this.turns.get(c.id) === turn) this.turns.delete(c.id);
    }
  }

  /** The agent's answer to the visitor's message `question`, on its reply stream. */
  private async answer(c: ConversationRecord, question: MessageRecord, stream: SseStream): Promise<void> {
    const current = (await this.store.get(c.id)) ?? c;
    // A person handles it, or it ended while this message waited its turn: no agent reply.
    if (current.handler === 'human' || current.status === 'ended') {
      stream.send('done', { handled_by: 'human', message: null });
      stream.end();
      return;
    }
    const widget = await this.webhooks.store.findWidget(c.widgetId);
    const settings = widget ? await this.settings(widget) : defaultSettings('');
    // The conversation as the visitor saw it when they sent this message: the replies to earlier
    // messages (stored after it when they were still being answered) come before it, and messages
    // sent after it, waiting their turn, are left out.
    const earlier = (await this.store.messages(c.id, 0, CONVERSATION_MAX_MESSAGES)).filter((m) => m.role !== 'visitor' || m.seq < question.seq);
    const history = [...earlier, question].map((m) => ({ role: m.role, text: m.text }));
    const controller = new AbortController();
    this.replies.set(c.id, controller);
    const asked = this.now();
    let firstAt: number | null = null;
    let reply = '';
    try {
      for await (const e of this.agents.run({ settings, history }, controller.signal) as AsyncIterable<AgentEvent>) {
        if (controller.signal.aborted) break;
        if (e.kind === 'delta') {
          firstAt ??= this.now();
          reply += e.text;
          stream.send('delta', { text: e.text });
        } else if (e.name === 'show_lead_form') {
          stream.send('lead_form', { reason: e.reason });
          this.publish(c.id, 'lead_form', { reason: e.reason });
        } else {
          await this.escalate(c.id as ConversationId, e.reason);
          stream.send('escalated', { reason: e.reason });
        }
      }
    } finally {
      if (this.replies.get(c.id) === controller) this.replies.delete(c.id);
    }
    if (controller.signal.aborted && reply === '') {
      // Taken over or ended while the agent thought: the person (or the end) answers instead.
      stream.send('done', { handled_by: 'human', message: null });
      stream.end();
      return;
    }
    const saved = await this.append(c, 'agent', reply.trim() || '…', (firstAt ?? this.now()) - asked).catch((err: unknown) => {
      this.logger?.warn('conversations: the reply could not be stored', { conversation: c.id, error: String(err) });
      return null;
    });
    if (saved) this.publish(c.id, 'message', messageView(saved), saved.seq);
    stream.send('done', { handled_by: 'agent', message: saved ? messageView(saved) : null });
    stream.end();
  }

  /** escalate_to_human: a person is asked for (once while escalated); the agent stops answering. */
  async escalate(id: ConversationId, reason: string | null): Promise<boolean> {
    // The reason goes into the webhook: cut to its bound, and dropped if it holds personal data.
    let r = reason === null ? null : [...reason].slice(0, REASON_MAX_CHARS).join('');
    if (r !== null && detectPii(r)) r = null;
    const done = await this.store.escalate(id, r);
    if (done.deliveries > 0) this.webhooks.notify();
    if (done.changed) this.publish(id, 'state', { status: 'open', handler: 'human', escalated: true });
    return done.changed;
  }

  async lead(c: ConversationRecord, lead: { name: string | null; email: string | null; phone: string | null }): Promise<void> {
    const done = await this.store.saveLead(c.id, lead);
    if (!done.changed) throw new HttpError('conflict', 'The conversation has ended; the details were not saved.');
    if (done.deliveries > 0) this.webhooks.notify();
  }

  /** Ends an open conversation (once): conversation.ended, the live streams told and closed. */
  async end(id: ConversationId, reason: EndedReason): Promise<boolean> {
    this.replies.get(id)?.abort();
    const done = await this.store.end(id, reason);
    if (done.deliveries > 0) this.webhooks.notify();
    if (done.changed) {
      this.publish(id, 'ended', { reason });
      for (const s of this.streams.get(id) ?? []) s.end();
    }
    return done.changed;
  }

  /** An operator takes over (the agent stops) or hands back. */
  async setHandler(id: ConversationId, handler: 'agent' | 'human'): Promise<ConversationRecord> {
    if (handler === 'human') this.replies.get(id)?.abort();
    const done = await this.store.setHandler(id, handler);
    if (!done.conversation) throw new HttpError('not_found', 'No such conversation.');
    if (done.conversation.status === 'ended') throw new HttpError('conflict', 'The conversation has ended.');
    if (done.changed) this.publish(id, 'state', { status: 'open', handler, escalated: done.conversation.escalated });
    return done.conversation;
  }

  /** A person's reply, delivered live to the widget; the conversation is taken over if it was not. */
  async operatorReply(c: ConversationRecord, text: string): Promise<MessageRecord> {
    if (c.handler !== 'human') await this.setHandler(c.id, 'human');
    const last = (await this.store.messages(c.id, 0, CONVERSATION_MAX_MESSAGES)).filter((m) => m.role === 'visitor').pop();
    const unanswered = last && !(await this.store.messages(c.id, last.seq, 1)).length;
    const m = await this.append(c, 'operator', text, unanswered ? this.now() - last.createdAt : null);
    this.publish(c.id, 'message', messageView(m), m.seq);
    return m;
  }

  /**
   * Deletes a conversation. One still open is closed first (`conversation.ended`, reason
   * `agent_closed`, and the widget told): a receiver that saw it start sees it end, exactly once.
   */
  async remove(id: ConversationId): Promise<boolean> {
    await this.end(id, 'agent_closed');
    for (const s of this.streams.get(id) ?? []) s.end();
    return this.store.remove(id);
  }

  /** Ends every conversation idle for idleMs (run by the timer; tests may call it). */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let ended = 0;
    try {
      for (;;) {
        const idle = await this.store.idle(this.now() - this.idleMs, 100);
        for (const id of idle) if (await this.end(id, 'inactivity')) ended++;
        if (idle.length < 100) break;
      }
    } catch (err) {
      this.logger?.error('conversations: the idle sweep failed', { error: String(err) });
    } finally {
      this.sweeping = false;
    }
    return ended;
  }

  /** Deletes transcripts and leads of conversations that ended more than retentionDays ago. */
  prune(): Promise<number> {
    return this.store.prune(this.now() - this.retentionDays * 86_400_000);
  }

  /** The widgets of a tenant, for operator routes. */
  async widgetOf(tenantId: TenantId, id: string): Promise<WidgetRecord> {
    const w = await this.webhooks.store.getWidget(tenantId, id);
    if (!w) throw new HttpError('not_found', `No widget with id ${quoteId(id)}.`);
    return w;
  }

  /** The conversation of a tenant's widget, for operator routes. */
  async conversationOf(widgetId: WidgetId, id: string): Promise<ConversationRecord> {
    const c = await this.store.get(id);
    if (!c || c.widgetId !== widgetId) throw new HttpError('not_found', `No conversation with id ${quoteId(id)} in this widget.`);
    return c;
  }
}
