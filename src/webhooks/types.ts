import type { TenantId } from '../identity/types.js';

declare const brand: unique symbol;
export type WidgetId = string & { readonly [brand]: 'WidgetId' };
export type EndpointId = string & { readonly [brand]: 'EndpointId' };
export type EventId = string & { readonly [brand]: 'EventId' };
export type DeliveryId = string & { readonly [brand]: 'DeliveryId' };

/** Exactly the four event types of spec 002 §6. */
export const EVENT_TYPES = ['conversation.started', 'conversation.ended', 'escalation.triggered', 'lead.captured'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
  event: EventType;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
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
  event: EventType;
  attempts: number;
  createdAt: number;
  body: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
}
