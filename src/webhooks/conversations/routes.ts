import type { HttpServer } from '../../http/server.js';
import { mountConversationAnalyticsRoute, mountOwnerConversationRoutes, mountWidgetSettingsRoutes } from './owner-routes.js';
import { conversationRouteContext, type ConversationRoutesOptions } from './route-context.js';
import { mountVisitorActionRoutes, mountVisitorConversationRoutes, mountVisitorWidgetRoutes } from './visitor-routes.js';

/** Mounts the visitor API (public, per widget) and the owner's conversation routes (session), one mount per resource. */
export function mountConversationRoutes(server: HttpServer, options: ConversationRoutesOptions): void {
  const ctx = conversationRouteContext(server, options);
  mountVisitorWidgetRoutes(ctx);
  mountVisitorConversationRoutes(ctx);
  mountVisitorActionRoutes(ctx);
  mountWidgetSettingsRoutes(ctx);
  mountOwnerConversationRoutes(ctx);
  mountConversationAnalyticsRoute(ctx);
}
