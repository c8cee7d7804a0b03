import { randomUUID } from 'node:crypto';
import { writeFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Handler, HttpServer } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { json } from '../http/reply.js';
import { Fields, readJsonObject } from '../http/validate.js';
import type { TenantId } from '../identity/types.js';
import { inspectImage } from './image.js';
import { storedFile, type TenantHandler } from './route-kit.js';
import type { VideoRoutesOptions } from './route-options.js';
import { VIDEO_LIMITS } from './limits.js';
import { BRAND_FONTS, type BrandingInput, type BrandingRecord } from './types.js';
import { DEFAULT_BACKGROUND, DEFAULT_TEXT_COLOR } from './tour.js';

const COLOR = /^#[0-9A-Fa-f]{6}$/;
const hex = (c: string) => `#${c.slice(2).toUpperCase()}`;
/** A tenant that never set its branding has the plain tour's look. */
export const DEFAULT_BRANDING: BrandingInput = {
  primaryColor: hex(DEFAULT_BACKGROUND),
  secondaryColor: hex(DEFAULT_TEXT_COLOR),
  font: 'sans',
  logoKey: null,
  logoContentType: null,
  logoWidth: null,
  logoHeight: null,
};

function brandingView(b: BrandingInput & { updatedAt?: string }) {
  return {
    primary_color: b.primaryColor,
    secondary_color: b.secondaryColor,
    font: b.font,
    fonts: BRAND_FONTS,
    logo: b.logoKey ? { content_type: b.logoContentType, width: b.logoWidth, height: b.logoHeight, url: '/v1/branding/logo' } : null,
    updated_at: b.updatedAt ?? null,
  };
}

/** The tenant's branding: colours, font and logo on the title card and a corner mark of its videos (unless a request asks for an unbranded cut). */
export function mountBrandingRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler): void {
  const { store } = o;
  const full = server.scoped('full');
  const current = async (tenantId: TenantId): Promise<BrandingInput & { updatedAt?: string }> => (await store.getBranding(tenantId)) ?? DEFAULT_BRANDING;
  // Only the fields a request sets are written, onto the branding as stored then: a logo uploaded
  // while the colours change (or the other way round) is never undone.
  const put = async (tenantId: TenantId, change: Partial<BrandingInput>): Promise<BrandingRecord> => {
    const { branding, replacedLogoKey } = await store.putBranding(tenantId, change, DEFAULT_BRANDING);
    if (replacedLogoKey)
      await o.storage.delete('media', [replacedLogoKey]).catch((e: unknown) => o.logger.warn('old logo cleanup failed', { error: String(e) }));
    return branding;
  };

  full.get(
    '/v1/branding',
    api(async (_req, tenant) => json(200, brandingView(await current(tenant.id)))),
  );

  full.put(
    '/v1/branding',
    api(async (req, tenant) => {
      const f = new Fields(readJsonObject(req));
      f.onlyKnown(['primary_color', 'secondary_color', 'font']);
      const hint = 'must be a colour as #RRGGBB, e.g. #1F2933';
      const primary = f.string('primary_color', { pattern: COLOR, patternHint: hint });
      const secondary = f.string('secondary_color', { pattern: COLOR, patternHint: hint });
      const font = f.oneOf('font', BRAND_FONTS);
      f.done();
      const change: Partial<BrandingInput> = {
        ...(primary !== undefined ? { primaryColor: primary.toUpperCase() } : {}),
        ...(secondary !== undefined ? { secondaryColor: secondary.toUpperCase() } : {}),
        ...(font !== undefined ? { font } : {}),
      };
      return json(200, brandingView(await put(tenant.id, change)));
    }),
  );

  full.put('/v1/branding/logo', api(uploadLogo(o, put)), { maxBody: VIDEO_LIMITS.maxLogoBytes });

  full.get(
    '/v1/branding/logo',
    api(async (req, tenant) => {
      const b = await current(tenant.id);
      if (!b.logoKey) throw new HttpError('not_found', 'This tenant has no logo; PUT /v1/branding/logo uploads one.');
      return storedFile(o.storage, 'media', b.logoKey, b.logoContentType!, `"${b.logoKey}"`, req);
    }),
  );

  full.delete(
    '/v1/branding/logo',
    api(async (_req, tenant) => json(200, brandingView(await put(tenant.id, { logoKey: null, logoContentType: null, logoWidth: null, logoHeight: null })))),
    { body: 'none' },
  );
}

/** PUT /v1/branding/logo: a complete PNG, JPEG or WebP within the size caps, stored under a fresh key (the old logo is removed by `put`). */
function uploadLogo(o: VideoRoutesOptions, put: (tenantId: TenantId, change: Partial<BrandingInput>) => Promise<BrandingRecord>): TenantHandler {
  return async (req, tenant) => {
    const info = inspectImage(req.body);
    if (!info.ok)
      throw new HttpError('validation_failed', `The logo must be a complete PNG, JPEG or WebP image: it ${info.reason}.`, {
        details: [{ path: 'body', message: info.reason }],
      });
    const max = VIDEO_LIMITS.maxLogoSide;
    if (info.width > max || info.height > max)
      throw new HttpError('validation_failed', `A logo may be at most ${max} px a side; this one is ${info.width}x${info.height}.`, {
        details: [{ path: 'body', message: `at most ${max} px a side` }],
      });
    const key = `logo-${randomUUID()}.${info.contentType.split('/')[1]}`;
    const tmp = join(o.dataDir, 'tmp', `${key}.part`);
    await writeFile(tmp, req.body);
    try {
      await o.storage.putFile('media', key, tmp, info.contentType);
    } finally {
      await unlink(tmp).catch(() => {});
    }
    const logo = { logoKey: key, logoContentType: info.contentType, logoWidth: info.width, logoHeight: info.height };
    return json(200, brandingView(await put(tenant.id, logo)));
  };
}
