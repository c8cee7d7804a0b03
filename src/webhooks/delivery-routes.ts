import { HttpError } from '../http/errors.js';
import { ListPage } from '../http/pagination.js';
import { json } from '../http/reply.js';
import { Fields, readJsonObject } from '../http/validate.js';
import { attemptView, deliveryView, iso, sinceField, type WebhookRouteContext } from './route-context.js';
import type { DeliveryId, DeliveryStatus } from './types.js';

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'inflight', 'succeeded', 'failed'];

/** An endpoint's delivery log: the list, one delivery with its payload and answers, retry, and replay of the failed ones since a time. */
export function mountDeliveryRoutes(ctx: WebhookRouteContext): void {
  const { server, store, endpointOf } = ctx;
  const { service } = ctx.options;
  const full = server.scoped('full');
  const base = '/v1/widgets/:id/webhooks/:endpointId';

  full.get(`${base}/deliveries`, async (req) => {
    const endpoint = await endpointOf(req);
    // Empty is not given, as on every list's filter (a form's unselected filter sends `status=`).
    const status = req.searchParams().get('status') || null;
    if (status !== null && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
      throw new HttpError('bad_request', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`);
    }
    const list = new ListPage(req, { list: 'deliveries', owner: `widget:${endpoint.widgetId}`, filters: { status } });
    const page = await store.listDeliveries(endpoint.id, { limit: list.limit, before: list.from, ...(status ? { status: status as DeliveryStatus } : {}) });
    return json(200, { data: page.data.map(deliveryView), next_cursor: list.cursor(page.nextCursor) });
  });

  full.get(`${base}/deliveries/:deliveryId`, async (req) => {
    const endpoint = await endpointOf(req);
    const d = await store.getDelivery(endpoint.id, req.params.deliveryId ?? '');
    if (!d) throw new HttpError('not_found', 'No delivery with that id for this endpoint.');
    return json(200, { ...deliveryView(d), payload: d.payload, attempt_log: d.attemptLog.map(attemptView) });
  });

  full.post(
    `${base}/deliveries/:deliveryId/retry`,
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

  // The count first: how many failed deliveries a replay since that time would queue.
  full.get(`${base}/recover`, async (req) => {
    const endpoint = await endpointOf(req);
    const f = new Fields({});
    const since = sinceField(f, req.searchParams().get('since') ?? undefined);
    f.done();
    return json(200, { since: iso(since!), failed: await store.countFailed(endpoint.id, since!) });
  });

  full.post(`${base}/recover`, async (req) => {
    const endpoint = await endpointOf(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    f.onlyKnown(['since']);
    const since = sinceField(f, body.since);
    f.done();
    if (!endpoint.enabled) throw new HttpError('conflict', 'The endpoint is disabled; enable it (PATCH enabled: true) before recovering.');
    const requeued = await store.recoverFailed(endpoint.id, since!);
    if (requeued > 0) service.dispatcher.notify();
    return json(202, { requeued });
  });
}
