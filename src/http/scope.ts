/**
 * Who may call a route, declared where the route is mounted (RouteOptions.scope) and carried
 * on each of its requests (Request.scope). The authenticator checks a personal access token
 * against the scope of the route it calls, so the routes a token scope admits are read off the
 * route table, not kept in a second list of paths.
 */

/**
 * What a personal access token may be granted, narrowest first: each admits every route the
 * ones before it admit. `config:*` exist so that a token kept in a CI system can pull and
 * publish configuration and nothing else; `full` is for scripts that act as the user.
 */
export const TOKEN_SCOPES = ['config:read', 'config:write', 'full'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * A route's scope:
 * - a token scope: a user's route, for a login session or a personal access token holding that
 *   scope or a wider one;
 * - `login`: a user's route that only a login session may call, never a personal access token
 *   (managing tokens, logging out: a leaked token cannot mint another);
 * - `admin`: the admin token's;
 * - `server-key`: a server key's (the sidecar's signed requests);
 * - `public`: no credential of a user or operator: anyone, or a credential the route checks
 *   itself (a signature over the body, a signed URL, a visitor's conversation token).
 */
export const ROUTE_SCOPES = [...TOKEN_SCOPES, 'login', 'admin', 'server-key', 'public'] as const;
export type RouteScope = (typeof ROUTE_SCOPES)[number];

/**
 * Whether a personal access token holding `held` may call a route of scope `route`: a public
 * one, as anyone may; a user's route of its scope or a narrower one; never a login, admin or
 * server-key route, nor one that declared no scope (null).
 */
export function tokenAdmits(held: readonly TokenScope[], route: RouteScope | null): boolean {
  if (route === 'public') return true;
  const needed = TOKEN_SCOPES.indexOf(route as TokenScope);
  if (needed < 0) return false;
  for (const scope of held) if (TOKEN_SCOPES.indexOf(scope) >= needed) return true;
  return false;
}
