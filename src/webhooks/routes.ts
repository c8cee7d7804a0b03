import type { HttpServer } from '../http/server.js';
import { routeContext, type WebhookRoutesOptions } from './route-context.js';
import { mountDeliveryRoutes } from './delivery-routes.js';
import { mountEndpointRoutes } from './endpoint-routes.js';
import { mountEventRoutes } from './event-routes.js';
import { mountServiceRoutes } from './service-routes.js';
import { mountWidgetRoutes } from './widget-routes.js';

export { ROTATION_OVERLAP_MS, SECRET_MAX, URL_MAX, type WebhookRoutesOptions } from './route-context.js';

/** Mounts the webhook routes, one module per resource. */
export function mountWebhookRoutes(server: HttpServer, options: WebhookRoutesOptions): void {
  const ctx = routeContext(server, options);
  mountWidgetRoutes(ctx);
  mountEndpointRoutes(ctx);
  mountDeliveryRoutes(ctx);
  mountEventRoutes(ctx);
  mountServiceRoutes(ctx);
}
