import { quoteValue, type ErrorDetail } from '../http/errors.js';
import { typeOf } from '../http/validate.js';
import { EVENT_TYPES, type EventType } from './types.js';

/**
 * Event data rules. Each type's known fields are checked; lead.captured allows nothing else.
 * Every string anywhere in the data is scanned for e-mail addresses and phone numbers first,
 * so personal data is refused with a 422 and never reaches the outbox.
 */

const CONVERSATION_ID = /^ses_[A-Za-z0-9_-]{1,64}$/;
const VISITOR_ID = /^vis_[A-Za-z0-9_-]{1,64}$/;
export const ENDED_REASONS = ['visitor_left', 'agent_closed', 'inactivity', 'escalated', 'error'] as const;

type FieldRule =
  | { kind: 'id'; pattern: RegExp; hint: string; required: boolean }
  | { kind: 'boolean'; required: boolean }
  | { kind: 'count'; max: number; required: boolean }
  | { kind: 'enum'; values: readonly string[]; required: boolean }
  | { kind: 'text'; max: number; required: boolean };

const conversationId: FieldRule = { kind: 'id', pattern: CONVERSATION_ID, hint: 'must look like ses_<id>', required: true };
const visitorId = (required: boolean): FieldRule => ({ kind: 'id', pattern: VISITOR_ID, hint: 'must look like vis_<id>', required });

/** The fields each event type's data may carry. */
export const EVENT_FIELDS: Record<EventType, Record<string, FieldRule>> = {
  'conversation.started': { conversation_id: conversationId, visitor_id: visitorId(false) },
  'conversation.ended': {
    conversation_id: conversationId,
    visitor_id: visitorId(false),
    ended_reason: { kind: 'enum', values: ENDED_REASONS, required: false },
    message_count: { kind: 'count', max: 100_000, required: false },
    duration_seconds: { kind: 'count', max: 31 * 86_400, required: false },
  },
  'escalation.triggered': {
    conversation_id: conversationId,
    visitor_id: visitorId(false),
    reason: { kind: 'text', max: 200, required: false },
  },
  'lead.captured': {
    conversation_id: conversationId,
    visitor_id: visitorId(true),
    has_email: { kind: 'boolean', required: true },
    has_phone: { kind: 'boolean', required: true },
  },
};

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/;
// A run of 7–15 digits, optionally with a leading + and the separators people type
// (spaces, dots, dashes, parentheses), not glued to a letter, digit or underscore on the left,
// so ids such as ses_20261125123456 are not mistaken for numbers.
const PHONE_CANDIDATE = /(?<![A-Za-z0-9_])\+?\(?\d[\d\s().-]{5,22}\d(?![A-Za-z0-9_])/g;

/** What kind of personal data a string seems to hold, if any. */
export function detectPii(value: string): 'email' | 'phone' | null {
  if (EMAIL.test(value)) return 'email';
  for (const m of value.matchAll(PHONE_CANDIDATE)) {
    const digits = m[0].replace(/\D/g, '').length;
    if (digits >= 7 && digits <= 15) return 'phone';
  }
  return null;
}

function scan(value: unknown, path: string, out: ErrorDetail[]): void {
  if (typeof value === 'string') {
    const kind = detectPii(value);
    if (kind) out.push({ path, message: `looks like ${kind === 'email' ? 'an e-mail address' : 'a phone number'}; personal data is never forwarded` });
  } else if (Array.isArray(value)) value.forEach((v, i) => scan(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      scan(k, `${path}{key}`, out);
      scan(v, `${path}.${k}`, out);
    }
  }
}

/**
 * An id in the form its field requires is not scanned for personal data: after its prefix it
 * holds only letters, digits, `_` and `-`, so no e-mail address (no `@`) and no phone number
 * that the same digits without hyphens (`vis_5551234567`, admitted) would not be; but the
 * hyphenated digit groups of a UUID (`ses_550e8400-e29b-41d4-a716-446655440000`, whose last
 * group is twelve digits) read as a phone number.
 */
function wellFormedId(rule: FieldRule | undefined, v: unknown): boolean {
  return rule?.kind === 'id' && typeof v === 'string' && rule.pattern.test(v);
}

export type EventInput = { ok: true; event: EventType; data: Record<string, unknown> } | { ok: false; details: ErrorDetail[] };

/** Validates `{event, data}`; returns the data to send (only allowed fields) or every problem found. */
export function validateEvent(event: unknown, data: unknown): EventInput {
  const details: ErrorDetail[] = [];
  // An absent field is named as missing, not as a wrong type ("must be …, got null").
  if (event === undefined) details.push({ path: 'event', message: 'is required' });
  else if (typeof event !== 'string' || !(EVENT_TYPES as readonly string[]).includes(event)) {
    details.push({ path: 'event', message: `must be one of ${EVENT_TYPES.join(', ')}, got ${quoteValue(event ?? null)}` });
  }
  if (data === undefined) {
    details.push({ path: 'data', message: 'is required' });
    return { ok: false, details };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    details.push({ path: 'data', message: `must be an object, got ${typeOf(data)}` });
    return { ok: false, details };
  }
  const obj = data as Record<string, unknown>;
  // The field rules of a known event type only (no details yet means the type is one of the four).
  const idRules: Readonly<Record<string, FieldRule>> = details.length === 0 ? EVENT_FIELDS[event as EventType] : {};
  for (const [key, v] of Object.entries(obj)) {
    scan(key, 'data{key}', details);
    if (!wellFormedId(Object.hasOwn(idRules, key) ? idRules[key] : undefined, v)) scan(v, `data.${key}`, details);
  }
  if (details.length > 0) return { ok: false, details };
  const rules = EVENT_FIELDS[event as EventType];
  // lead.captured carries exactly its four fields (the spec's privacy rule). The other types'
  // data is not specified, so fields beyond the known ones pass through, PII-scanned above.
  const exact = event === 'lead.captured';
  for (const key of Object.keys(obj)) {
    if (exact && !(key in rules)) details.push({ path: `data.${key}`, message: `is not allowed for ${event}; allowed: ${Object.keys(rules).join(', ')}` });
  }
  for (const [key, rule] of Object.entries(rules)) {
    const v = obj[key];
    const path = `data.${key}`;
    if (v === undefined || v === null) {
      if (rule.required) details.push({ path, message: 'is required' });
      continue;
    }
    switch (rule.kind) {
      case 'id':
        if (typeof v !== 'string' || !rule.pattern.test(v)) details.push({ path, message: rule.hint });
        break;
      case 'boolean':
        if (typeof v !== 'boolean') details.push({ path, message: `must be a boolean, got ${typeOf(v)}` });
        break;
      case 'count':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > rule.max) details.push({ path, message: `must be an integer from 0 to ${rule.max}` });
        break;
      case 'enum':
        if (typeof v !== 'string' || !rule.values.includes(v)) details.push({ path, message: `must be one of ${rule.values.join(', ')}` });
        break;
      case 'text':
        if (typeof v !== 'string' || v.length > rule.max) details.push({ path, message: `must be a string of at most ${rule.max} characters` });
        break;
    }
  }
  if (details.length > 0) return { ok: false, details };
  const clean: Record<string, unknown> = {};
  for (const key of Object.keys(rules)) if (obj[key] !== undefined && obj[key] !== null) clean[key] = obj[key];
  if (!exact) for (const [key, v] of Object.entries(obj)) if (!(key in rules)) clean[key] = v;
  return { ok: true, event: event as EventType, data: clean };
}

/** The exact bytes every delivery of an event carries and signs. */
export function deliveryBody(event: EventType, widgetId: string, data: Record<string, unknown>): string {
  return JSON.stringify({ event, widget_id: widgetId, data });
}

/** The once-only rules of the conversation events: the key an event is stored once under, and the one it needs first. */
export function onceKeys(event: EventType, conversationId: string): { once?: string; after?: string } {
  if (event === 'conversation.started') return { once: `conversation.started:${conversationId}` };
  if (event === 'conversation.ended') return { once: `conversation.ended:${conversationId}`, after: `conversation.started:${conversationId}` };
  return {};
}

/** The conversation a delivery body belongs to (its order key), or null. */
export function conversationOf(body: string): string | null {
  try {
    const id = (JSON.parse(body) as { data?: { conversation_id?: unknown } }).data?.conversation_id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

/** What an `endpoint.disabled` operational event says. */
export interface EndpointDisabledData {
  endpoint_id: string;
  url: string;
  reason: 'failing' | 'gone';
  disabled_at: string;
  failing_since: string | null;
  last_status_code: number | null;
  last_error: string | null;
}

/** The body of an `endpoint.disabled` delivery; `widget_id` is the disabled endpoint's widget. */
export function endpointDisabledBody(widgetId: string, data: EndpointDisabledData): string {
  return JSON.stringify({ event: 'endpoint.disabled', widget_id: widgetId, data });
}
