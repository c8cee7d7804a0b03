import type { Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { idParam } from '../http/validate.js';
import type { Authenticator, SessionPrincipal } from '../identity/auth.js';
import type { UserId, UserRecord } from '../identity/types.js';
import type { HeadCache } from './heads.js';
import type { ServerKeyAuth } from './server-key-auth.js';
import type { ControlPlaneStore } from './store.js';
import type { ServerId, ServerRecord } from './types.js';

/** What the route modules of the control plane share. */
export interface ControlPlaneContext {
  store: ControlPlaneStore;
  auth: Authenticator;
  keyAuth: ServerKeyAuth;
  heads: HeadCache;
  users: { getUser(id: UserId): Promise<UserRecord | null> };
  now: () => number;
}

/**
 * The session and the server of `:id`, which the session's tenant must own; another tenant's
 * server is a 404, so ids do not reveal what exists.
 */
export async function ownedServer(ctx: ControlPlaneContext, req: Request): Promise<{ session: SessionPrincipal; server: ServerRecord }> {
  const session = await ctx.auth.session(req);
  const id = idParam(req.params.id, 'server') as ServerId;
  const server = await ctx.store.getServer(id);
  if (!server || server.tenantId !== session.tenant.id) throw new HttpError('not_found', `No server with id ${id}.`);
  return { session, server };
}

/** Who a history entry names: the session's user's e-mail. */
export async function publisher(ctx: ControlPlaneContext, session: SessionPrincipal): Promise<string> {
  return (await ctx.users.getUser(session.userId))?.email ?? `user ${session.userId}`;
}
