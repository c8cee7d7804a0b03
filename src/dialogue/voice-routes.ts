import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpError, quoteId, quoteValue } from '../http/errors.js';
import { json, type Reply } from '../http/reply.js';
import type { HttpServer, Request } from '../http/server.js';
import type { Logger } from '../log.js';
import { MAX_VOICE_CLIPS } from './voice-files.js';
import { silentLogger } from '../log.js';

/** What the routes need of the tier (DialogueTier implements it). */
export interface VoiceTier {
  /** Where synthesised files are (null when voice out has no directory). */
  readonly audioDirectory: string | null;
  /** URL path the Say intents' audio_url start with. */
  readonly audioPrefix: string;
  voiceInAvailable(): boolean;
  /** Whether as many clips as may be are being transcribed already (503, Retry-After). */
  voiceInBusy(): boolean;
  transcribe(agentId: number, audio: Buffer, mime: string): Promise<void>;
}

/** Accepted voice-in content types (parameters such as `; codecs=opus` are ignored). */
export const VOICE_TYPES: Readonly<Record<string, string>> = {
  'audio/wav': 'audio/wav',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  'audio/mpeg': 'audio/mpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/ogg': 'audio/ogg',
  'audio/webm': 'audio/webm',
};

export const MAX_VOICE_BYTES = 10 * 1024 * 1024;

/** Names the tier gives audio files (line ids); anything else, ".." included, is a 404. */
const AUDIO_FILE = /^[A-Za-z0-9_-]{1,80}\.wav$/;
/** A tick's `snapshot.agent`: an integer in the safe range, written without a leading zero or a plus. */
const AGENT = /^(0|-?[1-9][0-9]{0,15})$/;

export interface VoiceRouteOptions {
  /** Largest voice clip, bytes; default 10 MiB. */
  maxVoiceBytes?: number;
  /** The sidecar's gate (bearer token), run first on both routes; throws an HttpError to refuse. */
  authorize?: (req: Request) => void;
  logger?: Logger;
}

/**
 * Mounts `GET /audio/:file` (synthesised lines, audio/wav) and `POST /voice/:agent`
 * (a player's voice clip → 202, transcribed off the request path into the agent's heard
 * speech). Add them before the server listens. Auth, when the sidecar has a token, is the
 * caller's gate, as for /tick.
 */
export function mountVoiceRoutes(server: HttpServer, tier: VoiceTier, options: VoiceRouteOptions = {}): void {
  const prefix = tier.audioPrefix;
  const authorize = options.authorize ?? (() => {});
  const logger = options.logger ?? silentLogger;
  const maxBody = options.maxVoiceBytes ?? MAX_VOICE_BYTES;

  server.get(
    `${prefix}/:file`,
    async (req): Promise<Reply> => {
      authorize(req);
      const dir = tier.audioDirectory;
      const file = req.params.file ?? '';
      if (!dir || !AUDIO_FILE.test(file)) throw new HttpError('not_found', 'No such audio file.');
      const path = join(dir, file);
      let size: number;
      try {
        const s = await stat(path);
        if (!s.isFile()) throw new Error('not a file');
        size = s.size;
      } catch {
        throw new HttpError('not_found', 'No such audio file.');
      }
      return { status: 200, headers: { 'content-type': 'audio/wav', 'cache-control': 'public, max-age=3600' }, stream: createReadStream(path), length: size };
    },
    { headers: ['authorization', 'x-brain-token'] },
  );

  server.post(
    '/voice/:agent',
    (req): Reply => {
      authorize(req);
      const agent = req.params.agent ?? '';
      // Past 2^53 - 1 the number would round to another agent's id (9007199254740993 is read as ...992).
      if (!AGENT.test(agent) || !Number.isSafeInteger(Number(agent)))
        throw new HttpError('not_found', `No agent ${quoteId(agent)}: an agent id is an integer from -(2^53 - 1) to 2^53 - 1, as a tick's snapshot.agent.`);
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const mime = VOICE_TYPES[type];
      if (!mime)
        throw new HttpError(
          'unsupported_media_type',
          `Voice clips must be audio/wav, audio/mpeg, audio/ogg or audio/webm, got ${type ? quoteValue(type) : 'none'}.`,
        );
      if (req.body.length === 0) throw new HttpError('bad_request', 'The voice clip is empty.');
      if (!tier.voiceInAvailable()) throw new HttpError('unavailable', 'Voice input is off or not configured (policy.voice_in, SERVICE_STT_BASE_URL).');
      if (tier.voiceInBusy())
        throw new HttpError('unavailable', `As many voice clips as may be (${MAX_VOICE_CLIPS}) are being transcribed; send this one again shortly.`, {
          headers: { 'retry-after': '1' },
        });
      const id = Number(agent);
      tier.transcribe(id, req.body, mime).catch((err: unknown) => {
        logger.warn('voice clip not transcribed', { agent: id, error: err instanceof Error ? err.message : String(err) });
      });
      return json(202, { accepted: true, agent: id, bytes: req.body.length });
    },
    { maxBody, headers: ['content-type', 'content-length', 'authorization', 'x-brain-token'] },
  );
}
