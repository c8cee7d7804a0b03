import { HttpError, quoteId } from '../http/errors.js';
import { json } from '../http/reply.js';
import { Fields, readJsonObject, typeOf } from '../http/validate.js';
import { eventCatalogue } from './catalogue.js';
import { iso, type WebhookRouteContext } from './route-context.js';

/** How long a client may cache the JWKS: well inside the key overlap, so a rotation is always seen in time. */
export const JWKS_MAX_AGE_S = 300;

/** Installation- and tenant-wide webhook routes: the v1a keys, the event catalogue, the operational endpoint, the breaker's alerts. */
export function mountServiceRoutes(ctx: WebhookRouteContext): void {
  const { server, store } = ctx;
  const { auth, keys } = ctx.options;
  const anyone = server.scoped('public');
  const full = server.scoped('full');
  const admin = server.scoped('admin');

  // Public: a receiver fetches the keys that verify v1a signatures without any credential.
  anyone.get('/v1/webhooks/keys', async () => json(200, await keys.jwks(), { 'cache-control': `public, max-age=${JWKS_MAX_AGE_S}` }));

  admin.post(
    '/v1/admin/webhooks/keys/rotate',
    async (req) => {
      await auth.admin(req);
      await keys.rotate();
      return json(200, await keys.jwks());
    },
    { body: 'none' },
  );

  // Public, like any API reference: the schema of every delivery body.
  anyone.get('/v1/webhooks/event-types', async () => json(200, { data: eventCatalogue() }));

  full.get('/v1/webhooks/operational-endpoint', async (req) => {
    const session = await auth.session(req);
    const ep = await store.getOperationalEndpoint(session.tenant.id);
    return json(200, { endpoint_id: ep?.id ?? null, widget_id: ep?.widgetId ?? null, url: ep?.url ?? null, enabled: ep?.enabled ?? null });
  });

  full.put('/v1/webhooks/operational-endpoint', async (req) => {
    const session = await auth.session(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(['endpoint_id']);
    const id = body.endpoint_id;
    if (id === undefined) f.problem('endpoint_id', 'is required (null clears it)');
    else if (id !== null && typeof id !== 'string') f.problem('endpoint_id', `must be an endpoint id or null, got ${typeOf(id)}`);
    f.done();
    if (!(await store.setOperationalEndpoint(session.tenant.id, id as string | null))) {
      throw new HttpError('not_found', `No webhook endpoint with id ${quoteId(id)} on this tenant's widgets.`);
    }
    const ep = await store.getOperationalEndpoint(session.tenant.id);
    return json(200, { endpoint_id: ep?.id ?? null, widget_id: ep?.widgetId ?? null, url: ep?.url ?? null, enabled: ep?.enabled ?? null });
  });

  full.get('/v1/webhooks/disabled-endpoints', async (req) => {
    const session = await auth.session(req);
    const rows = await store.disabledEndpoints(session.tenant.id);
    return json(
      200,
      rows.map((r) => ({ endpoint_id: r.endpointId, widget_id: r.widgetId, url: r.url, reason: r.reason, disabled_at: iso(r.disabledAt) })),
    );
  });
}
