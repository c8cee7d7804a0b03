import type { HttpServer, Request } from '../http/server.js';
import { HttpError, validationFailed, type ErrorDetail } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import { Fields, limitParam, readJsonObject, typeOf } from '../http/validate.js';
import { overLimit } from '../http/ratelimit.js';
import { describeRate } from '../ratelimit/limiter.js';
import type { Authenticator } from '../identity/auth.js';
import { bearerToken } from '../identity/auth.js';
import { noRoom, requireCurrentPlan, requireRoom, type TenantPlans } from '../identity/plan-limits.js';
import { hashToken, newToken, TOKEN_PREFIX } from '../identity/tokens.js';
import { generateSecret } from '../signing/webhook.js';
import type { WebhookService } from './service.js';
import { guardUrl, type Resolve } from '../net/ssrf.js';
import type { EndpointPatch } from './store.js';
import {
  EVENT_TYPES,
  type AttemptRecord,
  type DeliveryId,
  type DeliveryRecord,
  type DeliveryStatus,
  type EndpointId,
  type EndpointRecord,
  type EventType,
  type WidgetRecord,
} from './types.js';

export const URL_MAX = 512;
export const SECRET_MAX = 4096;
/** How long the secret replaced by a rotation keeps signing deliveries. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
const NAME_MAX = 200;
const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'inflight', 'succeeded', 'failed'];
/** The fields of an endpoint a client sets (POST, PATCH); any other is refused. */
const ENDPOINT_FIELDS = ['url', 'secret', 'events', 'enabled'] as const;

export interface WebhookRoutesOptions {
  service: WebhookService;
  auth: Authenticator;
  plans: TenantPlans;
  allowPrivate: boolean;
  resolve?: Resolve;
  now?: () => number;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
/** Characters as a person counts them (code points), for the spec's length limits. */
const length = (s: string): number => [...s].length;

const widgetView = (w: WidgetRecord) => ({ id: w.id, name: w.name, created_at: iso(w.createdAt) });

const endpointView = (e: EndpointRecord) => ({
  id: e.id,
  widget_id: e.widgetId,
  url: e.url,
  events: e.events,
  enabled: e.enabled,
  disabled_reason: e.disabledReason,
  failing_since: iso(e.failingSince),
  created_at: iso(e.createdAt),
  updated_at: iso(e.updatedAt),
});

const deliveryView = (d: DeliveryRecord) => ({
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
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
});

const attemptView = (a: AttemptRecord) => ({
  started_at: iso(a.startedAt),
  duration_ms: a.durationMs,
  status_code: a.statusCode,
  response_excerpt: a.responseExcerpt,
  error: a.error,
  outcome: a.outcome,
});

function encodeCursor(seq: number): string {
  return Buffer.from(`d${seq}`).toString('base64url');
}

function decodeCursor(raw: string | null): number | null {
  if (raw === null || raw === '') return null;
  const m = /^d(\d{1,15})$/.exec(Buffer.from(raw, 'base64url').toString());
  if (!m) throw new HttpError('bad_request', 'cursor is not one this API returned.');
  return Number(m[1]);
}

function eventsField(body: Record<string, unknown>, f: Fields, required: boolean): EventType[] | undefined {
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
      f.problem(`events[${i}]`, `must be one of ${EVENT_TYPES.join(', ')}, got ${JSON.stringify(t)}`);
    } else if (seen.has(t)) {
      ok = false;
      f.problem(`events[${i}]`, `duplicates ${JSON.stringify(t)}`);
    } else seen.add(t);
  });
  return ok ? (v as EventType[]) : undefined;
}

/** Mounts the widget, endpoint, event and delivery-log routes. */
export function mountWebhookRoutes(server: HttpServer, options: WebhookRoutesOptions): void {
  const { service, auth } = options;
  const store = service.store;
  const now = options.now ?? Date.now;
  const guard = { allowPrivate: options.allowPrivate, admitUnresolved: true, ...(options.resolve ? { resolve: options.resolve } : {}) };

  const widgetOf = async (req: Request): Promise<WidgetRecord> => {
    const session = await auth.session(req);
    const widget = await store.getWidget(session.tenant.id, req.params.id ?? '');
    if (!widget) throw new HttpError('not_found', `No widget with id ${JSON.stringify(req.params.id ?? '')}.`);
    return widget;
  };

  const endpointOf = async (req: Request): Promise<EndpointRecord> => {
    const widget = await widgetOf(req);
    const endpoint = await store.getEndpoint(widget.id, req.params.endpointId ?? '');
    if (!endpoint) throw new HttpError('not_found', `No webhook endpoint with id ${JSON.stringify(req.params.endpointId ?? '')}.`);
    return endpoint;
  };

  const checkUrl = async (f: Fields, body: Record<string, unknown>, required: boolean): Promise<string | undefined> => {
    const url = body.url;
    if (url === undefined || url === null) {
      if (required) f.problem('url', 'is required');
      return undefined;
    }
    if (typeof url !== 'string') return void f.problem('url', `must be a string, got ${typeOf(url)}`);
    if (length(url) > URL_MAX) return void f.problem('url', `must be at most ${URL_MAX} characters, got ${length(url)}`);
    const verdict = await guardUrl(url, guard);
    if (!verdict.ok) return void f.problem('url', verdict.reason);
    return url;
  };

  // Any well-formed string of 1 to SECRET_MAX characters is a secret, whatever its form. A lone
  // surrogate or a NUL is refused (by Fields.string): stored it would not read back as sent, and
  // deliveries would be signed with a key its owner does not have.
  const secretField = (f: Fields): string | undefined => {
    const secret = f.string('secret', { min: 1, max: Number.MAX_SAFE_INTEGER });
    if (secret === undefined) return undefined;
    if (length(secret) > SECRET_MAX) return void f.problem('secret', `must be at most ${SECRET_MAX} characters, got ${length(secret)}`);
    return secret;
  };

  server.post('/v1/widgets', async (req) => {
    const session = await auth.session(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    const name = f.string('name', { required: true, max: NAME_MAX });
    f.done();
    requireCurrentPlan(options.plans, session.tenant, now(), 'a new widget and its key');
    requireRoom(options.plans, session.tenant, 'widgets', (await store.listWidgets(session.tenant.id)).length);
    const key = newToken('widgetKey');
    // Counted again with the insert: concurrent requests (or replicas) must not all take the last place.
    const max = options.plans.limits(session.tenant.plan).widgets;
    const created = await store.createWidget(session.tenant.id, name!, { hash: hashToken(key), preview: key.slice(0, 8) }, max ?? Infinity);
    if (created === 'limit') throw noRoom(session.tenant, 'widgets', max!);
    return json(201, { ...widgetView(created.widget), key, key_id: created.key.id });
  });

  server.get('/v1/widgets', async (req) => {
    const session = await auth.session(req);
    return json(200, (await store.listWidgets(session.tenant.id)).map(widgetView));
  });

  server.get('/v1/widgets/:id', async (req) => json(200, widgetView(await widgetOf(req))));

  server.post(
    '/v1/widgets/:id/keys',
    async (req) => {
      const widget = await widgetOf(req);
      requireCurrentPlan(options.plans, (await auth.session(req)).tenant, now(), 'a new widget key');
      const key = newToken('widgetKey');
      const max = auth.limits.liveWidgetKeys;
      const record = await store.createWidgetKey(widget.id, { hash: hashToken(key), preview: key.slice(0, 8) }, max);
      if (record === 'limit')
        throw new HttpError(
          'plan_limit',
          `A widget may have at most ${max} live keys; revoke one (DELETE /v1/widgets/${widget.id}/keys/{keyId}) before creating another.`,
        );
      return json(201, { id: record.id, key, preview: record.preview, created_at: iso(record.createdAt) });
    },
    { body: 'none' },
  );

  server.get('/v1/widgets/:id/keys', async (req) => {
    const widget = await widgetOf(req);
    const keys = await store.listWidgetKeys(widget.id);
    return json(
      200,
      keys.map((k) => ({ id: k.id, preview: k.preview, created_at: iso(k.createdAt), revoked_at: iso(k.revokedAt) })),
    );
  });

  server.delete('/v1/widgets/:id/keys/:keyId', async (req) => {
    const widget = await widgetOf(req);
    if (!(await store.revokeWidgetKey(widget.id, req.params.keyId ?? ''))) throw new HttpError('not_found', 'No active widget key with that id.');
    return empty(204);
  });

  server.get('/v1/widgets/:id/webhooks', async (req) => {
    const widget = await widgetOf(req);
    return json(200, (await store.listEndpoints(widget.id)).map(endpointView));
  });

  server.post('/v1/widgets/:id/webhooks', async (req) => {
    const widget = await widgetOf(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(ENDPOINT_FIELDS);
    const url = await checkUrl(f, body, true);
    const secret = secretField(f);
    const events = eventsField(body, f, true);
    const enabled = f.boolean('enabled');
    f.done();
    const max = auth.limits.endpointsPerWidget;
    const endpoint = await store.createEndpoint(widget.id, { url: url!, secret: secret ?? generateSecret(), events: events!, enabled: enabled ?? true }, max);
    if (endpoint === 'limit') throw new HttpError('plan_limit', `A widget may have at most ${max} webhook endpoints; delete one before adding another.`);
    // The secret is shown here and after a rotation, never again.
    return json(201, { ...endpointView(endpoint), secret: endpoint.secret });
  });

  server.get('/v1/widgets/:id/webhooks/:endpointId', async (req) => json(200, endpointView(await endpointOf(req))));

  server.patch('/v1/widgets/:id/webhooks/:endpointId', async (req) => {
    const endpoint = await endpointOf(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(ENDPOINT_FIELDS);
    // None of these can be unset, and null read as absent would answer 200 with nothing changed.
    for (const key of ENDPOINT_FIELDS) if (body[key] === null) f.problem(key, 'must not be null; leave the field out to keep its value');
    const url = await checkUrl(f, body, false);
    const secret = secretField(f);
    const events = eventsField(body, f, false);
    const enabled = f.boolean('enabled');
    f.done();
    const patch: EndpointPatch = {};
    if (url !== undefined) patch.url = url;
    if (events !== undefined) patch.events = events;
    if (enabled !== undefined) patch.enabled = enabled;
    let updated = await store.updateEndpoint(endpoint.widgetId, endpoint.id, patch);
    // A secret set by PATCH is a rotation to the caller's value: the old one keeps signing
    // webhook-signature for the overlap, so receivers can switch without losing deliveries.
    if (updated && secret !== undefined) updated = await store.rotateSecret(endpoint.widgetId, endpoint.id, secret, now() + ROTATION_OVERLAP_MS);
    if (!updated) throw new HttpError('not_found', 'No webhook endpoint with that id.');
    return json(200, endpointView(updated));
  });

  server.delete('/v1/widgets/:id/webhooks/:endpointId', async (req) => {
    const endpoint = await endpointOf(req);
    await store.deleteEndpoint(endpoint.widgetId, endpoint.id);
    return empty(204);
  });

  server.post(
    '/v1/widgets/:id/webhooks/:endpointId/rotate-secret',
    async (req) => {
      const endpoint = await endpointOf(req);
      const expires = now() + ROTATION_OVERLAP_MS;
      const rotated = await store.rotateSecret(endpoint.widgetId, endpoint.id, generateSecret(), expires);
      if (!rotated) throw new HttpError('not_found', 'No webhook endpoint with that id.');
      return json(200, { ...endpointView(rotated), secret: rotated.secret, previous_secret_expires_at: iso(expires) });
    },
    { body: 'none' },
  );

  server.get('/v1/widgets/:id/webhooks/:endpointId/deliveries', async (req) => {
    const endpoint = await endpointOf(req);
    const limit = limitParam(req, 20, 100);
    const before = decodeCursor(req.searchParams().get('cursor'));
    const status = req.searchParams().get('status');
    if (status !== null && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
      throw new HttpError('bad_request', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`);
    }
    const page = await store.listDeliveries(endpoint.id, { limit, before, ...(status ? { status: status as DeliveryStatus } : {}) });
    return json(200, { data: page.data.map(deliveryView), next_cursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor) });
  });

  server.get('/v1/widgets/:id/webhooks/:endpointId/deliveries/:deliveryId', async (req) => {
    const endpoint = await endpointOf(req);
    const d = await store.getDelivery(endpoint.id, req.params.deliveryId ?? '');
    if (!d) throw new HttpError('not_found', 'No delivery with that id for this endpoint.');
    return json(200, { ...deliveryView(d), attempt_log: d.attemptLog.map(attemptView) });
  });

  server.post(
    '/v1/widgets/:id/webhooks/:endpointId/deliveries/:deliveryId/retry',
    async (req) => {
      const endpoint = await endpointOf(req);
      if (!endpoint.enabled) throw new HttpError('conflict', 'The endpoint is disabled; enable it (PATCH enabled: true) before retrying.');
      const d = await store.retryDelivery(endpoint.id, (req.params.deliveryId ?? '') as DeliveryId);
      if (d === null) throw new HttpError('not_found', 'No delivery with that id for this endpoint.');
      if (d === 'inflight') throw new HttpError('conflict', 'The delivery is being attempted right now.');
      service.dispatcher.notify();
      return json(202, deliveryView(d));
    },
    { body: 'none' },
  );

  server.post('/v1/widgets/:id/webhooks/:endpointId/recover', async (req) => {
    const endpoint = await endpointOf(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(['since']);
    const since = f.string('since', { required: true, max: 64 });
    const at = since === undefined ? NaN : Date.parse(since);
    if (since !== undefined && Number.isNaN(at)) f.problem('since', 'must be an ISO 8601 date-time');
    f.done();
    if (!endpoint.enabled) throw new HttpError('conflict', 'The endpoint is disabled; enable it (PATCH enabled: true) before recovering.');
    const requeued = await store.recoverFailed(endpoint.id as EndpointId, at);
    if (requeued > 0) service.dispatcher.notify();
    return json(202, { requeued });
  });

  server.post(
    '/v1/widgets/:id/events',
    async (req) => {
      const token = bearerToken(req);
      let widget: WidgetRecord;
      if (token?.startsWith(TOKEN_PREFIX.widgetKey)) {
        const key = await service.widgetKey(token);
        const rate = auth.limits.widgetKey;
        const d = auth.limiter.hit(`widget-key:${hashToken(token)}`, rate, now());
        if (!d.allowed) throw overLimit(d, `${describeRate(rate)} per widget key`);
        if (key.widgetId !== req.params.id) throw new HttpError('forbidden', 'This widget key belongs to another widget.');
        const found = await store.getWidget(key.tenant.id, key.widgetId);
        if (!found) throw new HttpError('not_found', 'No widget with that id.');
        widget = found;
      } else widget = await widgetOf(req);
      const body = readJsonObject(req);
      const details: ErrorDetail[] = [];
      for (const key of Object.keys(body))
        if (key !== 'event' && key !== 'data') details.push({ path: key, message: 'is not a known field; expected event, data' });
      if (details.length > 0) throw validationFailed(details);
      const accepted = await service.emitFor(widget, body.event, body.data);
      return json(202, accepted);
    },
    { maxBody: 64 * 1024 },
  );
}
