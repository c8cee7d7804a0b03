import { echoedKey, HttpError, validationFailed, type ErrorDetail } from '../http/errors.js';
import { json } from '../http/reply.js';
import { readJsonObject } from '../http/validate.js';
import { overLimit } from '../http/ratelimit.js';
import { describeRate } from '../ratelimit/limiter.js';
import { bearerToken } from '../identity/auth.js';
import { hashToken, TOKEN_PREFIX } from '../identity/tokens.js';
import type { WebhookRouteContext } from './route-context.js';
import type { WidgetRef } from './key-cache.js';

/** Largest body of POST /v1/widgets/{id}/events. */
export const EVENT_BODY_MAX = 64 * 1024;

/** Posting an event (session or the widget's key). */
export function mountEventRoutes(ctx: WebhookRouteContext): void {
  const { server, now, widgetOf } = ctx;
  const { service, auth } = ctx.options;
  const full = server.scoped('full');

  full.post(
    '/v1/widgets/:id/events',
    async (req) => {
      const token = bearerToken(req);
      let widget: WidgetRef;
      if (token?.startsWith(TOKEN_PREFIX.widgetKey)) {
        const key = await service.widgetKey(token, req);
        const rate = auth.limits.widgetKey;
        const d = auth.limiter.hit(`widget-key:${hashToken(token)}`, rate, now());
        if (!d.allowed) throw overLimit(d, `${describeRate(rate)} per widget key`);
        if (key.widget.id !== req.params.id) throw new HttpError('forbidden', 'This widget key belongs to another widget.');
        // Read with the key (the key's row names it): no second look-up.
        widget = key.widget;
      } else widget = await widgetOf(req);
      const body = readJsonObject(req);
      const details: ErrorDetail[] = [];
      for (const key of Object.keys(body))
        if (key !== 'event' && key !== 'data') details.push({ path: echoedKey(key), message: 'is not a known field; expected event, data' });
      if (details.length > 0) throw validationFailed(details);
      const accepted = await service.emitFor(widget, body.event, body.data);
      return json(202, accepted);
    },
    { maxBody: EVENT_BODY_MAX },
  );
}
