import { createHash } from 'node:crypto';
import type { Handler, HttpServer, Request } from '../http/server.js';
import { HttpError, quoteValue } from '../http/errors.js';
import { json } from '../http/reply.js';
import { Fields, idParam, readJsonObject, typeOf } from '../http/validate.js';
import { ListPage } from '../http/pagination.js';
import type { TenantRecord } from '../identity/types.js';
import { checkCallbackUrl } from './callbacks.js';
import { optionalId, statusParam, type TenantHandler, type VideoRouteKit } from './route-kit.js';
import type { IdempotencyClaim, VideoInput } from './store.js';
import type { VideoRoutesOptions } from './route-options.js';
import { videoView } from './views.js';
import { VIDEO_LIMITS } from './limits.js';
import {
  FORMAT_NAMES,
  PHOTO_ORDERS,
  ROOMS,
  TEMPLATES,
  type AudioId,
  type Format,
  type PhotoId,
  type PhotoRecord,
  type PropertyId,
  type VideoId,
  type VideoOptions,
} from './types.js';

const VIDEO_FIELDS = [
  'property_id',
  'template',
  'format',
  'formats',
  'callback_url',
  'branded',
  'captions',
  'voiceover',
  'music_id',
  'photo_ids',
  'photo_order',
] as const;

/** A JSON value with its object keys sorted, so two bodies that say the same thing hash alike. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** The Idempotency-Key header as a claim on this body, or null without one; a malformed key is a 400. */
function idempotencyClaim(req: Request, body: Record<string, unknown>): IdempotencyClaim | null {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return null;
  if (!/^[\x21-\x7e]+$/.test(key) || key.length > VIDEO_LIMITS.maxIdempotencyKeyChars)
    throw new HttpError(
      'bad_request',
      `Idempotency-Key must be 1 to ${VIDEO_LIMITS.maxIdempotencyKeyChars} visible ASCII characters (a UUID is a good choice).`,
    );
  const hash = createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('hex');
  return { key, hash, ttlMs: VIDEO_LIMITS.idempotencyTtlMs };
}

/** The photos a video shows: the property's (or those of photo_ids, in that order), by room when asked. */
function choosePhotos(f: Fields, all: readonly PhotoRecord[], ids: number[] | undefined, order: 'given' | 'room'): PhotoId[] {
  let chosen = [...all];
  if (ids !== undefined) {
    const byId = new Map(all.map((p) => [p.id as number, p]));
    ids.forEach((id, i) => {
      if (!byId.has(id)) f.problem(`photo_ids[${i}]`, `is not a photo of this property (${id})`);
    });
    chosen = ids.filter((id) => byId.has(id)).map((id) => byId.get(id)!);
  }
  if (order === 'room') {
    const rank = (p: PhotoRecord) => (p.room === null ? ROOMS.length : ROOMS.indexOf(p.room));
    // A stable sort: photos of one room keep the order they were given in.
    chosen = chosen
      .map((p, i) => ({ p, i }))
      .sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i)
      .map((x) => x.p);
  }
  return chosen.map((p) => p.id);
}

/** Reads formats: exactly one of `format` (the spec's) and `formats` (several at once, each once). */
function readFormats(f: Fields, body: Record<string, unknown>): Format[] {
  if (body.formats === undefined || body.formats === null) {
    const format = f.oneOf('format', FORMAT_NAMES, { required: true });
    return format ? [format] : [];
  }
  if (body.format !== undefined && body.format !== null) f.problem('format', 'give format or formats, not both');
  const list = body.formats;
  const max = VIDEO_LIMITS.maxFormatsPerRequest;
  if (!Array.isArray(list) || list.length === 0 || list.length > max) {
    f.problem(
      'formats',
      `must be an array of 1 to ${max} formats (${FORMAT_NAMES.join(', ')}), got ${Array.isArray(list) ? `${list.length} items` : typeOf(list)}`,
    );
    return [];
  }
  list.forEach((v, i) => {
    if (!(FORMAT_NAMES as readonly unknown[]).includes(v)) f.problem(`formats[${i}]`, `must be one of ${FORMAT_NAMES.join(', ')}, got ${quoteValue(v)}`);
    else if (list.indexOf(v) !== i) f.problem(`formats[${i}]`, `${v} is asked for twice`);
  });
  return list as Format[];
}

function readPhotoIds(f: Fields, raw: unknown): number[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const max = VIDEO_LIMITS.maxPhotosPerVideo;
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > max) return void f.problem('photo_ids', `must be an array of 1 to ${max} photo ids`);
  raw.forEach((v, i) => {
    if (!Number.isSafeInteger(v) || (v as number) < 1) f.problem(`photo_ids[${i}]`, `must be a positive integer, got ${quoteValue(v)}`);
    else if (raw.indexOf(v) !== i) f.problem(`photo_ids[${i}]`, `photo ${v} is listed twice`);
  });
  return raw as number[];
}

/** Validates a POST /v1/videos body (every problem in one 422) into one input per format. */
async function videoInputs(o: VideoRoutesOptions, tenant: TenantRecord, body: Record<string, unknown>): Promise<VideoInput[]> {
  const f = new Fields(body);
  f.onlyKnown(VIDEO_FIELDS);
  const propertyId = f.number('property_id', { required: true, integer: true, min: 1 }) as PropertyId | undefined;
  const template = f.oneOf('template', TEMPLATES, { required: true });
  const formats = readFormats(f, body);
  let callbackUrl = f.string('callback_url', { max: 2048 });
  if (callbackUrl !== undefined) {
    const checked = await checkCallbackUrl(callbackUrl, o.allowPrivateCallbacks, o.resolve);
    if (checked.ok) callbackUrl = checked.url;
    else f.problem('callback_url', checked.reason);
  }
  const voiceover = f.boolean('voiceover') ?? false;
  if (voiceover && !o.voiceAvailable) f.problem('voiceover', 'this server has no text-to-speech add-on (SERVICE_TTS_ENGINE is off); leave voiceover out');
  const musicId = f.number('music_id', { integer: true, min: 1 }) as AudioId | undefined;
  if (musicId !== undefined && !(await o.store.getAudio(tenant.id, musicId)))
    f.problem('music_id', `no audio track with id ${musicId} (POST /v1/audio uploads one)`);
  const options: VideoOptions = { branded: f.boolean('branded') ?? true, captions: f.boolean('captions') ?? false, voiceover, musicId: musicId ?? null };
  const ids = readPhotoIds(f, body.photo_ids);
  const order = f.oneOf('photo_order', PHOTO_ORDERS) ?? 'given';
  f.done();
  const property = await o.store.getProperty(tenant.id, propertyId!);
  if (!property) throw new HttpError('not_found', `No property with id ${propertyId}.`);
  // A property without photos still gets a tour: its title card alone.
  const photoIds = choosePhotos(f, (await o.store.photosOf([property.id])).get(property.id) ?? [], ids, order);
  f.done();
  return formats.map((format) => ({ propertyId: property.id, template: template!, format, callbackUrl: callbackUrl ?? null, photoIds, options }));
}

/** Videos: create (one format or several, idempotent with a key), read, list, cancel, delete. */
export function mountVideoJobRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler, kit: VideoRouteKit): void {
  const { store } = o;
  const full = server.scoped('full');
  full.post(
    '/v1/videos',
    api(async (req, tenant) => {
      const body = readJsonObject(req);
      const idem = idempotencyClaim(req, body);
      const inputs = await videoInputs(o, tenant, body);
      const max = o.auth.limits.queuedVideosPerTenant;
      const out = await kit.whileProperty(tenant, inputs[0]!.propertyId, () => store.createVideos(tenant.id, inputs, max, idem));
      if (out.kind === 'limit')
        throw new HttpError(
          'plan_limit',
          `A tenant may have at most ${max} videos queued or rendering; this request asks for ${inputs.length}. Wait for some to finish.`,
        );
      if (out.kind === 'key_reused')
        throw new HttpError(
          'idempotency_key_reused',
          'This Idempotency-Key was used in the last 24 hours with a different request body; use a new key for a new request.',
        );
      const headers: Record<string, string> = out.kind === 'replayed' ? { 'idempotent-replayed': 'true' } : {};
      if (out.kind === 'created') o.onQueued();
      if (body.formats === undefined || body.formats === null) {
        const video = out.videos[0];
        if (!video) throw new HttpError('not_found', 'The video this Idempotency-Key made was deleted since; use a new key to ask again.');
        return json(202, videoView(video), { ...headers, location: `/v1/videos/${video.id}` });
      }
      return json(202, { data: out.videos.map(videoView) }, headers);
    }),
  );

  const videoId = (req: Request) => idParam(req.params.id, 'video') as VideoId;
  full.get(
    '/v1/videos/:id',
    api(async (req, tenant) => {
      const v = await store.getVideo(tenant.id, videoId(req));
      if (!v) throw new HttpError('not_found', `No video with id ${videoId(req)}.`);
      return json(200, videoView(v));
    }),
  );

  full.get(
    '/v1/videos',
    api(async (req, tenant) => {
      const propertyId = optionalId(req, 'property_id') as PropertyId | undefined;
      const status = statusParam(req);
      const list = new ListPage(req, { list: 'videos', owner: `tenant:${tenant.id}`, filters: { property_id: propertyId, status } });
      const page = await store.listVideos(tenant.id, { ...(propertyId ? { propertyId } : {}), ...(status ? { status } : {}) }, list.limit, list.from);
      return json(200, { data: page.items.map(videoView), next_cursor: list.cursor(page.nextAfter) });
    }),
  );

  full.post(
    '/v1/videos/:id/cancel',
    api(async (req, tenant) => {
      const id = videoId(req);
      const out = await store.cancelVideo(tenant.id, id, o.callbackFor);
      if (out.kind === 'not_found') throw new HttpError('not_found', `No video with id ${id}.`);
      if (out.kind === 'finished') throw new HttpError('conflict', `Video ${id} is ${out.video.status}; only a queued or rendering video can be cancelled.`);
      o.onCancelled(id);
      return json(200, videoView(out.video));
    }),
    { body: 'none' },
  );

  full.delete(
    '/v1/videos/:id',
    api(async (req, tenant) => {
      const id = videoId(req);
      const outcome = await store.deleteVideo(tenant.id, id);
      if (outcome.kind === 'not_found') throw new HttpError('not_found', `No video with id ${id}.`);
      if (outcome.kind === 'busy')
        throw new HttpError('conflict', `Video ${id} is rendering; cancel it first (POST /v1/videos/${id}/cancel) or delete it once it has finished.`);
      return kit.removeOrphans(outcome);
    }),
    { body: 'none' },
  );
}
