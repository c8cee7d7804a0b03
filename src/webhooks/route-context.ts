import type { HttpServer, Request } from '../http/server.js';
import { HttpError, quoteId, quoteValue } from '../http/errors.js';
import { Fields, isRfc3339, typeOf } from '../http/validate.js';
import type { Authenticator } from '../identity/auth.js';
import type { TenantPlans } from '../identity/plan-limits.js';
import { guardUrl, registeredUrl, type PrivateUrls, type Resolve } from '../net/ssrf.js';
import type { SigningKeys } from './keys.js';
import { RATE_LIMIT_MAX } from './schedule.js';
import type { WebhookService } from './service.js';
import type { WebhookStore } from './store.js';
import {
  EVENT_TYPES,
  SIGNATURE_SCHEMES,
  type AttemptRecord,
  type DeliveryRecord,
  type EndpointRecord,
  type EventType,
  type SignatureScheme,
  type WidgetRecord,
} from './types.js';

export const URL_MAX = 512;
export const SECRET_MAX = 4096;
/** How long the secret replaced by a rotation keeps signing deliveries. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookRoutesOptions {
  service: WebhookService;
  auth: Authenticator;
  plans: TenantPlans;
  keys: SigningKeys;
  allowPrivate: PrivateUrls;
  resolve?: Resolve;
  now?: () => number;
}

/** What every webhook route mount shares: the store, the credential checks and the field rules. */
export interface WebhookRouteContext {
  server: HttpServer;
  options: WebhookRoutesOptions;
  store: WebhookStore;
  now: () => number;
  /** The session's widget named by `:id`; 404 when it is not the tenant's. */
  widgetOf(req: Request): Promise<WidgetRecord>;
  /** The widget's endpoint named by `:endpointId`; 404 when absent. */
  endpointOf(req: Request): Promise<EndpointRecord>;
  /** `url` checked by length and the SSRF guard (an unresolvable host is admitted at registration), in the form it is stored and called (registeredUrl). */
  checkUrl(f: Fields, body: Record<string, unknown>, required: boolean): Promise<string | undefined>;
}

export function routeContext(server: HttpServer, options: WebhookRoutesOptions): WebhookRouteContext {
  const { service, auth } = options;
  const store = service.store;
  const guard = { allowPrivate: options.allowPrivate, admitUnresolved: true, ...(options.resolve ? { resolve: options.resolve } : {}) };
  const widgetOf = async (req: Request): Promise<WidgetRecord> => {
    const session = await auth.session(req);
    const widget = await store.getWidget(session.tenant.id, req.params.id ?? '');
    if (!widget) throw new HttpError('not_found', `No widget with id ${quoteId(req.params.id ?? '')}.`);
    return widget;
  };
  return {
    server,
    options,
    store,
    now: options.now ?? Date.now,
    widgetOf,
    async endpointOf(req) {
      const widget = await widgetOf(req);
      const endpoint = await store.getEndpoint(widget.id, req.params.endpointId ?? '');
      if (!endpoint) throw new HttpError('not_found', `No webhook endpoint with id ${quoteId(req.params.endpointId ?? '')}.`);
      return endpoint;
    },
    async checkUrl(f, body, required) {
      const url = body.url;
      if (url === undefined || url === null) {
        if (required) f.problem('url', 'is required');
        return undefined;
      }
      if (typeof url !== 'string') return void f.problem('url', `must be a string, got ${typeOf(url)}`);
      if (length(url) > URL_MAX) return void f.problem('url', `must be at most ${URL_MAX} characters, got ${length(url)}`);
      const verdict = await guardUrl(url, guard);
      if (!verdict.ok) return void f.problem('url', verdict.reason);
      const stored = registeredUrl(url, verdict.url);
      if (!stored.ok) return void f.problem('url', stored.reason);
      if (length(stored.url) > URL_MAX)
        return void f.problem('url', `must be at most ${URL_MAX} characters as called (${stored.url}), got ${length(stored.url)}`);
      return stored.url;
    },
  };
}

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
/** Characters as a person counts them (code points), for the spec's length limits. */
export const length = (s: string): number => [...s].length;

export const widgetView = (w: WidgetRecord) => ({ id: w.id, name: w.name, created_at: iso(w.createdAt) });

export const endpointView = (e: EndpointRecord) => ({
  id: e.id,
  widget_id: e.widgetId,
  url: e.url,
  events: e.events,
  enabled: e.enabled,
  signature_scheme: e.signatureScheme,
  rate_limit: e.rateLimit,
  disabled_reason: e.disabledReason,
  disabled_at: iso(e.disabledAt),
  failing_since: iso(e.failingSince),
  created_at: iso(e.createdAt),
  updated_at: iso(e.updatedAt),
});

export const deliveryView = (d: DeliveryRecord) => ({
  id: d.id,
  event_id: d.eventId,
  endpoint_id: d.endpointId,
  widget_id: d.widgetId,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: iso(d.nextAttemptAt),
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  order_note: d.orderNote,
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
});

export const attemptView = (a: AttemptRecord) => ({
  started_at: iso(a.startedAt),
  duration_ms: a.durationMs,
  status_code: a.statusCode,
  response_excerpt: a.responseExcerpt,
  error: a.error,
  outcome: a.outcome,
});

export function eventsField(body: Record<string, unknown>, f: Fields, required: boolean): EventType[] | undefined {
  const v = body.events;
  if (v === undefined || v === null) {
    if (required) f.problem('events', 'is required');
    return undefined;
  }
  if (!Array.isArray(v)) return void f.problem('events', `must be an array of event types, got ${typeOf(v)}`);
  if (v.length === 0) return void f.problem('events', `must name at least one of ${EVENT_TYPES.join(', ')}`);
  const seen = new Set<string>();
  let ok = true;
  v.forEach((t, i) => {
    if (typeof t !== 'string' || !(EVENT_TYPES as readonly string[]).includes(t)) {
      ok = false;
      f.problem(`events[${i}]`, `must be one of ${EVENT_TYPES.join(', ')}, got ${quoteValue(t)}`);
    } else if (seen.has(t)) {
      ok = false;
      f.problem(`events[${i}]`, `duplicates ${JSON.stringify(t)}`);
    } else seen.add(t);
  });
  return ok ? (v as EventType[]) : undefined;
}

// Any well-formed string of 1 to SECRET_MAX characters is a secret, whatever its form. A lone
// surrogate or a NUL is refused (by Fields.string): stored it would not read back as sent, and
// deliveries would be signed with a key its owner does not have.
export function secretField(f: Fields): string | undefined {
  const secret = f.string('secret', { min: 1, max: Number.MAX_SAFE_INTEGER });
  if (secret === undefined) return undefined;
  if (length(secret) > SECRET_MAX) return void f.problem('secret', `must be at most ${SECRET_MAX} characters, got ${length(secret)}`);
  return secret;
}

export function schemeField(f: Fields): SignatureScheme | undefined {
  return f.oneOf('signature_scheme', SIGNATURE_SCHEMES);
}

/** `rate_limit`: absent (undefined), null (no limit) or an integer 1…RATE_LIMIT_MAX. */
export function rateField(f: Fields, body: Record<string, unknown>): number | null | undefined {
  if (body.rate_limit === null) return null;
  return f.number('rate_limit', { integer: true, min: 1, max: RATE_LIMIT_MAX });
}

/** An ISO 8601 `since` (body field or query parameter) as epoch ms; a 422 names it otherwise. */
export function sinceField(f: Fields, raw: unknown): number | undefined {
  if (raw === undefined || raw === null) return void f.problem('since', 'is required');
  // Date.parse alone would take `1` (2001, local time), `2026` or `2026-02-30` (March 2) for some instant.
  if (typeof raw !== 'string' || raw.length > 64 || !isRfc3339(raw))
    return void f.problem('since', 'must be an ISO 8601 date-time with a time zone, such as 2026-01-01T12:00:00Z');
  return Date.parse(raw);
}
