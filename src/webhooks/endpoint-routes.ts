import { HttpError } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import type { Handler } from '../http/server.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { Fields, readJsonObject } from '../http/validate.js';
import { generateSecret } from '../signing/webhook.js';
import { endpointView, eventsField, iso, rateField, ROTATION_OVERLAP_MS, schemeField, secretField, type WebhookRouteContext } from './route-context.js';
import type { EndpointPatch } from './store.js';

/** The fields of an endpoint a client sets (POST, PATCH); any other is refused. */
const ENDPOINT_FIELDS = ['url', 'secret', 'events', 'enabled', 'signature_scheme', 'rate_limit'] as const;

/** One page of a widget's endpoints: a bare array, the next page in a Link header. */
function listEndpoints({ store, widgetOf }: WebhookRouteContext): Handler {
  return async (req) => {
    const widget = await widgetOf(req);
    const list = new ListPage(req, { list: 'endpoints', owner: `tenant:${widget.tenantId}` }, ARRAY_PAGE_LIMIT);
    const page = await store.listEndpoints(widget.id, list);
    return json(200, page.data.map(endpointView), list.nextPageHeaders(page.nextCursor));
  };
}

/** A widget's webhook endpoints: create, read, change, rotate the secret, delete. */
export function mountEndpointRoutes(ctx: WebhookRouteContext): void {
  const { server, store, now, widgetOf, endpointOf, checkUrl } = ctx;
  const { auth } = ctx.options;
  const full = server.scoped('full');

  full.get('/v1/widgets/:id/webhooks', listEndpoints(ctx));

  full.post('/v1/widgets/:id/webhooks', async (req) => {
    const widget = await widgetOf(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(ENDPOINT_FIELDS);
    const url = await checkUrl(f, body, true);
    const secret = secretField(f);
    const events = eventsField(body, f, true);
    const enabled = f.boolean('enabled');
    const signatureScheme = schemeField(f);
    const rateLimit = rateField(f, body);
    f.done();
    const max = auth.limits.endpointsPerWidget;
    const input = { url: url!, secret: secret ?? generateSecret(), events: events!, enabled: enabled ?? true, signatureScheme, rateLimit: rateLimit ?? null };
    const endpoint = await store.createEndpoint(widget.id, input, max);
    if (endpoint === 'limit') throw new HttpError('plan_limit', `A widget may have at most ${max} webhook endpoints; delete one before adding another.`);
    // The secret is shown here and after a rotation, never again.
    return json(201, { ...endpointView(endpoint), secret: endpoint.secret });
  });

  full.get('/v1/widgets/:id/webhooks/:endpointId', async (req) => json(200, endpointView(await endpointOf(req))));

  full.patch('/v1/widgets/:id/webhooks/:endpointId', async (req) => {
    const endpoint = await endpointOf(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(ENDPOINT_FIELDS);
    // None of these can be unset (rate_limit: null is "no limit"), and null read as absent would answer 200 with nothing changed.
    for (const key of ENDPOINT_FIELDS)
      if (key !== 'rate_limit' && body[key] === null) f.problem(key, 'must not be null; leave the field out to keep its value');
    const url = await checkUrl(f, body, false);
    const secret = secretField(f);
    const events = eventsField(body, f, false);
    const enabled = f.boolean('enabled');
    const signatureScheme = schemeField(f);
    const rateLimit = rateField(f, body);
    f.done();
    const patch: EndpointPatch = {};
    if (url !== undefined) patch.url = url;
    if (events !== undefined) patch.events = events;
    if (enabled !== undefined) patch.enabled = enabled;
    if (signatureScheme !== undefined) patch.signatureScheme = signatureScheme;
    if (rateLimit !== undefined) patch.rateLimit = rateLimit;
    let updated = await store.updateEndpoint(endpoint.widgetId, endpoint.id, patch);
    // A secret set by PATCH is a rotation to the caller's value: the old one keeps signing
    // webhook-signature for the overlap, so receivers can switch without losing deliveries.
    if (updated && secret !== undefined) updated = await store.rotateSecret(endpoint.widgetId, endpoint.id, secret, now() + ROTATION_OVERLAP_MS);
    if (!updated) throw new HttpError('not_found', 'No webhook endpoint with that id.');
    return json(200, endpointView(updated));
  });

  full.delete('/v1/widgets/:id/webhooks/:endpointId', async (req) => {
    const endpoint = await endpointOf(req);
    await store.deleteEndpoint(endpoint.widgetId, endpoint.id);
    return empty(204);
  });

  full.post(
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
}
