import type { HttpServer } from '../http/server.js';
import { routeContext, type WebhookRoutesOptions } from './routes-context.js';
import { mountDeliveryRoutes } from './routes-deliveries.js';
import { mountEndpointRoutes } from './routes-endpoints.js';
import { mountEventRoutes } from './routes-events.js';
import { mountServiceRoutes } from './routes-service.js';
import { mountWidgetRoutes } from './routes-widgets.js';

export { ROTATION_OVERLAP_MS, SECRET_MAX, URL_MAX, type WebhookRoutesOptions } from './routes-context.js';

/** Mounts the webhook routes, one module per resource. */
export function mountWebhookRoutes(server: HttpServer, options: WebhookRoutesOptions): void {
  const ctx = routeContext(server, options);
  mountWidgetRoutes(ctx);
  mountEndpointRoutes(ctx);
  mountDeliveryRoutes(ctx);
  mountEventRoutes(ctx);
  mountServiceRoutes(ctx);
}
