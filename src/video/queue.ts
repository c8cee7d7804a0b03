import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../log.js';
import type { CallbackFor, VideoStore } from './store.js';
import type { AssetStorage } from './storage.js';
import type { FfmpegBinary, FfmpegConfinement } from './ffmpeg.js';
import { FfmpegError, runFfmpeg } from './ffmpeg.js';
import { fitPhotoArgs, planTour, posterArgs, type TitleCard, type TourTimings } from './tour.js';
import { titleLines, renderTitleImage } from './titlecard.js';
import { FORMATS, type PhotoRecord, type PropertyRecord, type VideoId, type VideoRecord } from './types.js';
import type { TenantId } from '../identity/types.js';
import { leaseOwner, type Lease } from '../store/lease.js';

export interface RenderQueueOptions {
  store: VideoStore;
  /** Holds work/ (per-render scratch). */
  dataDir: string;
  /** Where photos are read from and rendered videos and posters are stored. */
  storage: AssetStorage;
  /** Null when no ffmpeg was found: every render then fails with the reason. */
  ffmpeg: FfmpegBinary | null;
  ffmpegProblem?: string;
  /** A font for the title card; null draws it with the built-in bitmap font. */
  fontFile: string | null;
  concurrency: number;
  /** How each ffmpeg process is confined (prlimit and its address-space limit). */
  confinement: FfmpegConfinement;
  /** The wall-clock limit of a whole render; default RENDER_WALL_CLOCK. */
  wallClock?: WallClock;
  timings: TourTimings;
  preset: string;
  logger: Logger;
  /** The callback to enqueue with a finished video (in the same transaction). */
  callbackFor: CallbackFor;
  /** Told after a video completes or fails, so callbacks go out without waiting for a poll. */
  onFinished?: (video: VideoRecord) => void;
  /** Names this queue's claims; default host, pid and a random suffix. */
  owner?: string;
  /** How long a claim holds a render between renewals; default RENDER_LEASE_MS. */
  leaseMs?: number;
}

/**
 * How long a claimed render stays with its worker without a renewal. The worker renews it
 * every third of that while ffmpeg runs, so a render of any length keeps its lease, and one
 * whose worker died is taken by another worker at most this long after the last renewal.
 */
export const RENDER_LEASE_MS = 60_000;

/**
 * A render (fitting the photos, the video, its poster) may take `perVideoSecond` times the
 * video's duration, never less than `minMs` and never more than `maxMs`. Renders run faster
 * than real time, so 20x is a wide margin; the floor covers what does not scale with the
 * duration (process start-up, fitting large photos) on a busy machine, and 10 minutes caps the
 * longest tour.
 */
export interface WallClock {
  minMs: number;
  maxMs: number;
  perVideoSecond: number;
}

export const RENDER_WALL_CLOCK: WallClock = { minMs: 3 * 60_000, maxMs: 10 * 60_000, perVideoSecond: 20 };

export function renderTimeLimitMs(durationS: number, wallClock: WallClock = RENDER_WALL_CLOCK): number {
  return Math.min(wallClock.maxMs, Math.max(wallClock.minMs, Math.ceil(durationS * wallClock.perVideoSecond * 1000)));
}

/**
 * Renders queued videos, `concurrency` at a time, taking tenants in turn (round-robin over
 * the tenants with queued videos, each tenant's oldest first), so one tenant's long queue
 * never holds back another's video. The queue is the videos table itself: a video is
 * claimed by moving it from queued to rendering under a lease, renewed while it renders. A
 * worker that stops hands its renders back to the queue; one that dies leaves them to the
 * first worker that finds the lease run out (on a store only one process serves, start()
 * requeues them at once), so a job is never lost or stuck, and never rendered by two
 * workers that both still hold it.
 */
export class RenderQueue {
  private readonly o: RenderQueueOptions;
  private running = new Map<VideoId, { child: ChildProcess | null; done: Promise<void> }>();
  private stopping = false;
  private pumping = false;
  private pumpAgain = false;
  /** The tenant whose video was claimed last: the next claim starts after it (round-robin). */
  private lastTenant: TenantId | null = null;
  private readonly lease: Lease;
  /** Renders finished since start, by outcome (read by /metrics at scrape time). */
  readonly finished = { succeeded: 0, failed: 0 };

  /** Renders running now. */
  get rendering(): number {
    return this.running.size;
  }

  constructor(options: RenderQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new Error(`renderConcurrency must be a positive integer, got ${options.concurrency}`);
    const t = options.timings;
    if (!(t.fadeS > 0 && t.titleS > t.fadeS && t.photoS > t.fadeS))
      throw new Error(`timings need titleS and photoS longer than fadeS > 0, got ${JSON.stringify(t)}`);
    if (!Number.isInteger(t.fps) || t.fps < 1 || t.fps > 60) throw new Error(`timings.fps must be an integer from 1 to 60, got ${t.fps}`);
    this.o = options;
    this.lease = { owner: options.owner ?? leaseOwner(), ms: options.leaseMs ?? RENDER_LEASE_MS };
    if (!Number.isInteger(this.lease.ms) || this.lease.ms < 3) throw new Error(`leaseMs must be an integer of at least 3, got ${this.lease.ms}`);
  }

  async start(): Promise<void> {
    const requeued = await this.o.store.requeueInterrupted();
    if (requeued > 0) this.o.logger.info('requeued interrupted renders', { count: requeued });
    // A process killed mid-render leaves its scratch directory (a partial video, copies of the
    // photos) behind. On a store only this process renders from, every one left is such a
    // leftover; replicas sharing a data directory cannot tell a dead one's from a live one's.
    if (this.o.store.exclusive) {
      const work = join(this.o.dataDir, 'work');
      for (const name of await readdir(work).catch(() => [])) await rm(join(work, name), { recursive: true, force: true });
    }
    this.kick();
  }

  /** Starts queued renders while there is room; safe to call at any time. */
  kick(): void {
    if (this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.pumpAgain) {
        this.pumpAgain = false;
        this.kick();
      }
    });
  }

  private async pump(): Promise<void> {
    while (!this.stopping && this.running.size < this.o.concurrency) {
      const video = await this.o.store.claimNextQueued(this.lease, this.lastTenant);
      if (!video) return;
      // Its own render, whose lease lapsed while this process stalled: the claim renewed it; it is not started twice.
      if (this.running.has(video.id)) continue;
      this.lastTenant = video.tenantId;
      const slot: { child: ChildProcess | null; lost: boolean; done: Promise<void> } = { child: null, lost: false, done: Promise.resolve() };
      slot.done = this.render(video, slot).finally(() => {
        this.running.delete(video.id);
        this.kick();
      });
      this.running.set(video.id, slot);
    }
  }

  /**
   * Stops rendering: kills the ffmpeg processes and puts their videos back in the queue, for
   * this or another worker to render from the beginning.
   */
  async close(): Promise<void> {
    this.stopping = true;
    for (const slot of this.running.values()) slot.child?.kill('SIGKILL');
    await Promise.allSettled([...this.running.values()].map((s) => s.done));
    const released = await this.o.store.releaseRenders(this.lease.owner).catch(() => 0);
    if (released > 0) this.o.logger.info('renders handed back to the queue at stop', { count: released });
  }

  /**
   * Renews the render's lease every third of its length; when the lease is gone (another worker
   * took the render after this one missed its renewals) the render is abandoned: ffmpeg killed,
   * nothing written.
   */
  private keepLease(video: VideoRecord, slot: { child: ChildProcess | null; lost: boolean }): () => void {
    const timer = setInterval(
      () => {
        this.o.store.renewRender(this.lease, video.id).then(
          (held) => {
            if (held || slot.lost) return;
            slot.lost = true;
            this.o.logger.warn('render lease lost to another worker; abandoning the render', { videoId: video.id });
            slot.child?.kill('SIGKILL');
          },
          (err: unknown) => this.o.logger.warn('render lease renewal failed', { videoId: video.id, error: err instanceof Error ? err.message : String(err) }),
        );
      },
      Math.floor(this.lease.ms / 3),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  private async render(video: VideoRecord, slot: { child: ChildProcess | null; lost: boolean }): Promise<void> {
    // One scratch directory per attempt: a worker that died mid-render may have left an ffmpeg
    // writing into its own, and replicas on one machine may share the data directory.
    const work = join(this.o.dataDir, 'work', `${video.id}-${randomUUID()}`);
    /** Assets stored for this render: removed again if it does not complete. */
    const stored: string[] = [];
    const stopRenewing = this.keepLease(video, slot);
    const abandoned = () => this.stopping || slot.lost;
    try {
      const ffmpeg = this.o.ffmpeg;
      if (!ffmpeg) throw new RenderError('video rendering is unavailable on this server (ffmpeg not found)', this.o.ffmpegProblem ?? 'ffmpeg not found');
      await rm(work, { recursive: true, force: true });
      await mkdir(work, { recursive: true });
      const property = await this.o.store.getProperty(video.tenantId, video.propertyId);
      const photos = await this.o.store.photosByIds(video.photoIds);
      if (!property || photos.length !== video.photoIds.length) throw new RenderError('the property or some of its photos no longer exist');
      const title = await this.titleCard(property, work, video, ffmpeg);
      const output = join(work, 'video.mp4');
      const { width: W, height: H } = FORMATS[video.format];
      // ffmpeg reads local files: the stored photos themselves, or copies in the scratch directory.
      const originals = await Promise.all(photos.map((p) => this.o.storage.localPath('photos', p.storageKey, work)));
      // A photo with more pixels than the output frame is fitted to it first (see fitPhotoArgs); a smaller one is used as it is.
      const needsFit = (p: PhotoRecord) => p.width * p.height > W * H;
      const fitted = photos.map((p, i) => (needsFit(p) ? join(work, `photo-${i}.jpg`) : originals[i]!));
      const plan = planTour({
        photos: fitted,
        format: video.format,
        title,
        output,
        timings: this.o.timings,
        xfade: ffmpeg.xfade,
        preset: this.o.preset,
      });
      const deadline = Date.now() + renderTimeLimitMs(plan.durationS, this.o.wallClock);
      const confinement = this.o.confinement;
      const still = () => ({ durationS: 0, timeoutMs: deadline - Date.now(), confinement, onSpawn: (child: ChildProcess) => (slot.child = child) });
      for (const [i, photo] of photos.entries()) {
        if (!needsFit(photo)) continue;
        await runFfmpeg(ffmpeg.path, fitPhotoArgs(originals[i]!, video.format, fitted[i]!), still());
        if (abandoned()) return;
      }
      let reported = 0;
      await runFfmpeg(ffmpeg.path, plan.args, {
        durationS: plan.durationS,
        timeoutMs: deadline - Date.now(),
        confinement,
        onSpawn: (child) => {
          slot.child = child;
        },
        onProgress: (f) => {
          // 1 is kept for the finished video; small steps are not worth a write.
          const p = Math.min(0.99, Math.floor(f * 100) / 100);
          if (p >= reported + 0.02) {
            reported = p;
            void this.o.store.setProgress(video.id, p);
          }
        },
      });
      if (abandoned()) return;
      const poster = join(work, 'poster.jpg');
      await runFfmpeg(ffmpeg.path, posterArgs(output, plan.posterAtS, poster), still());
      if (abandoned()) return;
      const videoKey = `${randomUUID()}.mp4`;
      const posterKey = `${randomUUID()}.jpg`;
      const [videoSize, videoTag, posterSize, posterTag] = [(await stat(output)).size, await etagOf(output), (await stat(poster)).size, await etagOf(poster)];
      await this.o.storage.putFile('assets', videoKey, output, 'video/mp4');
      stored.push(videoKey);
      await this.o.storage.putFile('assets', posterKey, poster, 'image/jpeg');
      stored.push(posterKey);
      // Scratch goes before the video shows as finished, so a finished video leaves nothing behind.
      await rm(work, { recursive: true, force: true });
      const done = await this.o.store.completeVideo(
        this.lease.owner,
        video.id,
        {
          video: {
            kind: 'video',
            contentType: 'video/mp4',
            sizeBytes: videoSize,
            width: plan.width,
            height: plan.height,
            durationS: plan.durationS,
            etag: videoTag,
            storageKey: videoKey,
          },
          poster: {
            kind: 'poster',
            contentType: 'image/jpeg',
            sizeBytes: posterSize,
            width: plan.width,
            height: plan.height,
            durationS: null,
            etag: posterTag,
            storageKey: posterKey,
          },
        },
        this.o.callbackFor,
      );
      if (!done) {
        await this.o.storage.delete('assets', stored).catch(() => {});
        this.o.logger.warn('render finished after its lease passed to another worker; result dropped', { videoId: video.id });
        return;
      }
      this.finished.succeeded++;
      this.o.logger.info('video rendered', { videoId: video.id, durationS: plan.durationS });
      this.o.onFinished?.(done);
    } catch (err) {
      await this.o.storage.delete('assets', stored).catch(() => {});
      // A render killed by close() is handed back to the queue; one whose lease was lost belongs to another worker now.
      if (abandoned()) return;
      const detail = err instanceof RenderError ? err.detail : err instanceof Error ? err.message : String(err);
      this.finished.failed++;
      this.o.logger.error('render failed', { videoId: video.id, error: detail });
      // Clients see a short reason; ffmpeg's output (server paths included) goes only to the log.
      await rm(work, { recursive: true, force: true }).catch(() => {});
      const reason = err instanceof RenderError ? err.message : err instanceof FfmpegError ? err.publicMessage : 'internal render error';
      const failed = await this.o.store.failVideo(this.lease.owner, video.id, `render failed: ${reason}`, this.o.callbackFor);
      if (failed) this.o.onFinished?.(failed);
    } finally {
      stopRenewing();
      await rm(work, { recursive: true, force: true }).catch(() => {});
    }
  }

  private async titleCard(property: PropertyRecord, work: string, video: VideoRecord, ffmpeg: FfmpegBinary): Promise<TitleCard> {
    const lines = titleLines(property, video.format);
    if (this.o.fontFile && ffmpeg.drawtext) {
      const files = await Promise.all(
        lines.map(async (l, i) => {
          const textFile = join(work, `title-${i}.txt`);
          await writeFile(textFile, l.text);
          return { textFile, scale: l.scale };
        }),
      );
      return { kind: 'drawtext', fontFile: this.o.fontFile, lines: files };
    }
    const path = join(work, 'title.ppm');
    await writeFile(path, renderTitleImage(lines, video.format));
    return { kind: 'image', path };
  }
}

/** A render failure whose message is fit for the client; `detail` is for the log. */
class RenderError extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
    this.name = 'RenderError';
  }
}

async function etagOf(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `"${hash.digest('hex').slice(0, 32)}"`;
}
