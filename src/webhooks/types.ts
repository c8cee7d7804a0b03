import type { TenantId } from '../identity/types.js';

declare const brand: unique symbol;
export type WidgetId = string & { readonly [brand]: 'WidgetId' };
export type EndpointId = string & { readonly [brand]: 'EndpointId' };
export type EventId = string & { readonly [brand]: 'EventId' };
export type DeliveryId = string & { readonly [brand]: 'DeliveryId' };

/** Exactly the four event types of spec 002 §6. */
export const EVENT_TYPES = ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/**
 * Events about the webhook service itself, sent to the tenant's operational endpoint whatever
 * that endpoint subscribes to; never posted by a client.
 */
export const OPERATIONAL_EVENT_TYPES = ['endpoint.disabled'] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];
/** Every type a delivery can carry. */
export type DeliveryEventType = EventType | OperationalEventType;

/** How deliveries to an endpoint are signed besides X-Service-Signature (always HMAC with the endpoint secret). */
export const SIGNATURE_SCHEMES = ['hmac', 'v1a', 'both'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

export interface WidgetRecord {
  id: WidgetId;
  tenantId: TenantId;
  name: string;
  createdAt: number;
}

export interface WidgetKeyRecord {
  id: string;
  widgetId: WidgetId;
  preview: string;
  createdAt: number;
  revokedAt: number | null;
}

/** Why an endpoint stopped receiving deliveries. */
export type DisabledReason = 'user' | 'gone' | 'failing';

export interface EndpointRecord {
  id: EndpointId;
  widgetId: WidgetId;
  url: string;
  secret: string;
  /** The secret replaced by the last rotation; still signs (Standard Webhooks) until previousSecretExpiresAt. */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  events: EventType[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  /** When the endpoint was last disabled (null while enabled). */
  disabledAt: number | null;
  signatureScheme: SignatureScheme;
  /** Deliveries per second at most, or null for no limit. */
  rateLimit: number | null;
  /** Start of the current run of failed attempts; null after a success. */
  failingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

export type DeliveryStatus = 'pending' | 'inflight' | 'succeeded' | 'failed';

export interface DeliveryRecord {
  id: DeliveryId;
  eventId: EventId;
  endpointId: EndpointId;
  widgetId: WidgetId;
  event: DeliveryEventType;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  /** Set when the delivery went on while an earlier one of its conversation was still unfinished (the ordering bound passed). */
  orderNote: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface AttemptRecord {
  deliveryId: DeliveryId;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  responseExcerpt: string | null;
  error: string | null;
  outcome: 'succeeded' | 'failed';
}

/** What the dispatcher needs to send one delivery. */
export interface DueDelivery {
  id: DeliveryId;
  endpointId: EndpointId;
  event: DeliveryEventType;
  attempts: number;
  createdAt: number;
  body: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  signatureScheme: SignatureScheme;
  /** Set when the claim let it pass an unfinished earlier delivery of its conversation (the order bound passed). */
  orderNote: string | null;
  /**
   * For an endpoint with a rate limit: the store time of the slot this claim spent (the claim's
   * own time). The attempt is sent no later than RATE_GUARD_MS after it, or handed back unsent,
   * so a process held up between its claim and its send never puts two slots' sends together.
   * Null for an endpoint without a limit.
   */
  slotAt: number | null;
}

/** An installation's ed25519 key for `v1a` signatures. */
export interface SigningKeyRecord {
  /** `whk_…`, the JWKS `kid`. */
  id: string;
  /** The 32-byte private seed and public key, base64. */
  seed: string;
  publicKey: string;
  createdAt: number;
  /** Set when a newer key replaced it: it still signs and is still served until then. */
  retiresAt: number | null;
}
