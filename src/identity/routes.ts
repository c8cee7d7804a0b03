import type { HttpServer } from '../http/server.js';
import { mountApiKeyRevokeRoute, mountApiKeyRoutes } from './api-key-routes.js';
import { identityRouteContext, type IdentityRoutesOptions } from './route-context.js';
import { mountSessionRoutes } from './session-routes.js';
import { mountTenantAdminRoutes } from './tenant-routes.js';
import { mountPersonalTokenRoutes } from './token-routes.js';

/** Every identity route, one mount per resource, in the order the route table has always had. */
export function mountIdentityRoutes(server: HttpServer, options: IdentityRoutesOptions): void {
  const ctx = identityRouteContext(server, options);
  mountTenantAdminRoutes(ctx);
  mountSessionRoutes(ctx);
  mountApiKeyRoutes(ctx);
  mountPersonalTokenRoutes(ctx);
  mountApiKeyRevokeRoute(ctx);
}

// The identity module's public face: other services and the limit tests import these from here.
export { requirePlan, type IdentityRoutesOptions, type TenantInsights } from './route-context.js';
export { SESSION_TTL_MS } from './session-routes.js';
export { MAX_LIVE_PERSONAL_TOKENS, MAX_TOKEN_DAYS } from './token-routes.js';
