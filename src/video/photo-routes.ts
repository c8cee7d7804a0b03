import { join } from 'node:path';
import type { Handler, HttpServer, Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { json } from '../http/reply.js';
import { Fields, idParam, readJsonObject } from '../http/validate.js';
import { requirePlan } from '../identity/routes.js';
import { commitPhotos, discardStaged, receiveJson, receiveMultipart, type StagedPhoto } from './uploads.js';
import { photoView } from './views.js';
import { storedFile, type TenantHandler, type VideoRouteKit } from './route-kit.js';
import { encodingOf } from '../http/codec.js';
import { isSigned, originOf, ttlParam } from './signed-urls.js';
import type { VideoRoutesOptions } from './route-options.js';
import { ROOMS, type PhotoId, type PhotoRecord, type PropertyId } from './types.js';

function declaredLength(req: Request): number | null {
  const raw = req.headers['content-length'];
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : null;
}

/** Photos: upload (multipart or JSON), tag with a room, open (thumbnails), delete. */
export function mountPhotoRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler, kit: VideoRouteKit): void {
  const { store } = o;
  const full = server.scoped('full');
  const tmpDir = join(o.dataDir, 'tmp');
  full.post(
    '/v1/properties/:id/photos',
    api(async (req, tenant) => {
      const property = await kit.propertyOr404(tenant, req.params.id);
      const type = (req.headers['content-type'] ?? '').toLowerCase();
      let staged: StagedPhoto[];
      if (type.startsWith('multipart/form-data')) staged = await receiveMultipart(req.stream!, req.headers['content-type']!, tmpDir, o.uploads);
      else if (type.startsWith('application/json') && encodingOf(req.headers['content-type']) === 'json')
        staged = await receiveJson(req.stream!, declaredLength(req), tmpDir, o.uploads, o.jsonBudget);
      else throw new HttpError('unsupported_media_type', 'Upload photos as multipart/form-data or as application/json {photos: [{filename, data_base64}]}.');
      let stored: string[] = [];
      try {
        const committed = await commitPhotos(staged, o.storage);
        stored = committed.map((p) => p.storageKey);
        const added = await kit.whileProperty(tenant, property.id, () => store.addPhotos(property.id, committed, o.maxPhotosPerProperty));
        if (added === 'too_many') {
          const message = `A property may have at most ${o.maxPhotosPerProperty} photos; it has ${property.photoCount}. Nothing was stored.`;
          throw new HttpError('validation_failed', message, {
            details: [{ path: 'photos', message: `at most ${o.maxPhotosPerProperty - property.photoCount} more photos fit` }],
          });
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

  full.patch(
    '/v1/properties/:id/photos/:photoId',
    api(async (req, tenant) => {
      const propertyId = idParam(req.params.id, 'property') as PropertyId;
      const photoId = idParam(req.params.photoId, 'photo') as PhotoId;
      const body = readJsonObject(req);
      const f = new Fields(body);
      f.onlyKnown(['room']);
      if (!('room' in body)) f.problem('room', 'is required (a room tag, or null to clear it)');
      const room = f.oneOf('room', ROOMS);
      f.done();
      const photo = await store.setPhotoRoom(tenant.id, propertyId, photoId, room ?? null);
      if (!photo) throw new HttpError('not_found', `Property ${propertyId} has no photo with id ${photoId}.`);
      return json(200, photoView(photo));
    }),
  );

  mountPhotoFileRoutes(server, o, api);

  full.delete(
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
      return kit.removeOrphans(outcome);
    }),
    { body: 'none' },
  );
}

/** A photo's file (the dashboard's thumbnails), with a credential or a signed URL, and the signed URL itself. */
function mountPhotoFileRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler): void {
  const { store } = o;
  const full = server.scoped('full');
  const photoOf = async (tenantId: Parameters<typeof store.getProperty>[0], propertyId: PropertyId, photoId: PhotoId): Promise<PhotoRecord> => {
    const photos = (await store.photosOf([propertyId])).get(propertyId) ?? [];
    const photo = (await store.getProperty(tenantId, propertyId)) ? photos.find((p) => p.id === photoId) : undefined;
    if (!photo) throw new HttpError('not_found', `Property ${propertyId} has no photo with id ${photoId}.`);
    return photo;
  };
  const file = (req: Request, p: PhotoRecord) => storedFile(o.storage, 'photos', p.storageKey, p.contentType, `"photo-${p.id}"`, req);
  const keyed = api(async (req, tenant) =>
    file(req, await photoOf(tenant.id, idParam(req.params.id, 'property') as PropertyId, idParam(req.params.photoId, 'photo') as PhotoId)),
  );
  /** A signed URL opens a photo without a credential (an <img> cannot send one), like an asset's. */
  const signed = async (req: Request) => {
    const propertyId = idParam(req.params.id, 'property') as PropertyId;
    const photoId = idParam(req.params.photoId, 'photo') as PhotoId;
    const q = req.searchParams();
    const verdict = o.signer.verify(photoId, q.get('expires'), q.get('signature'), o.now(), 'photo');
    if (verdict !== 'ok') throw new HttpError('forbidden', `This photo URL is ${verdict}; ask for a new one.`);
    const photos = (await store.photosOf([propertyId])).get(propertyId) ?? [];
    const photo = photos.find((p) => p.id === photoId);
    if (!photo) throw new HttpError('not_found', `Property ${propertyId} has no photo with id ${photoId}.`);
    const property = await store.propertyTenant(propertyId);
    const tenant = property === null ? null : await o.getTenant(property);
    if (!tenant) throw new HttpError('not_found', `No photo with id ${photoId}.`);
    if (tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this photo is suspended.');
    requirePlan(tenant.plan, 'agency');
    return file(req, photo);
  };
  full.get('/v1/properties/:id/photos/:photoId/file', (req) => (isSigned(req) ? signed(req) : keyed(req)));

  full.get(
    '/v1/properties/:id/photos/:photoId/url',
    api(async (req, tenant) => {
      const propertyId = idParam(req.params.id, 'property') as PropertyId;
      const photo = await photoOf(tenant.id, propertyId, idParam(req.params.photoId, 'photo') as PhotoId);
      const expiresS = Math.floor(o.now() / 1000) + ttlParam(req);
      const url = `${originOf(req, o.publicUrl, o.scheme)}/v1/properties/${propertyId}/photos/${photo.id}/file?${o.signer.query(photo.id, expiresS, 'photo')}`;
      return json(200, { url, expires_at: new Date(expiresS * 1000).toISOString() });
    }),
  );
}
