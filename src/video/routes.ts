import type { HttpServer } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { json } from '../http/reply.js';
import { Fields, firstChars, idParam, readJsonObject } from '../http/validate.js';
import { ListPage } from '../http/pagination.js';
import type { Handler } from '../http/server.js';
import { newToken } from '../identity/tokens.js';
import { propertyView } from './views.js';
import { mountAssetRoutes } from './asset-routes.js';
import { tenantRoute, videoRouteKit, type TenantHandler, type VideoRouteKit } from './route-kit.js';
import { mountPhotoRoutes } from './photo-routes.js';
import { mountVideoJobRoutes } from './video-routes.js';
import { mountBrandingRoutes } from './branding-routes.js';
import { mountAudioRoutes } from './audio-routes.js';
import type { PropertyId, PropertyInput } from './types.js';
import type { VideoRoutesOptions } from './route-options.js';

export type { VideoRoutesOptions } from './route-options.js';

/**
 * The property-video API (spec 000 and what lies beyond it), by resource: properties, photos,
 * videos, branding, audio tracks, assets and the callback secret.
 */
export function mountVideoRoutes(server: HttpServer, o: VideoRoutesOptions): void {
  const full = server.scoped('full');
  const api = tenantRoute(o.auth, o.logger);
  const kit = videoRouteKit(o.store, o.storage, o.logger);
  mountPropertyRoutes(server, o, api, kit);
  mountPhotoRoutes(server, o, api, kit);
  mountVideoJobRoutes(server, o, api, kit);
  mountBrandingRoutes(server, o, api);
  mountAudioRoutes(server, o, api, kit);
  mountAssetRoutes(server, o, api);

  full.get(
    '/v1/callback-secret',
    api(async (_req, tenant) => json(200, { secret: await o.store.callbackSecret(tenant.id, () => newToken('webhookSecret')) })),
  );

  full.post(
    '/v1/callback-secret/rotate',
    api(async (_req, tenant) => {
      const secret = newToken('webhookSecret');
      await o.store.rotateCallbackSecret(tenant.id, secret);
      return json(200, { secret });
    }),
    { body: 'none' },
  );
}

/** Properties: create, list, read, delete (with everything under them). */
function mountPropertyRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler, kit: VideoRouteKit): void {
  const { store } = o;
  const full = server.scoped('full');
  full.post(
    '/v1/properties',
    api(async (req, tenant) => {
      const f = new Fields(readJsonObject(req));
      // Other fields are ignored, not refused: no document names a property's fields, so a client's
      // own extras (zip, sqft, …) must not cost it the property.
      const address = f.string('address', { required: true, max: 500, notBlank: true });
      const input: Partial<PropertyInput> = {
        // The address is what names a property; a title is the client's choice, so one without
        // a title (a client that only knows addresses) is titled by its address.
        title: f.string('title', { min: 1, max: 200, notBlank: true }) ?? (address === undefined ? undefined : firstChars(address, 200)),
        address,
        city: f.string('city', { max: 200, oneLine: true }) ?? null,
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

  full.get(
    '/v1/properties',
    api(async (req, tenant) => {
      const list = new ListPage(req, { list: 'properties', owner: `tenant:${tenant.id}` });
      const page = await store.listProperties(tenant.id, list.limit, list.from);
      const photos = await store.photosOf(page.items.map((p) => p.id));
      return json(200, { data: page.items.map((p) => propertyView(p, photos.get(p.id) ?? [])), next_cursor: list.cursor(page.nextAfter) });
    }),
  );

  full.get(
    '/v1/properties/:id',
    api(async (req, tenant) => {
      const p = await kit.propertyOr404(tenant, req.params.id);
      const photos = await store.photosOf([p.id]);
      return json(200, propertyView(p, photos.get(p.id) ?? []));
    }),
  );

  full.delete(
    '/v1/properties/:id',
    api(async (req, tenant) => {
      const id = idParam(req.params.id, 'property') as PropertyId;
      const outcome = await store.deleteProperty(tenant.id, id);
      if (outcome.kind === 'not_found') throw new HttpError('not_found', `No property with id ${id}.`);
      if (outcome.kind === 'busy')
        throw new HttpError('conflict', `Video ${outcome.videoId} of property ${id} is rendering; delete the property once it has completed or failed.`);
      return kit.removeOrphans(outcome);
    }),
    { body: 'none' },
  );
}
