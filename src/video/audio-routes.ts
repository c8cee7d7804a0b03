import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Handler, HttpServer } from '../http/server.js';
import { HttpError, validationFailed } from '../http/errors.js';
import { json } from '../http/reply.js';
import { firstChars, idParam } from '../http/validate.js';
import { ListPage } from '../http/pagination.js';
import { probeAudio } from './ffmpeg.js';
import { type TenantHandler, type VideoRouteKit } from './route-kit.js';
import type { VideoRoutesOptions } from './route-options.js';
import { VIDEO_LIMITS } from './limits.js';
import { NOT_UTF8_NAME } from './uploads.js';
import type { AudioId, AudioRecord } from './types.js';

/** Audio a tenant may upload, by Content-Type: the containers ffprobe must find and the codecs allowed in them. */
const AUDIO_TYPES: Record<string, { formats: RegExp; codecs: RegExp; ext: string }> = {
  'audio/mpeg': { formats: /^mp3$/, codecs: /^mp3$/, ext: 'mp3' },
  'audio/aac': { formats: /^aac$/, codecs: /^aac$/, ext: 'aac' },
  'audio/mp4': { formats: /^mov,mp4,m4a/, codecs: /^aac$/, ext: 'm4a' },
  'audio/wav': { formats: /^wav$/, codecs: /^pcm_/, ext: 'wav' },
};
const ALIASES: Record<string, string> = {
  'audio/mp3': 'audio/mpeg',
  'audio/x-m4a': 'audio/mp4',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
};

function audioView(a: AudioRecord) {
  return {
    id: a.id,
    filename: a.filename,
    content_type: a.contentType,
    codec: a.codec,
    size_bytes: a.sizeBytes,
    duration_s: a.durationS,
    created_at: a.createdAt,
  };
}

const problem = (message: string) => validationFailed([{ path: 'body', message }], `The audio track was refused: ${message}. Nothing was stored.`);

/** Audio tracks (music for tours): upload MP3, AAC or WAV (size-capped, probed with ffprobe), list, read, delete. */
export function mountAudioRoutes(server: HttpServer, o: VideoRoutesOptions, api: (h: TenantHandler) => Handler, kit: VideoRouteKit): void {
  const { store } = o;
  const full = server.scoped('full');
  full.post('/v1/audio', api(uploadAudio(o)), { body: 'stream', maxBody: VIDEO_LIMITS.maxAudioBytes });

  full.get(
    '/v1/audio',
    api(async (req, tenant) => {
      const list = new ListPage(req, { list: 'audio', owner: `tenant:${tenant.id}` });
      const page = await store.listAudio(tenant.id, list.limit, list.from);
      return json(200, { data: page.items.map(audioView), next_cursor: list.cursor(page.nextAfter) });
    }),
  );

  full.get(
    '/v1/audio/:id',
    api(async (req, tenant) => {
      const id = idParam(req.params.id, 'audio track') as AudioId;
      const a = await store.getAudio(tenant.id, id);
      if (!a) throw new HttpError('not_found', `No audio track with id ${id}.`);
      return json(200, audioView(a));
    }),
  );

  full.delete(
    '/v1/audio/:id',
    api(async (req, tenant) => {
      const id = idParam(req.params.id, 'audio track') as AudioId;
      const outcome = await store.deleteAudio(tenant.id, id);
      if (outcome.kind === 'not_found') throw new HttpError('not_found', `No audio track with id ${id}.`);
      if (outcome.kind === 'busy')
        throw new HttpError(
          'conflict',
          `Audio track ${id} is used by video ${outcome.videoId}, which is ${outcome.status}; cancel it or wait until it has finished.`,
        );
      return kit.removeOrphans(outcome);
    }),
    { body: 'none' },
  );
}

/** POST /v1/audio: the body streamed to a temporary file, probed, stored, then counted against the tenant's cap. */
function uploadAudio(o: VideoRoutesOptions): TenantHandler {
  const { store } = o;
  return async (req, tenant) => {
    const raw = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const type = ALIASES[raw] ?? raw;
    const kind = AUDIO_TYPES[type];
    if (!kind)
      throw new HttpError('unsupported_media_type', `Upload an audio track as the request body with Content-Type ${Object.keys(AUDIO_TYPES).join(', ')}.`);
    if (!o.ffprobe) throw new HttpError('unavailable', 'Audio uploads need ffprobe on this server (it comes with ffmpeg).');
    const given = req.searchParams().get('filename') ?? '';
    // A percent-encoded byte that is not UTF-8 decodes to U+FFFD: the name would be stored with it in place of what was meant.
    if (given.includes('\ufffd'))
      throw validationFailed(
        [{ path: 'filename', message: NOT_UTF8_NAME }],
        'The track name is not UTF-8; percent-encode its UTF-8 bytes. Nothing was stored.',
      );
    const name = firstChars(basename(given.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, ''), 255) || `track.${kind.ext}`;
    const tmp = join(o.dataDir, 'tmp', `${randomUUID()}.${kind.ext}`);
    let kept = false;
    try {
      await pipeline(req.stream!, createWriteStream(tmp));
      const probe = await probeAudio(o.ffprobe, tmp);
      if (!probe) throw problem(`it is not a readable ${kind.ext.toUpperCase()} file`);
      if (!kind.formats.test(probe.format) || !kind.codecs.test(probe.codec)) throw problem(`it is ${probe.format}/${probe.codec}, not what ${type} names`);
      if (probe.videoStreams > 0) throw problem('it has a video stream; upload audio only');
      const { minAudioSeconds: min, maxAudioSeconds: max } = VIDEO_LIMITS;
      if (probe.durationS < min || probe.durationS > max) throw problem(`it lasts ${probe.durationS.toFixed(1)} s; a track lasts ${min} to ${max} s`);
      const { size: sizeBytes } = await stat(tmp);
      const key = `audio-${randomUUID()}.${kind.ext}`;
      await o.storage.putFile('media', key, tmp, type);
      kept = true;
      const added = await store.addAudio(
        tenant.id,
        { filename: name, contentType: type, codec: probe.codec, sizeBytes, durationS: Math.round(probe.durationS * 1000) / 1000, storageKey: key },
        VIDEO_LIMITS.maxAudioTracksPerTenant,
      );
      if (added === 'too_many') {
        await o.storage.delete('media', [key]).catch(() => {});
        throw new HttpError('plan_limit', `A tenant may keep at most ${VIDEO_LIMITS.maxAudioTracksPerTenant} audio tracks; delete one first.`);
      }
      return json(201, audioView(added), { location: `/v1/audio/${added.id}` });
    } finally {
      if (!kept) await unlink(tmp).catch(() => {});
    }
  };
}
