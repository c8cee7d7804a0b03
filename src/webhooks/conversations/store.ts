import type { EventType, WidgetId } from '../types.js';

import { deliveryBody, onceKeys } from '../events.js';
import type { ConversationId, ConversationRecord, DayStats, EndedReason, LeadRecord, MessageRecord, MessageRole, VisitorId, WidgetSettings } from './types.js';

/** What one conversation change did: `changed` false when it was already so (nothing stored, no event). */
export interface Changed {
  changed: boolean;
  conversation: ConversationRecord | null;
  /** Deliveries the change queued (the dispatcher is woken when any). */
  deliveries: number;
}

export type Appended = { ok: true; message: MessageRecord; conversation: ConversationRecord } | { ok: false; reason: 'ended' | 'full' | 'missing' };

export interface NewConversation {
  id: ConversationId;
  widgetId: WidgetId;
  visitorId: VisitorId;
  tokenHash: string;
}

export interface ConversationListing {
  widgetId: WidgetId;
  status?: 'open' | 'ended';
  limit: number;
  /** Conversations that started before this seq (a cursor from the last page). */
  before: number | null;
}

/**
 * Conversations, their messages and leads, and the per-widget settings (component
 * `conversations`, on the same database as the webhook outbox). Every change that causes one
 * of the four events stores the event and its deliveries in the same transaction, under the
 * once-only keys of the injection route, so nothing is lost and nothing doubled.
 */
export interface ConversationStore {
  /** The widget's settings, or null when none were saved (the caller uses the defaults). */
  getSettings(widgetId: WidgetId): Promise<WidgetSettings | null>;
  /**
   * Saves the settings, the widget's name too. With `expected`, only while the stored settings are
   * still those (null: none saved yet), in one step: false, and nothing written, when another
   * change landed since they were read.
   */
  saveSettings(widgetId: WidgetId, settings: WidgetSettings, expected?: WidgetSettings | null): Promise<boolean>;

  /** A new open conversation, and its conversation.started event. */
  start(input: NewConversation): Promise<{ conversation: ConversationRecord; deliveries: number }>;
  get(id: string): Promise<ConversationRecord | null>;
  /** The conversation whose bearer token hashes to `tokenHash`. */
  byToken(id: string, tokenHash: string): Promise<ConversationRecord | null>;
  /** Appends a message to an open conversation with room for it; counts as activity. */
  append(id: ConversationId, role: MessageRole, text: string, responseMs: number | null, maxMessages: number): Promise<Appended>;
  /** Messages after `afterSeq`, oldest first. */
  messages(id: ConversationId, afterSeq: number, limit: number): Promise<MessageRecord[]>;
  /** Stores (or replaces) the lead and queues lead.captured (has_email, has_phone only). */
  saveLead(id: ConversationId, lead: { name: string | null; email: string | null; phone: string | null }): Promise<Changed>;
  lead(id: ConversationId): Promise<LeadRecord | null>;
  /** Marks the conversation escalated (a person is asked for) and queues escalation.triggered; again while escalated: nothing. */
  escalate(id: ConversationId, reason: string | null): Promise<Changed>;
  /** Who answers: 'human' (taken over) or 'agent' (handed back, which also clears the escalation). */
  setHandler(id: ConversationId, handler: 'agent' | 'human'): Promise<Changed>;
  /** Ends an open conversation and queues conversation.ended; an ended one: nothing. */
  end(id: ConversationId, reason: EndedReason): Promise<Changed>;
  /** Open conversations with no activity since `before`, oldest first. */
  idle(before: number, limit: number): Promise<ConversationId[]>;
  list(query: ConversationListing): Promise<{ data: (ConversationRecord & { seq: number })[]; nextCursor: number | null }>;
  /** Deletes a conversation, its messages and lead. */
  remove(id: ConversationId): Promise<boolean>;
  /** Deletes conversations (messages, leads) that ended before `before`. */
  prune(before: number): Promise<number>;
  /** Per UTC day from `from` (inclusive) to `to` (exclusive), days with nothing included. */
  analytics(widgetId: WidgetId, from: number, to: number): Promise<DayStats[]>;
}

/** The event of a conversation change, with the once-only keys the injection route uses too. */
export interface ConversationEvent {
  event: EventType;
  body: string;
  once?: string;
  after?: string;
}

export function conversationEvent(event: EventType, c: ConversationRecord, extra: Record<string, unknown> = {}): ConversationEvent {
  const data = { conversation_id: c.id, visitor_id: c.visitorId, ...extra };
  return { event, body: deliveryBody(event, c.widgetId, data), ...onceKeys(event, c.id) };
}

export function endedEvent(c: ConversationRecord, reason: EndedReason, at: number): ConversationEvent {
  return conversationEvent('conversation.ended', c, {
    ended_reason: reason,
    message_count: c.messageCount,
    duration_seconds: Math.max(0, Math.round((at - c.startedAt) / 1000)),
  });
}

const DAY_MS = 86_400_000;

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The analytics rows from the raw facts, every day of the range present. */
export function buildDays(
  from: number,
  to: number,
  facts: { started: number[]; leads: number[]; escalations: number[]; responses: { at: number; ms: number }[] },
): DayStats[] {
  const days = new Map<string, DayStats & { samples: number[] }>();
  for (let t = Math.floor(from / DAY_MS) * DAY_MS; t < to; t += DAY_MS) {
    const day = dayOf(t);
    days.set(day, { day, conversations: 0, leads: 0, escalations: 0, medianResponseMs: null, samples: [] });
  }
  for (const at of facts.started) {
    const d = days.get(dayOf(at));
    if (d) d.conversations++;
  }
  for (const at of facts.leads) {
    const d = days.get(dayOf(at));
    if (d) d.leads++;
  }
  for (const at of facts.escalations) {
    const d = days.get(dayOf(at));
    if (d) d.escalations++;
  }
  for (const r of facts.responses) days.get(dayOf(r.at))?.samples.push(r.ms);
  return [...days.values()].map(({ samples, ...d }) => {
    if (samples.length > 0) {
      samples.sort((a, b) => a - b);
      const mid = samples.length >> 1;
      d.medianResponseMs = samples.length % 2 ? samples[mid]! : Math.round((samples[mid - 1]! + samples[mid]!) / 2);
    }
    return d;
  });
}

/** The longest range analytics answers in one request (days). */
export const ANALYTICS_MAX_DAYS = 366;
