import type { WidgetId } from '../types.js';

declare const brand: unique symbol;
/** `ses_…`: the conversation id the webhook events carry as `conversation_id`. */
export type ConversationId = string & { readonly [brand]: 'ConversationId' };
/** `vis_…`: the visitor id the browser keeps across conversations. */
export type VisitorId = string & { readonly [brand]: 'VisitorId' };

/** A message is at most this many characters (code points); more is a 422. */
export const MESSAGE_MAX_CHARS = 2000;
/** A conversation holds at most this many messages (the visitor's and the replies); then it is full (403 plan_limit). */
export const CONVERSATION_MAX_MESSAGES = 200;
/** The agent's knowledge text is at most this many bytes (UTF-8); more is a 422. */
export const KNOWLEDGE_MAX_BYTES = 100 * 1024;
/** The agent's instructions (persona) are at most this many characters. */
export const INSTRUCTIONS_MAX_CHARS = 4000;
/** The greeting is at most this many characters. */
export const GREETING_MAX_CHARS = 500;
/** A widget lists at most this many allowed origins. */
export const ALLOWED_ORIGINS_MAX = 50;
/** A lead's name, e-mail address and phone number are at most this many characters each. */
export const LEAD_FIELD_MAX_CHARS = 200;
/** An escalation's reason is at most this many characters (the webhook's `reason` field). */
export const REASON_MAX_CHARS = 200;
/** A conversation with no message for this long is ended (`inactivity`); `--conversation-idle` changes it. */
export const DEFAULT_IDLE_MS = 30 * 60_000;
/** Transcripts and lead details are kept this long after a conversation ends; `--conversation-retention` changes it. */
export const DEFAULT_RETENTION_DAYS = 90;

/** Who answers the visitor: the agent, or a person who took over (or was asked for). */
export type Handler = 'agent' | 'human';
export type ConversationStatus = 'open' | 'ended';
/** The `ended_reason` of conversation.ended. */
export type EndedReason = 'visitor_left' | 'agent_closed' | 'inactivity';
export type MessageRole = 'visitor' | 'agent' | 'operator';

export interface AgentSettings {
  instructions: string;
  knowledge: string;
  /** The model name; null: SERVICE_LLM_MODEL, else the built-in rule agent. */
  model: string | null;
  /** An OpenAI-compatible base URL of the widget's own (checked by the SSRF guard); null: SERVICE_LLM_BASE_URL. */
  baseUrl: string | null;
  apiKey: string | null;
}

export interface WidgetSettings {
  /** Shown in the panel's header. */
  name: string;
  /** The accent colour, `#rrggbb`. */
  color: string;
  greeting: string;
  /** Origins (`https://shop.example`) whose pages may use the widget; empty: this server's own origin only. */
  allowedOrigins: string[];
  agent: AgentSettings;
}

export const DEFAULT_COLOR = '#2457c5';
export const DEFAULT_GREETING = 'Hi! How can we help you today?';

export function defaultSettings(name: string): WidgetSettings {
  return {
    name,
    color: DEFAULT_COLOR,
    greeting: DEFAULT_GREETING,
    allowedOrigins: [],
    agent: { instructions: '', knowledge: '', model: null, baseUrl: null, apiKey: null },
  };
}

export interface ConversationRecord {
  id: ConversationId;
  widgetId: WidgetId;
  visitorId: VisitorId;
  status: ConversationStatus;
  handler: Handler;
  /** Set while an escalation waits for (or is answered by) a person. */
  escalated: boolean;
  startedAt: number;
  lastActivityAt: number;
  endedAt: number | null;
  endedReason: EndedReason | null;
  messageCount: number;
  hasLead: boolean;
}

export interface MessageRecord {
  /** The message's number within its conversation (1, 2, …): a client resumes after the last one it saw. */
  seq: number;
  conversationId: ConversationId;
  role: MessageRole;
  text: string;
  createdAt: number;
  /** For a reply: ms from the visitor's message it answers to the reply's first byte. */
  responseMs: number | null;
}

export interface LeadRecord {
  conversationId: ConversationId;
  name: string | null;
  email: string | null;
  phone: string | null;
  createdAt: number;
}

/** One day of a widget's analytics (UTC). */
export interface DayStats {
  day: string;
  conversations: number;
  leads: number;
  escalations: number;
  /** Median ms from a visitor's message to the first byte of its reply; null when no reply that day. */
  medianResponseMs: number | null;
}
