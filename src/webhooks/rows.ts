import type { TenantId } from '../identity/types.js';
import type {
  AttemptRecord,
  DeliveryId,
  DeliveryRecord,
  DeliveryStatus,
  DisabledReason,
  DueDelivery,
  EndpointId,
  EndpointRecord,
  EventId,
  EventType,
  WidgetId,
  WidgetKeyRecord,
  WidgetRecord,
} from './types.js';

/** Rows of the webhook tables as both stores read them (the PostgreSQL schema keeps the SQLite one column for column). */
export interface WidgetRow {
  id: string;
  tenant_id: number;
  name: string;
  created_at: number;
}
export interface KeyRow {
  id: string;
  widget_id: string;
  preview: string;
  created_at: number;
  revoked_at: number | null;
}
export interface EndpointRow {
  id: string;
  widget_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  events: string;
  enabled: number;
  disabled_reason: string | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}
export interface DeliveryRow {
  seq: number;
  id: string;
  event_id: string;
  endpoint_id: string;
  widget_id: string;
  event: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}
export interface AttemptRow {
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
  outcome: string;
}
export interface DueRow {
  seq: number;
  id: string;
  endpoint_id: string;
  event: string;
  attempts: number;
  created_at: number;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
}

export const widgetOf = (r: WidgetRow): WidgetRecord => ({ id: r.id as WidgetId, tenantId: r.tenant_id as TenantId, name: r.name, createdAt: r.created_at });
export const keyOf = (r: KeyRow): WidgetKeyRecord => ({
  id: r.id,
  widgetId: r.widget_id as WidgetId,
  preview: r.preview,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
export const endpointOf = (r: EndpointRow): EndpointRecord => ({
  id: r.id as EndpointId,
  widgetId: r.widget_id as WidgetId,
  url: r.url,
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  events: JSON.parse(r.events) as EventType[],
  enabled: r.enabled === 1,
  disabledReason: r.disabled_reason as DisabledReason | null,
  failingSince: r.failing_since,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
export const deliveryOf = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id as DeliveryId,
  eventId: r.event_id as EventId,
  endpointId: r.endpoint_id as EndpointId,
  widgetId: r.widget_id as WidgetId,
  event: r.event as EventType,
  status: r.status as DeliveryStatus,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const dueOf = (d: DueRow): DueDelivery => ({
  id: d.id as DeliveryId,
  endpointId: d.endpoint_id as EndpointId,
  event: d.event as EventType,
  attempts: d.attempts,
  createdAt: d.created_at,
  body: d.body,
  url: d.url,
  secret: d.secret,
  previousSecret: d.previous_secret,
  previousSecretExpiresAt: d.previous_secret_expires_at,
});

export const DELIVERY_COLUMNS = `d.seq, d.id, e.id AS event_id, d.endpoint_id, d.widget_id, d.event, d.status, d.attempts, d.next_attempt_at,
  d.last_status_code, d.last_error, d.created_at, d.updated_at`;

export const attemptOf = (deliveryId: DeliveryId, a: AttemptRow): AttemptRecord => ({
  deliveryId,
  startedAt: a.started_at,
  durationMs: a.duration_ms,
  statusCode: a.status_code,
  responseExcerpt: a.response_excerpt,
  error: a.error,
  outcome: a.outcome as AttemptRecord['outcome'],
});

/** The delivery's next state after one attempt, given the endpoint as it stands now. */
export function nextState(
  r: { next: { status: 'succeeded' } | { status: 'pending'; at: number } | { status: 'failed' }; endpoint: 'success' | 'failure' | 'gone' },
  endpointEnabled: boolean,
) {
  // The endpoint was disabled while this attempt was in flight, or answered 410: no further retries.
  if (r.next.status === 'pending' && (!endpointEnabled || r.endpoint === 'gone')) return { status: 'failed' as const };
  return r.next;
}
