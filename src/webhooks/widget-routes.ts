import { HttpError } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { Fields, readJsonObject } from '../http/validate.js';
import { noRoom, requireCurrentPlan, requireRoom } from '../identity/plan-limits.js';
import { hashToken, newToken } from '../identity/tokens.js';
import { iso, widgetView, type WebhookRouteContext } from './route-context.js';

const NAME_MAX = 200;

/** Widgets and their keys. */
export function mountWidgetRoutes(ctx: WebhookRouteContext): void {
  const { server, store, now, widgetOf } = ctx;
  const { auth, plans } = ctx.options;
  const full = server.scoped('full');

  full.post('/v1/widgets', async (req) => {
    const session = await auth.session(req);
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['name']);
    const name = f.string('name', { required: true, max: NAME_MAX, notBlank: true });
    f.done();
    requireCurrentPlan(plans, session.tenant, now(), 'a new widget and its key');
    requireRoom(plans, session.tenant, 'widgets', await store.countWidgets(session.tenant.id));
    const key = newToken('widgetKey');
    // Counted again with the insert: concurrent requests (or replicas) must not all take the last place.
    const max = plans.limits(session.tenant.plan).widgets;
    const created = await store.createWidget(session.tenant.id, name!, { hash: hashToken(key), preview: key.slice(0, 8) }, max ?? Infinity);
    if (created === 'limit') throw noRoom(session.tenant, 'widgets', max!);
    return json(201, { ...widgetView(created.widget), key, key_id: created.key.id });
  });

  full.get('/v1/widgets', async (req) => {
    const session = await auth.session(req);
    const list = new ListPage(req, { list: 'widgets', owner: `tenant:${session.tenant.id}` }, ARRAY_PAGE_LIMIT);
    const page = await store.listWidgets(session.tenant.id, list);
    return json(200, page.data.map(widgetView), list.nextPageHeaders(page.nextCursor));
  });

  full.get('/v1/widgets/:id', async (req) => json(200, widgetView(await widgetOf(req))));

  full.post(
    '/v1/widgets/:id/keys',
    async (req) => {
      const widget = await widgetOf(req);
      requireCurrentPlan(plans, (await auth.session(req)).tenant, now(), 'a new widget key');
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

  full.get('/v1/widgets/:id/keys', async (req) => {
    const widget = await widgetOf(req);
    const list = new ListPage(req, { list: 'widget-keys', owner: `tenant:${widget.tenantId}` }, ARRAY_PAGE_LIMIT);
    const page = await store.listWidgetKeys(widget.id, list);
    return json(
      200,
      page.data.map((k) => ({ id: k.id, preview: k.preview, created_at: iso(k.createdAt), revoked_at: iso(k.revokedAt) })),
      list.nextPageHeaders(page.nextCursor),
    );
  });

  full.delete('/v1/widgets/:id/keys/:keyId', async (req) => {
    const widget = await widgetOf(req);
    if (!(await ctx.options.service.revokeWidgetKey(widget.id, req.params.keyId ?? ''))) throw new HttpError('not_found', 'No active widget key with that id.');
    return empty(204);
  });
}
