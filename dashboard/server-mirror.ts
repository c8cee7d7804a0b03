/**
 * The server's names and limits the pages offer: webhook event types (with the data "Send test
 * event" posts for each), endpoint limits, video formats and photo rooms, token scopes, the
 * widget agent's knowledge size. The page is browser code built on its own and cannot import
 * the server's modules, so it keeps these copies; test/dashboard/server-mirror.test.ts holds
 * each to the server's one definition, so a type, format or scope added on the server fails
 * that test until it is here too.
 */

/** The webhook event types a client may post and an endpoint may subscribe to, in the server's order. */
export const EVENTS = ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'] as const;
export type EventType = (typeof EVENTS)[number];

/** What "Send test event" posts for each event type, for a made-up conversation: data the server's event check accepts. */
export const TEST_EVENT_DATA: { readonly [E in EventType]: (conversation_id: string) => Record<string, unknown> } = {
  'conversation.started': (conversation_id) => ({ conversation_id, visitor_id: 'vis_test' }),
  'conversation.ended': (conversation_id) => ({ conversation_id, ended_reason: 'visitor_left', message_count: 3, duration_seconds: 60 }),
  'escalation.triggered': (conversation_id) => ({ conversation_id, reason: 'test escalation from the dashboard' }),
  'lead.captured': (conversation_id) => ({ conversation_id, visitor_id: 'vis_test', has_email: true, has_phone: false }),
};

/** An endpoint's URL and signing secret at most (characters), and its rate_limit ceiling (deliveries per second). */
export const URL_MAX = 512;
export const SECRET_MAX = 4096;
export const RATE_LIMIT_MAX = 1000;
/** How an endpoint's deliveries are signed besides X-Service-Signature. */
export const SIGNATURE_SCHEMES = [
  ['hmac', 'HMAC (shared secret)'],
  ['v1a', 'v1a: ed25519 (public key)'],
  ['both', 'Both'],
] as const;

/** The video formats a render may ask for, in the server's order. */
export const FORMATS = ['16:9', '9:16', '1:1', '4:5'] as const;
/** The rooms a photo may be tagged with, in the order a tour by room shows them. */
export const ROOMS = ['exterior', 'entrance', 'living', 'kitchen', 'dining', 'bedroom', 'bathroom', 'office', 'garden', 'view', 'other'] as const;

/** The scopes a personal access token may be given, narrowest first. */
export const SCOPES = [
  { id: 'config:read', label: 'config:read — read servers and their configuration (config pull, diff)' },
  { id: 'config:write', label: 'config:write — also publish and roll back (config publish)' },
  { id: 'full', label: 'full — everything you can do, except managing tokens' },
] as const;

/** The widget agent's knowledge text at most (bytes, UTF-8). */
export const KNOWLEDGE_MAX_BYTES = 100 * 1024;
