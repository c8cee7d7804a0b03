import type { TenantId } from '../identity/types.js';
import { pageOf, type PageRead } from '../store/page.js';
import type { Page } from './store.js';
import type {
  AttemptRecord,
  DeliveryId,
  DeliveryRecord,
  DeliveryStatus,
  DeliveryEventType,
  DisabledReason,
  DueDelivery,
  EndpointId,
  EndpointRecord,
  EventId,
  EventType,
  SignatureScheme,
  SigningKeyRecord,
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
  disabled_at: number | null;
  failing_since: number | null;
  signature_scheme: string;
  rate_limit: number | null;
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
  order_note: string | null;
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
/** A claimed delivery's own part of what it sends (its row and its event's body). */
export interface DueDeliveryRow {
  id: string;
  event: string;
  attempts: number;
  created_at: number;
  body: string;
  order_note: string | null;
}
/** The endpoint's part of what a claimed delivery sends. */
export interface DueEndpointRow {
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  signature_scheme: string;
}
export interface DueRow extends DueDeliveryRow, DueEndpointRow {
  seq: number;
  endpoint_id: string;
}
export interface SigningKeyRow {
  id: string;
  seed: string;
  public_key: string;
  created_at: number;
  retires_at: number | null;
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
  disabledAt: r.disabled_at === null ? null : Number(r.disabled_at),
  signatureScheme: r.signature_scheme as SignatureScheme,
  rateLimit: r.rate_limit === null ? null : Number(r.rate_limit),
  failingSince: r.failing_since,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
export const deliveryOf = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id as DeliveryId,
  eventId: r.event_id as EventId,
  endpointId: r.endpoint_id as EndpointId,
  widgetId: r.widget_id as WidgetId,
  event: r.event as DeliveryEventType,
  status: r.status as DeliveryStatus,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  orderNote: r.order_note,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const dueOf = (d: DueRow): DueDelivery => dueOfParts(d.endpoint_id, d, d);

/** The same from the delivery's part and its endpoint's, read separately (the endpoint once for many deliveries). */
export const dueOfParts = (endpointId: string, d: DueDeliveryRow, p: DueEndpointRow): DueDelivery => ({
  id: d.id as DeliveryId,
  endpointId: endpointId as EndpointId,
  event: d.event as DeliveryEventType,
  attempts: d.attempts,
  createdAt: d.created_at,
  body: d.body,
  url: p.url,
  secret: p.secret,
  previousSecret: p.previous_secret,
  previousSecretExpiresAt: p.previous_secret_expires_at,
  signatureScheme: p.signature_scheme as SignatureScheme,
  orderNote: d.order_note,
  slotAt: null,
});

export const signingKeyOf = (r: SigningKeyRow): SigningKeyRecord => ({
  id: r.id,
  seed: r.seed,
  publicKey: r.public_key,
  createdAt: Number(r.created_at),
  retiresAt: r.retires_at === null ? null : Number(r.retires_at),
});

export const DELIVERY_COLUMNS = `d.seq, d.id, e.id AS event_id, d.endpoint_id, d.widget_id, d.event, d.status, d.attempts, d.next_attempt_at,
  d.last_status_code, d.last_error, d.order_note, d.created_at, d.updated_at`;

/**
 * A delivery's attempt log, oldest first, for the delivery of seq `a` (= `b`, a placeholder each):
 * the first attempt when the delivery's row carries it (it succeeded: no attempt row was written
 * for it), then the attempt rows.
 */
export const attemptLogSql = (a: string, b: string) => `
  SELECT started_at, duration_ms, status_code, response_excerpt, error, outcome FROM (
    SELECT 0 AS k, 0 AS seq, first_started_at AS started_at, first_duration_ms AS duration_ms, first_status_code AS status_code,
      first_response_excerpt AS response_excerpt, NULL AS error, 'succeeded' AS outcome
    FROM webhook_deliveries WHERE seq = ${a} AND first_started_at IS NOT NULL
    UNION ALL
    SELECT 1, seq, started_at, duration_ms, status_code, response_excerpt, error, outcome FROM webhook_attempts WHERE delivery_seq = ${b}) log
  ORDER BY k, seq`;

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

/** The log line of a delivery that went on past an unfinished earlier one of its conversation. */
export function orderNote(blocker: { id: string; status: string }, holdMs: number): string {
  return `sent before ${blocker.id} of the same conversation (still ${blocker.status}) after waiting ${Math.round(holdMs / 1000)} s, the order bound`;
}

/** How many rows a paged list read takes: one more than the page, to tell whether another follows (null: all). */
export const pageRows = (page: PageRead | undefined): number | null => (page === undefined ? null : page.limit + 1);

/** A page of a list positioned by seq, read with pageRows, mapped to records. */
export function pageMapped<R extends { seq: number }, T>(rows: R[], page: PageRead | undefined, of: (row: R) => T): Page<T> {
  const p = page === undefined ? { data: rows, nextCursor: null } : pageOf(rows, page.limit, (r) => r.seq);
  return { data: p.data.map(of), nextCursor: p.nextCursor };
}

/** A page of a list positioned by place (rows read from `page.from` on), mapped to records. */
export function pageByPlace<R, T>(rows: R[], page: PageRead | undefined, of: (row: R) => T): Page<T> {
  if (page === undefined || rows.length <= page.limit) return { data: rows.map(of), nextCursor: null };
  return { data: rows.slice(0, page.limit).map(of), nextCursor: (page.from ?? 0) + page.limit };
}
