import type { HttpServer } from '../../http/server.js';
import { mountAccountRoutes } from './account-routes.js';
import { mountCheckoutReturnRoute, mountCheckoutRoutes } from './checkout-routes.js';
import { mountOfflineCheckoutRoutes } from './offline-routes.js';
import { billingRouteContext, type BillingOptions } from './route-context.js';
import { mountStripeWebhookRoute } from './stripe-routes.js';

/** Spec 001 §4.3 billing: the plan catalogue, checkouts that grant a plan, and the tenant's account. */
export function mountBillingRoutes(server: HttpServer, o: BillingOptions): void {
  const ctx = billingRouteContext(server, o);
  mountAccountRoutes(ctx);
  mountCheckoutRoutes(ctx);
  mountOfflineCheckoutRoutes(ctx);
  mountStripeWebhookRoute(ctx);
  mountCheckoutReturnRoute(ctx);
}
