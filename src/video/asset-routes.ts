import type { Handler, HttpServer, Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { empty, json, type Reply } from '../http/reply.js';
import { idParam } from '../http/validate.js';
import { ListPage } from '../http/pagination.js';
import { requirePlan } from '../identity/routes.js';
import type { TenantRecord } from '../identity/types.js';
import { etagMatches, parseRange } from './range.js';
import { optionalId, type TenantHandler } from './route-kit.js';
import { isSigned, originOf, ttlParam } from './signed-urls.js';
import type { VideoRoutesOptions } from './route-options.js';
import type { VideoStore } from './store.js';
import { assetView } from './views.js';
import type { AssetId, AssetRecord, PropertyId, VideoId } from './types.js';

/** Seconds a client is asked to wait when storage does not answer. */
export const STORAGE_RETRY_AFTER_S = 5;

/**
 * Assets: listing, records, files (with a key or session, or a signed URL without one) and
 * the signed URLs themselves.
 */
export function mountAssetRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler): void {
  const { store } = o;
  const full = server.scoped('full');

  full.get(
    '/v1/assets',
    api(async (req, tenant) => {
      const propertyId = optionalId(req, 'property_id') as PropertyId | undefined;
      const videoId = optionalId(req, 'video_id') as VideoId | undefined;
      const list = new ListPage(req, { list: 'assets', owner: `tenant:${tenant.id}`, filters: { property_id: propertyId, video_id: videoId } });
      const page = await store.listAssets(tenant.id, { ...(propertyId ? { propertyId } : {}), ...(videoId ? { videoId } : {}) }, list.limit, list.from);
      return json(200, { data: page.items.map(assetView), next_cursor: list.cursor(page.nextAfter) });
    }),
  );

  full.get(
    '/v1/assets/:id',
    api(async (req, tenant) => json(200, assetView(await assetOr404(store, tenant, req.params.id)))),
  );

  const keyedFile = api(async (req, tenant) => fileReply(o, req, await assetOr404(store, tenant, req.params.id)));
  full.get('/v1/assets/:id/file', (req) => (isSigned(req) ? signedFile(o, req) : keyedFile(req)));

  full.get(
    '/v1/assets/:id/url',
    api(async (req, tenant) => {
      const asset = await assetOr404(store, tenant, req.params.id);
      const ttl = ttlParam(req);
      const expiresS = Math.floor(o.now() / 1000) + ttl;
      const url = `${originOf(req, o.publicUrl, o.scheme)}/v1/assets/${asset.id}/file?${o.signer.query(asset.id, expiresS)}`;
      return json(200, { url, expires_at: new Date(expiresS * 1000).toISOString() });
    }),
  );
}

async function assetOr404(store: VideoStore, tenant: TenantRecord, raw: string | undefined): Promise<AssetRecord> {
  const id = idParam(raw, 'asset') as AssetId;
  const a = await store.getAsset(tenant.id, id);
  if (!a) throw new HttpError('not_found', `No asset with id ${id}.`);
  return a;
}

/** The asset's file, whole or one range, with the validators that let players and caches resume. */
async function fileReply(o: VideoRoutesOptions, req: Request, asset: AssetRecord): Promise<Reply> {
  const size = asset.sizeBytes;
  const base = { 'content-type': asset.contentType, 'accept-ranges': 'bytes', etag: asset.etag, 'cache-control': 'private, max-age=0, must-revalidate' };
  if (etagMatches(req.headers['if-none-match'], asset.etag)) return empty(304, base);
  // If-Range with another validator asks for the whole (changed) file.
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== asset.etag ? { kind: 'whole' as const } : parseRange(req.headers.range, size);
  if (range.kind === 'unsatisfiable')
    throw new HttpError('range_not_satisfiable', `The file has ${size} bytes.`, { headers: { 'content-range': `bytes */${size}` } });
  const part = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
  const stream = await o.storage.get('assets', asset.storageKey, part).catch((err: unknown) => {
    // Storage that does not answer (a bucket out of reach) is a passing outage, not a fault of this server.
    o.logger.error('reading an asset from storage failed', {
      assetId: asset.id,
      where: o.storage.description,
      error: err instanceof Error ? err.message : String(err),
    });
    throw new HttpError('unavailable', 'The file storage did not answer; retry shortly.', { headers: { 'retry-after': String(STORAGE_RETRY_AFTER_S) } });
  });
  if (!stream) throw new HttpError('not_found', `The file of asset ${asset.id} is missing.`);
  if (part) return { status: 206, headers: { ...base, 'content-range': `bytes ${part.start}-${part.end}/${size}` }, stream, length: part.end - part.start + 1 };
  return { status: 200, headers: base, stream, length: size };
}

/**
 * A signed URL opens its asset without a credential until it expires. A tampered or expired
 * URL is 403; an asset deleted since is 404; a tenant suspended or below the plan since
 * loses its URLs as it loses its keys.
 */
async function signedFile(o: VideoRoutesOptions, req: Request): Promise<Reply> {
  const id = idParam(req.params.id, 'asset') as AssetId;
  const q = req.searchParams();
  const verdict = o.signer.verify(id, q.get('expires'), q.get('signature'), o.now());
  if (verdict === 'invalid') throw new HttpError('forbidden', 'The signature of this asset URL is invalid; ask for a new URL (GET /v1/assets/{id}/url).');
  if (verdict === 'expired')
    throw new HttpError(
      'forbidden',
      `This asset URL expired at ${new Date(Number(q.get('expires')) * 1000).toISOString()}; ask for a new one (GET /v1/assets/{id}/url).`,
    );
  const asset = await o.store.assetById(id);
  if (!asset) throw new HttpError('not_found', `No asset with id ${id}: it was deleted.`);
  const tenant = await o.getTenant(asset.tenantId);
  if (!tenant) throw new HttpError('not_found', `No asset with id ${id}.`);
  if (tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this asset is suspended.');
  requirePlan(tenant.plan, 'agency');
  return fileReply(o, req, asset);
}
