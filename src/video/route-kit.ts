import { HttpError } from '../http/errors.js';
import { isClientAbort } from '../http/guard.js';
import type { Handler, Request } from '../http/server.js';
import type { Reply } from '../http/reply.js';
import { rateHeaders } from '../http/ratelimit.js';
import type { Authenticator } from '../identity/auth.js';
import { requirePlan } from '../identity/routes.js';
import type { TenantRecord } from '../identity/types.js';
import type { Logger } from '../log.js';
import { VIDEO_STATUSES, type VideoStatus } from './types.js';

/** A property-video route's handler, given the tenant its credential speaks for. */
export type TenantHandler = (req: Request, tenant: TenantRecord) => Promise<Reply>;

function withHeaders(reply: Reply, headers: Record<string, string>): Reply {
  return { ...reply, headers: { ...reply.headers, ...headers } };
}

/** Cursors are opaque to clients: the id the previous page ended on, versioned so the format can change. */
export function encodeCursor(after: number | null): string | null {
  return after === null ? null : Buffer.from(`v1:${after}`).toString('base64url');
}

export function decodeCursor(req: Request): number | null {
  const raw = req.searchParams().get('cursor');
  if (raw === null || raw === '') return null;
  const m = /^v1:(\d{1,15})$/.exec(Buffer.from(raw, 'base64url').toString('latin1'));
  if (!m) throw new HttpError('bad_request', 'cursor is not one this API issued; pass next_cursor from the previous page.');
  return Number(m[1]);
}

export function optionalId(req: Request, name: string): number | undefined {
  const raw = req.searchParams().get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw new HttpError('bad_request', `${name} must be a positive integer, got ${JSON.stringify(raw)}.`);
  return Number(raw);
}

export function statusParam(req: Request): VideoStatus | undefined {
  const raw = req.searchParams().get('status');
  if (raw === null || raw === '') return undefined;
  if (!(VIDEO_STATUSES as readonly string[]).includes(raw))
    throw new HttpError('bad_request', `status must be one of ${VIDEO_STATUSES.join(', ')}, got ${JSON.stringify(raw)}.`);
  return raw as VideoStatus;
}

/**
 * Wraps a property-video route: an API key or a user session of the tenant (the dashboard),
 * counted by the authenticator against its rate limits (429 past them), then the plan. From
 * the rate limit on, every answer (errors too) carries the X-RateLimit-* headers of the
 * credential's limit; an unexpected fault is logged and answered 500 without internals.
 */
export function tenantRoute(auth: Authenticator, logger: Logger): (h: TenantHandler) => Handler {
  return (h) => async (req) => {
    const principal = await auth.tenant(req);
    const headers = rateHeaders(principal.rate);
    try {
      requirePlan(principal.tenant.plan, 'agency');
      return withHeaders(await h(req, principal.tenant), headers);
    } catch (err) {
      if (err instanceof HttpError)
        throw new HttpError(err.code, err.message, { ...(err.details ? { details: err.details } : {}), headers: { ...err.headers, ...headers } });
      // A client that went away is not a server fault: the server logs it at debug level.
      if (req.aborted || isClientAbort(err)) throw err;
      logger.error('video API request failed', { path: req.path, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      throw new HttpError('internal', undefined, { headers });
    }
  };
}
