import { join } from 'node:path';
import type { HttpServer, Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { isClientAbort } from '../http/guard.js';
import { json, empty, type Reply } from '../http/reply.js';
import { Fields, idParam, limitParam, readJsonObject } from '../http/validate.js';
import type { Authenticator } from '../identity/auth.js';
import { requirePlan } from '../identity/routes.js';
import type { TenantId, TenantRecord } from '../identity/types.js';
import { newToken } from '../identity/tokens.js';
import type { Logger } from '../log.js';
import type { DeleteOutcome, VideoStore } from './store.js';
import type { AssetStorage } from './storage.js';
import { rateHeaders } from '../http/ratelimit.js';
import { commitPhotos, discardStaged, receiveJson, receiveMultipart, type StagedPhoto, type UploadLimits } from './uploads.js';
import { callbackUrlProblem } from './callbacks.js';
import type { Resolve } from '../net/ssrf.js';
import type { ByteBudget } from './budget.js';
import { etagMatches, parseRange } from './range.js';
import { assetView, photoView, propertyView, videoView } from './views.js';
import { AssetUrlSigner, isSigned, originOf, ttlParam } from './signed-urls.js';
import { FORMAT_NAMES, TEMPLATES, VIDEO_STATUSES, type AssetId, type AssetRecord, type PhotoId, type PropertyId, type PropertyInput, type VideoId, type VideoStatus } from './types.js';

export interface VideoRoutesOptions {
  store: VideoStore;
  auth: Authenticator;
  dataDir: string;
  /** Where photos and rendered assets are stored. */
  storage: AssetStorage;
  uploads: UploadLimits;
  /** Bytes of JSON photo uploads held in memory at once, across all requests. */
  jsonBudget: ByteBudget;
  /** Most photos one property may have. */
  maxPhotosPerProperty: number;
  allowPrivateCallbacks: boolean;
  /** DNS for the SSRF guard on callback URLs; default the system resolver. */
  resolve?: Resolve | undefined;
  logger: Logger;
  /** Told when a video is queued, so rendering starts at once. */
  onQueued: () => void;
  /** Signs and checks the expiring asset URLs. */
  signer: AssetUrlSigner;
  /** The origin signed URLs start with (SERVICE_PUBLIC_URL); default the request's scheme and Host. */
  publicUrl?: string | undefined;
  scheme: 'http' | 'https';
  /** A signed URL carries no credential: its asset's tenant is looked up to check it is active and on the plan. */
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  now: () => number;
}

type Handler = (req: Request, tenant: TenantRecord) => Promise<Reply>;

const VIDEO_FIELDS = new Set(['property_id', 'template', 'format', 'callback_url']);

function withHeaders(reply: Reply, headers: Record<string, string>): Reply {
  return { ...reply, headers: { ...reply.headers, ...headers } };
}

/** Cursors are opaque to clients: the id the previous page ended on, versioned so the format can change. */
function encodeCursor(after: number | null): string | null {
  return after === null ? null : Buffer.from(`v1:${after}`).toString('base64url');
}

function decodeCursor(req: Request): number | null {
  const raw = req.searchParams().get('cursor');
  if (raw === null || raw === '') return null;
  const m = /^v1:(\d{1,15})$/.exec(Buffer.from(raw, 'base64url').toString('latin1'));
  if (!m) throw new HttpError('bad_request', 'cursor is not one this API issued; pass next_cursor from the previous page.');
  return Number(m[1]);
}

function optionalId(req: Request, name: string): number | undefined {
  const raw = req.searchParams().get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw new HttpError('bad_request', `${name} must be a positive integer, got ${JSON.stringify(raw)}.`);
  return Number(raw);
}

function statusParam(req: Request): VideoStatus | undefined {
  const raw = req.searchParams().get('status');
  if (raw === null || raw === '') return undefined;
  if (!(VIDEO_STATUSES as readonly string[]).includes(raw)) throw new HttpError('bad_request', `status must be one of ${VIDEO_STATUSES.join(', ')}, got ${JSON.stringify(raw)}.`);
  return raw as VideoStatus;
}

function declaredLength(req: Request): number | null {
  const raw = req.headers['content-length'];
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : null;
}

function unknownFields(f: Fields, body: Record<string, unknown>, known: Set<string>): void {
  for (const key of Object.keys(body)) if (!known.has(key)) f.problem(key, `is not a known field (known: ${[...known].join(', ')})`);
}

export function mountVideoRoutes(server: HttpServer, o: VideoRoutesOptions): void {
  const { store } = o;

  /**
   * Every route: an API key or a user session of the tenant (the dashboard), counted by the
   * authenticator against its rate limits (429 past them), then the plan. From the rate limit
   * on, every answer (errors too) carries the X-RateLimit-* headers of the credential's limit.
   */
  const api = (h: Handler) => async (req: Request): Promise<Reply> => {
    const principal = await o.auth.tenant(req);
    const headers = rateHeaders(principal.rate);
    try {
      requirePlan(principal.tenant.plan, 'agency');
      return withHeaders(await h(req, principal.tenant), headers);
    } catch (err) {
      if (err instanceof HttpError) throw new HttpError(err.code, err.message, { ...(err.details ? { details: err.details } : {}), headers: { ...err.headers, ...headers } });
      // A client that went away is not a server fault: the server logs it at debug level.
      if (req.aborted || isClientAbort(err)) throw err;
      o.logger.error('video API request failed', { path: req.path, error: err instanceof Error ? err.stack ?? err.message : String(err) });
      throw new HttpError('internal', undefined, { headers });
    }
  };

  const propertyOr404 = async (tenant: TenantRecord, raw: string | undefined) => {
    const id = idParam(raw, 'property') as PropertyId;
    const p = await store.getProperty(tenant.id, id);
    if (!p) throw new HttpError('not_found', `No property with id ${id}.`);
    return p;
  };

  server.post('/v1/properties', api(async (req, tenant) => {
    const body = readJsonObject(req);
    // Other fields are ignored, not refused: no document names a property's fields, so a client's
    // own extras (zip, sqft, …) must not cost it the property.
    const f = new Fields(body);
    const input: Partial<PropertyInput> = {
      title: f.string('title', { required: true, max: 200 }),
      address: f.string('address', { required: true, max: 500 }),
      city: f.string('city', { max: 200 }) ?? null,
      price: f.number('price', { min: 0, max: 1e13 }) ?? null,
      currency: f.string('currency', { pattern: /^[A-Z]{3}$/, patternHint: 'must be an ISO 4217 code: three upper-case letters, e.g. EUR' }) ?? null,
      bedrooms: f.number('bedrooms', { integer: true, min: 0, max: 1000 }) ?? null,
      bathrooms: f.number('bathrooms', { min: 0, max: 1000 }) ?? null,
      area: f.number('area', { min: 0, max: 1e7 }) ?? null,
      description: f.string('description', { max: 10_000 }) ?? null,
    };
    if (input.bathrooms != null && !Number.isInteger(input.bathrooms * 2)) f.problem('bathrooms', 'must be a whole or half number (e.g. 1.5)');
    f.done();
    const p = await store.createProperty(tenant.id, input as PropertyInput);
    return json(201, propertyView(p, []), { location: `/v1/properties/${p.id}` });
  }));

  server.get('/v1/properties', api(async (req, tenant) => {
    const limit = limitParam(req, 20, 100);
    const page = await store.listProperties(tenant.id, limit, decodeCursor(req));
    const photos = await store.photosOf(page.items.map((p) => p.id));
    return json(200, { data: page.items.map((p) => propertyView(p, photos.get(p.id) ?? [])), next_cursor: encodeCursor(page.nextAfter) });
  }));

  server.get('/v1/properties/:id', api(async (req, tenant) => {
    const p = await propertyOr404(tenant, req.params.id);
    const photos = await store.photosOf([p.id]);
    return json(200, propertyView(p, photos.get(p.id) ?? []));
  }));

  const tmpDir = join(o.dataDir, 'tmp');
  server.post('/v1/properties/:id/photos', api(async (req, tenant) => {
    const property = await propertyOr404(tenant, req.params.id);
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    let staged: StagedPhoto[];
    if (type.startsWith('multipart/form-data')) staged = await receiveMultipart(req.stream!, req.headers['content-type']!, tmpDir, o.uploads);
    else if (/^application\/json\s*(;|$)/.test(type)) staged = await receiveJson(req.stream!, declaredLength(req), tmpDir, o.uploads, o.jsonBudget);
    else throw new HttpError('unsupported_media_type', 'Upload photos as multipart/form-data or as application/json {photos: [{filename, data_base64}]}.');
    let stored: string[] = [];
    try {
      const committed = await commitPhotos(staged, o.storage);
      stored = committed.map((p) => p.storageKey);
      const added = await store.addPhotos(property.id, committed, o.maxPhotosPerProperty);
      if (added === 'too_many') {
        throw new HttpError('validation_failed', `A property may have at most ${o.maxPhotosPerProperty} photos; it has ${property.photoCount}. Nothing was stored.`, {
          details: [{ path: 'photos', message: `at most ${o.maxPhotosPerProperty - property.photoCount} more photos fit` }],
        });
      }
      return json(201, { data: added.map(photoView) });
    } catch (err) {
      await discardStaged(staged);
      await o.storage.delete('photos', stored).catch((e: unknown) => o.logger.warn('photo cleanup failed', { error: String(e) }));
      throw err;
    }
  }), { body: 'stream', maxBody: o.uploads.maxPhotos * o.uploads.maxPhotoBytes + 1024 * 1024 });

  server.post('/v1/videos', api(async (req, tenant) => {
    const body = readJsonObject(req);
    const f = new Fields(body);
    unknownFields(f, body, VIDEO_FIELDS);
    const propertyId = f.number('property_id', { required: true, integer: true, min: 1 }) as PropertyId | undefined;
    const template = f.oneOf('template', TEMPLATES, { required: true });
    const format = f.oneOf('format', FORMAT_NAMES, { required: true });
    const callbackUrl = f.string('callback_url', { max: 2048 });
    if (callbackUrl !== undefined) {
      const problem = await callbackUrlProblem(callbackUrl, o.allowPrivateCallbacks, o.resolve);
      if (problem) f.problem('callback_url', problem);
    }
    f.done();
    const property = await store.getProperty(tenant.id, propertyId!);
    if (!property) throw new HttpError('not_found', `No property with id ${propertyId}.`);
    const photos = (await store.photosOf([property.id])).get(property.id) ?? [];
    if (photos.length === 0) {
      throw new HttpError('validation_failed', 'The property has no photos; upload some first.', {
        details: [{ path: 'property_id', message: 'the property has no photos' }],
      });
    }
    const max = o.auth.limits.queuedVideosPerTenant;
    const video = await store.createVideo(tenant.id, { propertyId: property.id, template: template!, format: format!, callbackUrl: callbackUrl ?? null, photoIds: photos.map((p) => p.id as PhotoId) }, max);
    if (video === 'limit') throw new HttpError('plan_limit', `A tenant may have at most ${max} videos queued or rendering; wait for one to finish.`);
    o.onQueued();
    return json(202, videoView(video), { location: `/v1/videos/${video.id}` });
  }));

  server.get('/v1/videos/:id', api(async (req, tenant) => {
    const id = idParam(req.params.id, 'video') as VideoId;
    const v = await store.getVideo(tenant.id, id);
    if (!v) throw new HttpError('not_found', `No video with id ${id}.`);
    return json(200, videoView(v));
  }));

  server.get('/v1/videos', api(async (req, tenant) => {
    const limit = limitParam(req, 20, 100);
    const propertyId = optionalId(req, 'property_id') as PropertyId | undefined;
    const status = statusParam(req);
    const page = await store.listVideos(tenant.id, { ...(propertyId ? { propertyId } : {}), ...(status ? { status } : {}) }, limit, decodeCursor(req));
    return json(200, { data: page.items.map(videoView), next_cursor: encodeCursor(page.nextAfter) });
  }));

  /** Removes the files a delete orphaned; the records are already gone, so a failure here is only logged. */
  const removeOrphans = async (outcome: Extract<DeleteOutcome, { kind: 'deleted' }>): Promise<Reply> => {
    const { photoKeys, assetKeys } = outcome.orphans;
    await Promise.all([o.storage.delete('photos', photoKeys), o.storage.delete('assets', assetKeys)]).catch((err: unknown) =>
      o.logger.error('removing deleted files failed', { photoKeys, assetKeys, error: err instanceof Error ? err.message : String(err) }),
    );
    return empty(204);
  };

  server.delete('/v1/videos/:id', api(async (req, tenant) => {
    const id = idParam(req.params.id, 'video') as VideoId;
    const outcome = await store.deleteVideo(tenant.id, id);
    if (outcome.kind === 'not_found') throw new HttpError('not_found', `No video with id ${id}.`);
    if (outcome.kind === 'busy') throw new HttpError('conflict', `Video ${id} is rendering; delete it once it has completed or failed (GET /v1/videos/${id}).`);
    return removeOrphans(outcome);
  }), { body: 'none' });

  server.delete('/v1/properties/:id', api(async (req, tenant) => {
    const id = idParam(req.params.id, 'property') as PropertyId;
    const outcome = await store.deleteProperty(tenant.id, id);
    if (outcome.kind === 'not_found') throw new HttpError('not_found', `No property with id ${id}.`);
    if (outcome.kind === 'busy') throw new HttpError('conflict', `Video ${outcome.videoId} of property ${id} is rendering; delete the property once it has completed or failed.`);
    return removeOrphans(outcome);
  }), { body: 'none' });

  server.delete('/v1/properties/:id/photos/:photoId', api(async (req, tenant) => {
    const propertyId = idParam(req.params.id, 'property') as PropertyId;
    const photoId = idParam(req.params.photoId, 'photo') as PhotoId;
    const outcome = await store.deletePhoto(tenant.id, propertyId, photoId);
    if (outcome.kind === 'not_found') {
      const property = await store.getProperty(tenant.id, propertyId);
      throw new HttpError('not_found', property ? `Property ${propertyId} has no photo with id ${photoId}.` : `No property with id ${propertyId}.`);
    }
    if (outcome.kind === 'busy') {
      const fix = outcome.status === 'queued' ? `delete that video first (DELETE /v1/videos/${outcome.videoId}) or wait until it has finished` : 'delete the photo once that video has completed or failed';
      throw new HttpError('conflict', `Photo ${photoId} is in video ${outcome.videoId}, which is ${outcome.status}; ${fix}.`);
    }
    return removeOrphans(outcome);
  }), { body: 'none' });

  server.get('/v1/assets', api(async (req, tenant) => {
    const limit = limitParam(req, 20, 100);
    const propertyId = optionalId(req, 'property_id') as PropertyId | undefined;
    const videoId = optionalId(req, 'video_id') as VideoId | undefined;
    const page = await store.listAssets(tenant.id, { ...(propertyId ? { propertyId } : {}), ...(videoId ? { videoId } : {}) }, limit, decodeCursor(req));
    return json(200, { data: page.items.map(assetView), next_cursor: encodeCursor(page.nextAfter) });
  }));

  const assetOr404 = async (tenant: TenantRecord, raw: string | undefined) => {
    const id = idParam(raw, 'asset') as AssetId;
    const a = await store.getAsset(tenant.id, id);
    if (!a) throw new HttpError('not_found', `No asset with id ${id}.`);
    return a;
  };

  server.get('/v1/assets/:id', api(async (req, tenant) => json(200, assetView(await assetOr404(tenant, req.params.id)))));

  /** The asset's file, whole or one range, with the validators that let players and caches resume. */
  const fileReply = async (req: Request, asset: AssetRecord): Promise<Reply> => {
    const size = asset.sizeBytes;
    const base = { 'content-type': asset.contentType, 'accept-ranges': 'bytes', etag: asset.etag, 'cache-control': 'private, max-age=0, must-revalidate' };
    if (etagMatches(req.headers['if-none-match'], asset.etag)) return empty(304, base);
    // If-Range with another validator asks for the whole (changed) file.
    const ifRange = req.headers['if-range'];
    const range = ifRange && ifRange !== asset.etag ? { kind: 'whole' as const } : parseRange(req.headers.range, size);
    if (range.kind === 'unsatisfiable') throw new HttpError('range_not_satisfiable', `The file has ${size} bytes.`, { headers: { 'content-range': `bytes */${size}` } });
    const part = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
    const stream = await o.storage.get('assets', asset.storageKey, part);
    if (!stream) throw new HttpError('not_found', `The file of asset ${asset.id} is missing.`);
    if (part) return { status: 206, headers: { ...base, 'content-range': `bytes ${part.start}-${part.end}/${size}` }, stream, length: part.end - part.start + 1 };
    return { status: 200, headers: base, stream, length: size };
  };

  /**
   * A signed URL opens its asset without a credential until it expires. A tampered or expired
   * URL is 403; an asset deleted since is 404; a tenant suspended or below the plan since
   * loses its URLs as it loses its keys.
   */
  const signedFile = async (req: Request): Promise<Reply> => {
    const id = idParam(req.params.id, 'asset') as AssetId;
    const q = req.searchParams();
    const verdict = o.signer.verify(id, q.get('expires'), q.get('signature'), o.now());
    if (verdict === 'invalid') throw new HttpError('forbidden', 'The signature of this asset URL is invalid; ask for a new URL (GET /v1/assets/{id}/url).');
    if (verdict === 'expired') throw new HttpError('forbidden', `This asset URL expired at ${new Date(Number(q.get('expires')) * 1000).toISOString()}; ask for a new one (GET /v1/assets/{id}/url).`);
    const asset = await store.assetById(id);
    if (!asset) throw new HttpError('not_found', `No asset with id ${id}: it was deleted.`);
    const tenant = await o.getTenant(asset.tenantId);
    if (!tenant) throw new HttpError('not_found', `No asset with id ${id}.`);
    if (tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this asset is suspended.');
    requirePlan(tenant.plan, 'agency');
    return fileReply(req, asset);
  };

  const keyedFile = api(async (req, tenant) => fileReply(req, await assetOr404(tenant, req.params.id)));
  server.get('/v1/assets/:id/file', (req) => (isSigned(req) ? signedFile(req) : keyedFile(req)));

  server.get('/v1/assets/:id/url', api(async (req, tenant) => {
    const asset = await assetOr404(tenant, req.params.id);
    const ttl = ttlParam(req);
    const expiresS = Math.floor(o.now() / 1000) + ttl;
    const url = `${originOf(req, o.publicUrl, o.scheme)}/v1/assets/${asset.id}/file?${o.signer.query(asset.id, expiresS)}`;
    return json(200, { url, expires_at: new Date(expiresS * 1000).toISOString() });
  }));

  server.get('/v1/callback-secret', api(async (_req, tenant) => json(200, { secret: await store.callbackSecret(tenant.id, () => newToken('webhookSecret')) })));

  server.post('/v1/callback-secret/rotate', api(async (_req, tenant) => {
    const secret = newToken('webhookSecret');
    await store.rotateCallbackSecret(tenant.id, secret);
    return json(200, { secret });
  }), { body: 'none' });
}
