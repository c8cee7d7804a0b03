import type { Request } from '../http/server.js';
import { HttpError, quoteId } from '../http/errors.js';
import { ID_DIGITS } from '../http/validate.js';
import type { Authenticator, SessionPrincipal } from '../identity/auth.js';
import type { UserId, UserRecord } from '../identity/types.js';
import type { TenantPlans } from '../identity/plan-limits.js';
import type { ControlPlaneSync } from './cluster.js';
import type { HeadCache } from './heads.js';
import type { LineQuota } from './line-quota.js';
import type { ServerKeyAuth } from './server-key-auth.js';
import type { ControlPlaneStore } from './store.js';
import type { SidecarPulls } from './connections.js';
import type { BundleSigner } from './bundle-signer.js';
import type { ConfigStreams } from './config-stream.js';
import type { ServerId, ServerRecord } from './types.js';

/** What the route modules of the control plane share. */
export interface ControlPlaneContext {
  store: ControlPlaneStore;
  auth: Authenticator;
  keyAuth: ServerKeyAuth;
  heads: HeadCache;
  users: { getUser(id: UserId): Promise<UserRecord | null> };
  /** Plan limits and trial ends, from the billing catalogue. */
  plans: TenantPlans;
  quota: LineQuota;
  /** Tells the other replicas on the database what this one changed. */
  sync: ControlPlaneSync;
  /** The last config pull of each server (the dashboard's connection line). */
  pulls: SidecarPulls;
  /** The installation's bundle-signing key. */
  signer: BundleSigner;
  /** The open config push streams of this process. */
  streams: ConfigStreams;
  now: () => number;
}

/**
 * The session and the server of `:id`, which the session's tenant must own. An unknown id, a
 * malformed one and another tenant's all answer the same 404 config_not_found ("no server with
 * the given id"), so ids do not reveal what exists.
 */
export async function ownedServer(ctx: ControlPlaneContext, req: Request): Promise<{ session: SessionPrincipal; server: ServerRecord }> {
  const session = await ctx.auth.session(req);
  const raw = req.params.id ?? '';
  const id = ID_DIGITS.test(raw) ? (Number(raw) as ServerId) : null;
  const server = id === null ? null : await ctx.store.getServer(id);
  if (!server || server.tenantId !== session.tenant.id) throw new HttpError('config_not_found', `No server with id ${quoteId(raw)}.`);
  return { session, server };
}

/** Who a history entry names: the session's user's e-mail. */
export async function publisher(ctx: ControlPlaneContext, session: SessionPrincipal): Promise<string> {
  return (await ctx.users.getUser(session.userId))?.email ?? `user ${session.userId}`;
}
