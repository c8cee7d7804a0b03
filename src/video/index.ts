import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import type { HttpServer } from '../http/server.js';
import type { Authenticator } from '../identity/auth.js';
import { PRIVATE_DIR_MODE } from '../store/files.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import type { CallbackFor, VideoStore } from './store.js';
import { mountVideoRoutes } from './routes.js';
import { RenderQueue, type WallClock } from './queue.js';
import { CallbackDispatcher } from './callbacks.js';
import { createSender } from '../net/sender.js';
import type { PrivateUrls, Resolve } from '../net/ssrf.js';
import {
  DEFAULT_FFMPEG_ADDRESS_SPACE,
  findFfprobe,
  findPrlimit,
  locateFfmpeg,
  probeFfmpeg,
  type FfmpegBinary,
  type FfmpegConfinement,
  type FfmpegLocation,
} from './ffmpeg.js';
import type { Speak } from './render.js';
import { findFont } from './font.js';
import { DEFAULT_TIMINGS, type TourTimings } from './tour.js';
import { videoView } from './views.js';
import { ByteBudget } from '../http/byte-budget.js';
import { newToken } from '../identity/tokens.js';
import type { TenantId, TenantRecord } from '../identity/types.js';
import { LocalStorage, type AssetStorage } from './storage.js';
import { AssetUrlSigner, loadSigningKey, signingKeyFromHex } from './signed-urls.js';
import { makeDir } from '../store/make-dir.js';

export interface VideoServiceOptions {
  /** Properties, photos, videos and assets, on the services' database. */
  store: VideoStore;
  auth: Authenticator;
  /** Photos, rendered assets and scratch files live here (`--data`, default ./data). */
  dataDir: string;
  /** ffmpeg binary; default FFMPEG_PATH, else ffmpeg on PATH, else @ffmpeg-installer/ffmpeg. */
  ffmpegPath?: string | undefined;
  /** Address space each ffmpeg process may map (prlimit --as); default DEFAULT_FFMPEG_ADDRESS_SPACE (2 GiB). */
  ffmpegAddressSpaceBytes?: number | undefined;
  /** prlimit binary; default prlimit on PATH (Linux); null runs ffmpeg with the wall-clock limit alone. */
  prlimitPath?: string | null | undefined;
  /** Wall-clock limit of a render; default RENDER_WALL_CLOCK (20x the video's duration, from 3 to 10 min). */
  renderWallClock?: WallClock | undefined;
  /** Renders at once; default half the cores, at least 1 (one ffmpeg already uses several cores). */
  renderConcurrency?: number | undefined;
  now?: () => number;
  logger?: Logger;
  /** Admits callback URLs on loopback/private addresses and plain http (local development, tests). */
  allowPrivateCallbacks?: PrivateUrls | undefined;
  timings?: Partial<TourTimings> | undefined;
  /** x264 preset; default ultrafast, so a 1080p tour renders faster than real time on 2 cores. */
  preset?: string | undefined;
  /** Font for the title card; default a system sans found with fontconfig or at known paths. */
  fontFile?: string | undefined;
  /** Bytes of JSON photo uploads held at once across all requests; default JSON_UPLOAD_BUDGET_BYTES. */
  jsonUploadBudget?: ByteBudget | undefined;
  /** DNS for the SSRF guard on callback URLs (tests inject one); default the system resolver. */
  resolve?: Resolve | undefined;
  /** Real milliseconds between looks for due callback retries; default 1000. */
  callbackPollMs?: number | undefined;
  /** `s3://bucket/prefix`: photos and rendered assets go to S3-compatible storage (AWS_* environment); default the data directory. */
  objectStore?: string | undefined;
  /** The origin signed asset URLs start with (SERVICE_PUBLIC_URL); default the request's scheme and Host header. */
  publicUrl?: string | undefined;
  /** The key of signed asset URLs as hex (SERVICE_URL_SIGNING_KEY), for replicas that must agree; default DATA_DIR/url-signing.key. */
  urlSigningKey?: string | undefined;
  /** The scheme this server is reached with when no public URL is set. */
  scheme?: 'http' | 'https' | undefined;
  /** The tenant of an asset opened with a signed URL (to check it is active and on the plan). */
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  /** Run the render queue and callback delivery here (default true); false serves the routes alone (an API-only replica). */
  background?: boolean | undefined;
  /** Told after a video is queued (besides this process's own queue), so other processes' queues can look. */
  onQueued?: (() => void) | undefined;
  /** The TTS add-on that reads voice-overs (src/cli wires the voice-out plugin); null or absent: no voice-overs. */
  speak?: Speak | null | undefined;
  /** Lease of renders and callbacks; default RENDER_LEASE_MS and CALLBACK_LEASE_MS. */
  leaseMs?: number | undefined;
}

export interface VideoService {
  /** Looks for queued videos now (one queued by another process); nothing without the background role. */
  kick(): void;
  /** Renders running now and finished since start, by outcome (for /metrics). */
  renders(): { rendering: number; succeeded: number; failed: number };
  /** Stops rendering (interrupted renders resume on the next start) and callback delivery. */
  close(): Promise<void>;
}

/**
 * 15 MiB a photo, 20 photos a request. A JSON body is read whole to be parsed, so it is capped
 * at 25 MiB (one photo at the per-photo limit, base64-encoded, with room to spare); multipart
 * bodies are streamed to disk and carry up to the 20 photos.
 */
export const UPLOAD_LIMITS = { maxPhotoBytes: 15 * 1024 * 1024, maxPhotos: 20, maxJsonBytes: 25 * 1024 * 1024 } as const;
/** Bytes of JSON photo uploads held in memory at once across all requests (five at the JSON cap); past it, 503 with Retry-After. */
export const JSON_UPLOAD_BUDGET_BYTES = 128 * 1024 * 1024;
export const MAX_PHOTOS_PER_PROPERTY = 100;

/** The data directory, or the bucket of `--object-store` once it answers (a wrong bucket or credential stops the start). */
async function openStorage(objectStore: string | undefined, dataDir: string): Promise<AssetStorage> {
  if (!objectStore) return new LocalStorage(dataDir);
  // Loaded only here: the S3 SDK costs every process that imports the service (each CLI
  // command, each test file) about a tenth of a second of CPU, and most never use a bucket.
  const { parseObjectStoreUrl, S3Storage, s3ClientFromEnv } = await import('./s3-storage.js');
  const s3 = new S3Storage(parseObjectStoreUrl(objectStore), s3ClientFromEnv());
  try {
    await s3.check();
  } catch (err) {
    s3.close();
    throw err;
  }
  return s3;
}

/** One callback per video, so a request for several formats is told of each format as it finishes. */
const videoCallback: CallbackFor = (video) => {
  if (!video.callbackUrl) return null;
  const event = video.status === 'completed' ? 'video.completed' : video.status === 'cancelled' ? 'video.cancelled' : 'video.failed';
  return { url: video.callbackUrl, event, body: JSON.stringify({ event, video: videoView(video) }) };
};

/**
 * ffmpeg, its confinement and the title card's font, logged; without ffmpeg the API still
 * serves and renders fail with the reason. ffmpeg is found at start but first run at the first
 * render (its capabilities logged then): most servers never render, and a run costs a fifth
 * of a CPU second.
 */
function findRenderer(
  options: VideoServiceOptions,
  logger: Logger,
): { ffmpeg: FfmpegLocation | null; ffmpegProblem: string | undefined; confinement: FfmpegConfinement; fontFile: string | null } {
  let ffmpeg: FfmpegLocation | null = null;
  let ffmpegProblem: string | undefined;
  try {
    ffmpeg = locateFfmpeg(options.ffmpegPath);
  } catch (err) {
    // The API still serves properties and photos; renders fail with this reason until ffmpeg is installed.
    ffmpegProblem = (err as Error).message;
    logger.error('video rendering unavailable', { error: ffmpegProblem });
  }
  const addressSpaceBytes = options.ffmpegAddressSpaceBytes ?? DEFAULT_FFMPEG_ADDRESS_SPACE;
  if (!Number.isSafeInteger(addressSpaceBytes) || addressSpaceBytes < 64 * 1024 * 1024)
    throw new Error(`ffmpegAddressSpaceBytes must be an integer of at least 64 MiB, got ${addressSpaceBytes}`);
  const confinement: FfmpegConfinement = { prlimit: options.prlimitPath === undefined ? findPrlimit() : options.prlimitPath, addressSpaceBytes };
  if (ffmpeg && !confinement.prlimit)
    logger.warn('prlimit not found: ffmpeg renders run with their wall-clock limit but without an address-space limit (install util-linux)');
  const fontFile = findFont(options.fontFile);
  if (ffmpeg)
    logger.info('video renderer', {
      ffmpeg: ffmpeg.path,
      source: ffmpeg.source,
      font: fontFile ?? 'built-in bitmap font',
      addressSpaceBytes: confinement.prlimit ? addressSpaceBytes : null,
    });
  return { ffmpeg, ffmpegProblem, confinement, fontFile };
}

/** The ffmpeg of renders, run once at the first render; its capabilities logged then, or why it does not run each time it fails. */
function probedOnUse(found: FfmpegLocation, logger: Logger): () => Promise<FfmpegBinary> {
  let logged = false;
  return async () => {
    try {
      const bin = await probeFfmpeg(found);
      if (!logged) {
        logged = true;
        logger.info('video renderer probed', { ffmpeg: bin.path, xfade: bin.xfade, drawtext: bin.drawtext });
      }
      return bin;
    } catch (err) {
      logger.error('video rendering unavailable', { error: (err as Error).message });
      throw err;
    }
  };
}

/** The data directory's folders, the signing key of asset URLs, and the storage (local or S3); staged uploads of a stopped process cleared. */
async function openFiles(options: VideoServiceOptions, nowMs: number, logger: Logger): Promise<{ signer: AssetUrlSigner; storage: AssetStorage }> {
  const local = ['work', ...(options.objectStore ? [] : ['photos', 'assets', 'media'])];
  for (const sub of local) await makeDir(join(options.dataDir, sub), PRIVATE_DIR_MODE);
  const signer = new AssetUrlSigner(
    options.urlSigningKey ? signingKeyFromHex(options.urlSigningKey, 'SERVICE_URL_SIGNING_KEY') : await loadSigningKey(options.dataDir),
  );
  // Opened after what may refuse the start (a malformed key), so a refusal leaves no client open.
  const storage = await openStorage(options.objectStore, options.dataDir);
  logger.info('video storage', { where: storage.description });
  await clearStagedUploads(join(options.dataDir, 'tmp'), nowMs);
  return { signer, storage };
}

/** Completion callbacks to tenants' URLs, through the SSRF-guarded sender. */
function callbackDispatcher(options: VideoServiceOptions, sender: ReturnType<typeof createSender>, now: () => number, logger: Logger): CallbackDispatcher {
  return new CallbackDispatcher({
    send: sender.send,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    store: options.store,
    secretFor: (tenantId: TenantId) => options.store.callbackSecret(tenantId, () => newToken('webhookSecret')),
    allowPrivate: options.allowPrivateCallbacks ?? false,
    now,
    logger,
    ...(options.callbackPollMs ? { pollMs: options.callbackPollMs } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
}

/** The property-video API (spec 000): routes, render queue and completion callbacks. */
export async function mountVideo(server: HttpServer, options: VideoServiceOptions): Promise<VideoService> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const { ffmpeg, ffmpegProblem, confinement, fontFile } = findRenderer(options, logger);
  const { signer, storage } = await openFiles(options, now(), logger);
  const store = options.store;
  const background = options.background ?? true;
  const sender = createSender();
  const callbacks = callbackDispatcher(options, sender, now, logger);
  const queue = new RenderQueue({
    store,
    storage,
    dataDir: options.dataDir,
    ffmpeg: ffmpeg ? probedOnUse(ffmpeg, logger) : null,
    ...(ffmpegProblem ? { ffmpegProblem } : {}),
    fontFile,
    concurrency: options.renderConcurrency ?? Math.max(1, Math.floor(availableParallelism() / 2)),
    confinement,
    ...(options.renderWallClock ? { wallClock: options.renderWallClock } : {}),
    timings: { ...DEFAULT_TIMINGS, ...options.timings },
    preset: options.preset ?? 'ultrafast',
    logger,
    callbackFor: videoCallback,
    speak: options.speak ?? null,
    onFinished: () => callbacks.kick(),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  mountVideoRoutes(server, {
    store,
    auth: options.auth,
    dataDir: options.dataDir,
    storage,
    signer,
    publicUrl: options.publicUrl,
    scheme: options.scheme ?? 'http',
    getTenant: options.getTenant,
    now,
    uploads: UPLOAD_LIMITS,
    jsonBudget: options.jsonUploadBudget ?? new ByteBudget(JSON_UPLOAD_BUDGET_BYTES),
    maxPhotosPerProperty: MAX_PHOTOS_PER_PROPERTY,
    allowPrivateCallbacks: options.allowPrivateCallbacks ?? false,
    resolve: options.resolve,
    logger,
    voiceAvailable: !!options.speak,
    ffprobe: ffmpeg ? findFfprobe(ffmpeg.path) : null,
    callbackFor: videoCallback,
    onCancelled: (id) => {
      if (background) queue.kick();
      queue.cancel(id);
      callbacks.kick();
    },
    onQueued: () => {
      if (background) queue.kick();
      options.onQueued?.();
    },
  });
  if (background) {
    await queue.start();
    callbacks.start();
  }
  return {
    kick: () => {
      if (background) queue.kick();
    },
    renders: () => ({ rendering: queue.rendering, ...queue.finished }),
    async close() {
      await queue.close();
      await callbacks.close();
      sender.close();
      storage.close();
    },
  };
}

/**
 * A staged upload untouched this long belongs to no request under way: its file is written as
 * its bytes arrive, and uWebSockets.js closes a connection that sends nothing for 10 s.
 */
export const STALE_UPLOAD_MS = 60 * 60 * 1000;

/**
 * Staged uploads of a process that stopped mid-request are never committed. Another process
 * may be receiving uploads into the same directory (an `api` process beside a restarting
 * `worker` on one SQLite file, replicas sharing it on PostgreSQL) and its files cannot be told
 * from a dead one's, so only those untouched for STALE_UPLOAD_MS are removed.
 */
async function clearStagedUploads(dir: string, now: number): Promise<void> {
  for (const name of await readdir(dir).catch(() => [])) {
    const path = join(dir, name);
    const staged = await stat(path).catch(() => null);
    if (staged !== null && now - staged.mtimeMs > STALE_UPLOAD_MS) await rm(path, { recursive: true, force: true });
  }
  await makeDir(dir, PRIVATE_DIR_MODE);
}
