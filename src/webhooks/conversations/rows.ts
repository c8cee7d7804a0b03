import type { WidgetId } from '../types.js';
import type { ConversationId, ConversationRecord, EndedReason, Handler, LeadRecord, MessageRecord, MessageRole, VisitorId } from './types.js';

export interface ConversationRow {
  seq: number;
  id: string;
  widget_id: string;
  visitor_id: string;
  status: string;
  handler: string;
  escalated: number;
  started_at: number;
  last_activity_at: number;
  ended_at: number | null;
  ended_reason: string | null;
  message_count: number;
  lead_at: number | null;
}

export interface MessageRow {
  /** The row's place among every message stored (all tenants): never shown. */
  seq: number;
  /** Its number within its conversation, from 1: the `seq` of the API. */
  ordinal: number;
  conversation_id: string;
  role: string;
  text: string;
  created_at: number;
  response_ms: number | null;
}

export interface LeadRow {
  conversation_id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  created_at: number;
}

export const CONVERSATION_COLUMNS =
  'seq, id, widget_id, visitor_id, status, handler, escalated, started_at, last_activity_at, ended_at, ended_reason, message_count, lead_at';

export function conversationOf(r: ConversationRow): ConversationRecord & { seq: number } {
  return {
    seq: r.seq,
    id: r.id as ConversationId,
    widgetId: r.widget_id as WidgetId,
    visitorId: r.visitor_id as VisitorId,
    status: r.status === 'ended' ? 'ended' : 'open',
    handler: r.handler as Handler,
    escalated: r.escalated === 1,
    startedAt: r.started_at,
    lastActivityAt: r.last_activity_at,
    endedAt: r.ended_at,
    endedReason: r.ended_reason as EndedReason | null,
    messageCount: r.message_count,
    hasLead: r.lead_at !== null,
  };
}

export function messageOf(r: MessageRow): MessageRecord {
  return {
    seq: r.ordinal,
    conversationId: r.conversation_id as ConversationId,
    role: r.role as MessageRole,
    text: r.text,
    createdAt: r.created_at,
    responseMs: r.response_ms,
  };
}

export function leadOf(r: LeadRow): LeadRecord {
  return { conversationId: r.conversation_id as ConversationId, name: r.name, email: r.email, phone: r.phone, createdAt: r.created_at };
}
