import { join } from 'node:path';
import type { HttpServer, Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { json, empty, type Reply } from '../http/reply.js';
import { Fields, idParam, limitParam, readJsonObject } from '../http/validate.js';
import type { Authenticator } from '../identity/auth.js';
import type { TenantId, TenantRecord } from '../identity/types.js';
import { newToken } from '../identity/tokens.js';
import type { Logger } from '../log.js';
import type { DeleteOutcome, VideoStore } from './store.js';
import type { AssetStorage } from './storage.js';
import { commitPhotos, discardStaged, receiveJson, receiveMultipart, type StagedPhoto, type UploadLimits } from './uploads.js';
import { callbackUrlProblem } from './callbacks.js';
import type { PrivateUrls, Resolve } from '../net/ssrf.js';
import type { ByteBudget } from './budget.js';
import { photoView, propertyView, videoView } from './views.js';
import type { AssetUrlSigner } from './signed-urls.js';
import { mountAssetRoutes } from './asset-routes.js';
import { decodeCursor, encodeCursor, optionalId, statusParam, tenantRoute } from './route-kit.js';
import { FORMAT_NAMES, TEMPLATES, type PhotoId, type PropertyId, type PropertyInput, type VideoId } from './types.js';

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
  allowPrivateCallbacks: PrivateUrls;
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

const VIDEO_FIELDS = ['property_id', 'template', 'format', 'callback_url'] as const;

function declaredLength(req: Request): number | null {
  const raw = req.headers['content-length'];
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : null;
}

export function mountVideoRoutes(server: HttpServer, o: VideoRoutesOptions): void {
  const { store } = o;

  const api = tenantRoute(o.auth, o.logger);

  const propertyOr404 = async (tenant: TenantRecord, raw: string | undefined) => {
    const id = idParam(raw, 'property') as PropertyId;
    const p = await store.getProperty(tenant.id, id);
    if (!p) throw new HttpError('not_found', `No property with id ${id}.`);
    return p;
  };

  server.post(
    '/v1/properties',
    api(async (req, tenant) => {
      const body = readJsonObject(req);
      // Other fields are ignored, not refused: no document names a property's fields, so a client's
      // own extras (zip, sqft, …) must not cost it the property.
      const f = new Fields(body);
      const address = f.string('address', { required: true, max: 500 });
      const input: Partial<PropertyInput> = {
        // The address is what names a property; a title is the client's choice, so one without
        // a title (a client that only knows addresses) is titled by its address.
        title: f.string('title', { min: 1, max: 200 }) ?? address?.slice(0, 200),
        address,
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
    }),
  );

  server.get(
    '/v1/properties',
    api(async (req, tenant) => {
      const limit = limitParam(req, 20, 100);
      const page = await store.listProperties(tenant.id, limit, decodeCursor(req));
      const photos = await store.photosOf(page.items.map((p) => p.id));
      return json(200, { data: page.items.map((p) => propertyView(p, photos.get(p.id) ?? [])), next_cursor: encodeCursor(page.nextAfter) });
    }),
  );

  server.get(
    '/v1/properties/:id',
    api(async (req, tenant) => {
      const p = await propertyOr404(tenant, req.params.id);
      const photos = await store.photosOf([p.id]);
      return json(200, propertyView(p, photos.get(p.id) ?? []));
    }),
  );

  /**
   * Runs a write that references a property which may have been deleted since the request
   * looked it up (an upload takes a while): the write then fails on the reference, and the
   * answer is the 404 a request that came a moment later would get.
   */
  const whileProperty = async <T>(tenant: TenantRecord, id: PropertyId, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (err) {
      if (!(await store.getProperty(tenant.id, id)))
        throw new HttpError('not_found', `No property with id ${id}: it was deleted while this request was under way.`);
      throw err;
    }
  };

  const tmpDir = join(o.dataDir, 'tmp');
  server.post(
    '/v1/properties/:id/photos',
    api(async (req, tenant) => {
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
        const added = await whileProperty(tenant, property.id, () => store.addPhotos(property.id, committed, o.maxPhotosPerProperty));
        if (added === 'too_many') {
          throw new HttpError(
            'validation_failed',
            `A property may have at most ${o.maxPhotosPerProperty} photos; it has ${property.photoCount}. Nothing was stored.`,
            {
              details: [{ path: 'photos', message: `at most ${o.maxPhotosPerProperty - property.photoCount} more photos fit` }],
            },
          );
        }
        return json(201, { data: added.map(photoView) });
      } catch (err) {
        await discardStaged(staged);
        await o.storage.delete('photos', stored).catch((e: unknown) => o.logger.warn('photo cleanup failed', { error: String(e) }));
        throw err;
      }
    }),
    { body: 'stream', maxBody: o.uploads.maxPhotos * o.uploads.maxPhotoBytes + 1024 * 1024 },
  );

  server.post(
    '/v1/videos',
    api(async (req, tenant) => {
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(VIDEO_FIELDS);
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
      // A property without photos still gets a tour: its title card alone.
      const photos = (await store.photosOf([property.id])).get(property.id) ?? [];
      const max = o.auth.limits.queuedVideosPerTenant;
      const input = {
        propertyId: property.id,
        template: template!,
        format: format!,
        callbackUrl: callbackUrl ?? null,
        photoIds: photos.map((p) => p.id as PhotoId),
      };
      const video = await whileProperty(tenant, property.id, () => store.createVideo(tenant.id, input, max));
      if (video === 'limit') throw new HttpError('plan_limit', `A tenant may have at most ${max} videos queued or rendering; wait for one to finish.`);
      o.onQueued();
      return json(202, videoView(video), { location: `/v1/videos/${video.id}` });
    }),
  );

  server.get(
    '/v1/videos/:id',
    api(async (req, tenant) => {
      const id = idParam(req.params.id, 'video') as VideoId;
      const v = await store.getVideo(tenant.id, id);
      if (!v) throw new HttpError('not_found', `No video with id ${id}.`);
      return json(200, videoView(v));
    }),
  );

  server.get(
    '/v1/videos',
    api(async (req, tenant) => {
      const limit = limitParam(req, 20, 100);
      const propertyId = optionalId(req, 'property_id') as PropertyId | undefined;
      const status = statusParam(req);
      const page = await store.listVideos(tenant.id, { ...(propertyId ? { propertyId } : {}), ...(status ? { status } : {}) }, limit, decodeCursor(req));
      return json(200, { data: page.items.map(videoView), next_cursor: encodeCursor(page.nextAfter) });
    }),
  );

  /** Removes the files a delete orphaned; the records are already gone, so a failure here is only logged. */
  const removeOrphans = async (outcome: Extract<DeleteOutcome, { kind: 'deleted' }>): Promise<Reply> => {
    const { photoKeys, assetKeys } = outcome.orphans;
    await Promise.all([o.storage.delete('photos', photoKeys), o.storage.delete('assets', assetKeys)]).catch((err: unknown) =>
      o.logger.error('removing deleted files failed', { photoKeys, assetKeys, error: err instanceof Error ? err.message : String(err) }),
    );
    return empty(204);
  };

  server.delete(
    '/v1/videos/:id',
    api(async (req, tenant) => {
      const id = idParam(req.params.id, 'video') as VideoId;
      const outcome = await store.deleteVideo(tenant.id, id);
      if (outcome.kind === 'not_found') throw new HttpError('not_found', `No video with id ${id}.`);
      if (outcome.kind === 'busy')
        throw new HttpError('conflict', `Video ${id} is rendering; delete it once it has completed or failed (GET /v1/videos/${id}).`);
      return removeOrphans(outcome);
    }),
    { body: 'none' },
  );

  server.delete(
    '/v1/properties/:id',
    api(async (req, tenant) => {
      const id = idParam(req.params.id, 'property') as PropertyId;
      const outcome = await store.deleteProperty(tenant.id, id);
      if (outcome.kind === 'not_found') throw new HttpError('not_found', `No property with id ${id}.`);
      if (outcome.kind === 'busy')
        throw new HttpError('conflict', `Video ${outcome.videoId} of property ${id} is rendering; delete the property once it has completed or failed.`);
      return removeOrphans(outcome);
    }),
    { body: 'none' },
  );

  server.delete(
    '/v1/properties/:id/photos/:photoId',
    api(async (req, tenant) => {
      const propertyId = idParam(req.params.id, 'property') as PropertyId;
      const photoId = idParam(req.params.photoId, 'photo') as PhotoId;
      const outcome = await store.deletePhoto(tenant.id, propertyId, photoId);
      if (outcome.kind === 'not_found') {
        const property = await store.getProperty(tenant.id, propertyId);
        throw new HttpError('not_found', property ? `Property ${propertyId} has no photo with id ${photoId}.` : `No property with id ${propertyId}.`);
      }
      if (outcome.kind === 'busy') {
        const fix =
          outcome.status === 'queued'
            ? `delete that video first (DELETE /v1/videos/${outcome.videoId}) or wait until it has finished`
            : 'delete the photo once that video has completed or failed';
        throw new HttpError('conflict', `Photo ${photoId} is in video ${outcome.videoId}, which is ${outcome.status}; ${fix}.`);
      }
      return removeOrphans(outcome);
    }),
    { body: 'none' },
  );

  mountAssetRoutes(server, o, api);

  server.get(
    '/v1/callback-secret',
    api(async (_req, tenant) => json(200, { secret: await store.callbackSecret(tenant.id, () => newToken('webhookSecret')) })),
  );

  server.post(
    '/v1/callback-secret/rotate',
    api(async (_req, tenant) => {
      const secret = newToken('webhookSecret');
      await store.rotateCallbackSecret(tenant.id, secret);
      return json(200, { secret });
    }),
    { body: 'none' },
  );
}
