import { HttpError, quoteValue } from '../http/errors.js';
import { isClientAbort } from '../http/guard.js';
import type { Handler, Request } from '../http/server.js';
import { empty, type Reply } from '../http/reply.js';
import { ID_DIGITS, idParam } from '../http/validate.js';
import type { DeleteOutcome, VideoStore } from './store.js';
import type { Area, AssetStorage } from './storage.js';
import { rateHeaders } from '../http/ratelimit.js';
import type { Authenticator } from '../identity/auth.js';
import { requirePlan } from '../identity/routes.js';
import type { TenantRecord } from '../identity/types.js';
import type { Logger } from '../log.js';
import { VIDEO_STATUSES, type PropertyId, type PropertyRecord, type VideoStatus } from './types.js';

/** A property-video route's handler, given the tenant its credential speaks for. */
export type TenantHandler = (req: Request, tenant: TenantRecord) => Promise<Reply>;

function withHeaders(reply: Reply, headers: Record<string, string>): Reply {
  return { ...reply, headers: { ...reply.headers, ...headers } };
}

export function optionalId(req: Request, name: string): number | undefined {
  const raw = req.searchParams().get(name);
  if (raw === null || raw === '') return undefined;
  // Written as an id is (no leading zero): `property_id=007` is not property 7.
  if (!ID_DIGITS.test(raw)) throw new HttpError('bad_request', `${name} must be a positive integer without leading zeros, got ${quoteValue(raw)}.`);
  return Number(raw);
}

export function statusParam(req: Request): VideoStatus | undefined {
  const raw = req.searchParams().get('status');
  if (raw === null || raw === '') return undefined;
  if (!(VIDEO_STATUSES as readonly string[]).includes(raw))
    throw new HttpError('bad_request', `status must be one of ${VIDEO_STATUSES.join(', ')}, got ${quoteValue(raw)}.`);
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

/** Helpers the property-video routes share: look-ups answering 404, and the clean-up of deleted files. */
export interface VideoRouteKit {
  propertyOr404(tenant: TenantRecord, raw: string | undefined): Promise<PropertyRecord>;
  /**
   * Runs a write that references a property which may have been deleted since the request
   * looked it up (an upload takes a while): the write then fails on the reference, and the
   * answer is the 404 a request that came a moment later would get.
   */
  whileProperty<T>(tenant: TenantRecord, id: PropertyId, write: () => Promise<T>): Promise<T>;
  /** Removes the files a delete orphaned; the records are already gone, so a failure here is only logged. */
  removeOrphans(outcome: Extract<DeleteOutcome, { kind: 'deleted' }>): Promise<Reply>;
}

export function videoRouteKit(store: VideoStore, storage: AssetStorage, logger: Logger): VideoRouteKit {
  const propertyOr404 = async (tenant: TenantRecord, raw: string | undefined) => {
    const id = idParam(raw, 'property') as PropertyId;
    const p = await store.getProperty(tenant.id, id);
    if (!p) throw new HttpError('not_found', `No property with id ${id}.`);
    return p;
  };
  const whileProperty = async <T>(tenant: TenantRecord, id: PropertyId, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (err) {
      if (!(await store.getProperty(tenant.id, id)))
        throw new HttpError('not_found', `No property with id ${id}: it was deleted while this request was under way.`);
      throw err;
    }
  };
  const removeOrphans = async (outcome: Extract<DeleteOutcome, { kind: 'deleted' }>): Promise<Reply> => {
    const { photoKeys, assetKeys, mediaKeys = [] } = outcome.orphans;
    await Promise.all([storage.delete('photos', photoKeys), storage.delete('assets', assetKeys), storage.delete('media', mediaKeys)]).catch((err: unknown) =>
      logger.error('removing deleted files failed', { photoKeys, assetKeys, mediaKeys, error: err instanceof Error ? err.message : String(err) }),
    );
    return empty(204);
  };
  return { propertyOr404, whileProperty, removeOrphans };
}

/** A file from storage, whole, with its type (photos and logos: small, never ranged). */
export async function storedFile(storage: AssetStorage, area: Area, key: string, contentType: string, etag: string, req: Request): Promise<Reply> {
  const headers = { 'content-type': contentType, etag, 'cache-control': 'private, max-age=0, must-revalidate' };
  if (req.headers['if-none-match'] === etag) return empty(304, headers);
  const stream = await storage.get(area, key);
  if (!stream) throw new HttpError('not_found', 'The file is missing from storage.');
  return { status: 200, headers, stream };
}
