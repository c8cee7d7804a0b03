import type { WidgetRecord } from '../types.js';
import type { ConversationRecord, LeadRecord, WidgetSettings } from './types.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function conversationView(c: ConversationRecord) {
  return {
    id: c.id,
    widget_id: c.widgetId,
    visitor_id: c.visitorId,
    status: c.status,
    handler: c.handler,
    escalated: c.escalated,
    has_lead: c.hasLead,
    message_count: c.messageCount,
    started_at: iso(c.startedAt),
    last_activity_at: iso(c.lastActivityAt),
    ended_at: iso(c.endedAt),
    ended_reason: c.endedReason,
  };
}

export const leadView = (l: LeadRecord) => ({ name: l.name, email: l.email, phone: l.phone, created_at: iso(l.createdAt) });

/** The settings as the owner sees them: the model's key is never shown again, only whether one is set. */
export function settingsView(w: WidgetRecord, s: WidgetSettings) {
  return {
    id: w.id,
    name: s.name,
    color: s.color,
    greeting: s.greeting,
    allowed_origins: s.allowedOrigins,
    agent: {
      instructions: s.agent.instructions,
      knowledge: s.agent.knowledge,
      model: s.agent.model,
      base_url: s.agent.baseUrl,
      api_key_set: s.agent.apiKey !== null,
    },
  };
}

export function conversationStatus(c: ConversationRecord) {
  return { id: c.id, status: c.status, handler: c.handler, escalated: c.escalated, ended_reason: c.endedReason };
}
