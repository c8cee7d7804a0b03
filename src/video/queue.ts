import { randomUUID } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../log.js';
import type { CallbackFor, VideoStore } from './store.js';
import type { AssetStorage } from './storage.js';
import type { FfmpegBinary, FfmpegConfinement } from './ffmpeg.js';
import { FfmpegError } from './ffmpeg.js';
import { frameTimings, tourFrames, type TourTimings } from './tour.js';
import { renderBatch, RenderError, type Rendered, type Speak } from './render.js';
import type { VideoId, VideoRecord } from './types.js';
import type { TenantId } from '../identity/types.js';
import { leaseOwner, type Lease } from '../store/lease.js';
import { makeDir } from '../store/make-dir.js';

export interface RenderQueueOptions {
  store: VideoStore;
  /** Holds work/ (per-render scratch). */
  dataDir: string;
  /** Where photos are read from and rendered videos and posters are stored. */
  storage: AssetStorage;
  /** ffmpeg with its capabilities, probed on first use; null when none was found: every render then fails with the reason. */
  ffmpeg: (() => Promise<FfmpegBinary>) | null;
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
  /** The TTS add-on for voice-overs; null when the server has none. */
  speak?: Speak | null;
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
  /** Renders under way, by each video they render (the videos of one batch share a slot). */
  private running = new Map<VideoId, Slot>();
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
    return new Set(this.running.values()).size;
  }

  constructor(options: RenderQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
      throw new Error(`renderConcurrency must be a positive integer, got ${options.concurrency}`);
    const t = options.timings;
    if (!(t.fadeS > 0 && t.titleS > t.fadeS && t.photoS > t.fadeS))
      throw new Error(`timings need titleS and photoS longer than fadeS > 0, got ${JSON.stringify(t)}`);
    if (!Number.isInteger(t.fps) || t.fps < 1 || t.fps > 60) throw new Error(`timings.fps must be an integer from 1 to 60, got ${t.fps}`);
    // A long tour is cut in the middle of a photo, away from both cross-fades (see segmentParts).
    const f = frameTimings(t);
    if (Math.floor(f.photo / 2) <= f.fade || f.photo - Math.floor(f.photo / 2) <= f.fade)
      throw new Error(`timings need photoS longer than twice fadeS plus a frame, got ${JSON.stringify(t)}`);
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
    while (!this.stopping && this.rendering < this.o.concurrency) {
      const video = await this.o.store.claimNextQueued(this.lease, this.lastTenant);
      if (!video) return;
      // Its own render, whose lease lapsed while this process stalled: the claim renewed it; it is not started twice.
      if (this.running.has(video.id)) continue;
      this.lastTenant = video.tenantId;
      // The other formats of the same request render in the same run (their photos decoded once).
      const batch = video.batchId === null ? [video] : [video, ...(await this.o.store.claimBatch(this.lease, video.batchId))].sort((a, b) => a.id - b.id);
      const slot: Slot = { children: new Set(), videos: batch, dropped: new Set(), done: Promise.resolve() };
      slot.done = this.render(slot).finally(() => {
        for (const v of batch) if (this.running.get(v.id) === slot) this.running.delete(v.id);
        this.kick();
      });
      for (const v of batch) this.running.set(v.id, slot);
    }
  }

  /**
   * Stops the render of a video that was cancelled: its ffmpeg is killed at once, and the
   * other videos of its batch (if any) render again without it. A video rendered by another
   * process stops there when that process next renews its lease.
   */
  cancel(id: VideoId): void {
    const slot = this.running.get(id);
    if (!slot || slot.dropped.has(id)) return;
    slot.dropped.add(id);
    this.running.delete(id);
    killAll(slot);
  }

  /**
   * Stops rendering: kills the ffmpeg processes and puts their videos back in the queue, for
   * this or another worker to render from the beginning.
   */
  async close(): Promise<void> {
    this.stopping = true;
    const slots = new Set(this.running.values());
    for (const slot of slots) killAll(slot);
    await Promise.allSettled([...slots].map((s) => s.done));
    const released = await this.o.store.releaseRenders(this.lease.owner).catch(() => 0);
    if (released > 0) this.o.logger.info('renders handed back to the queue at stop', { count: released });
  }

  /**
   * Renews the leases of a render's videos every third of their length; a video whose lease is
   * gone (cancelled, or taken by another worker after this one missed its renewals) is dropped
   * from the render: ffmpeg is killed, and the rest of the batch, if any, renders again.
   */
  private keepLease(slot: Slot): () => void {
    const timer = setInterval(
      () => {
        for (const video of slot.videos) {
          if (slot.dropped.has(video.id)) continue;
          this.o.store.renewRender(this.lease, video.id).then(
            (held) => {
              if (held || slot.dropped.has(video.id)) return;
              this.o.logger.warn('render lease lost (cancelled, or taken by another worker); dropping the video from the render', { videoId: video.id });
              slot.dropped.add(video.id);
              if (this.running.get(video.id) === slot) this.running.delete(video.id);
              killAll(slot);
            },
            (err: unknown) => this.o.logger.warn('render lease renewal failed', { videoId: video.id, error: err instanceof Error ? err.message : String(err) }),
          );
        }
      },
      Math.floor(this.lease.ms / 3),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  private async render(slot: Slot): Promise<void> {
    const stopRenewing = this.keepLease(slot);
    try {
      // A video dropped part-way (cancelled) kills the run; the others start again without it.
      for (;;) {
        const videos = slot.videos.filter((v) => !slot.dropped.has(v.id));
        if (videos.length === 0 || this.stopping) return;
        const attempt = new Set(slot.dropped);
        await this.renderOnce(slot, videos, () => this.stopping || slot.dropped.size > attempt.size);
        if (this.stopping || slot.dropped.size === attempt.size) return;
      }
    } finally {
      stopRenewing();
    }
  }

  private async renderOnce(slot: Slot, videos: VideoRecord[], abandoned: () => boolean): Promise<void> {
    // One scratch directory per attempt: a worker that died mid-render may have left an ffmpeg
    // writing into its own, and replicas on one machine may share the data directory.
    const work = join(this.o.dataDir, 'work', `${videos[0]!.id}-${randomUUID()}`);
    /** Assets stored for this render: removed again if it does not complete. */
    const stored: string[] = [];
    const ids = videos.map((v) => v.id);
    try {
      if (!this.o.ffmpeg) throw new RenderError('video rendering is unavailable on this server (ffmpeg not found)', this.o.ffmpegProblem ?? 'ffmpeg not found');
      const ffmpeg = await this.o.ffmpeg().catch((err: Error) => {
        throw new RenderError('video rendering is unavailable on this server (ffmpeg does not run)', err.message);
      });
      await makeDir(work, 0o777);
      const first = videos[0]!;
      const durationS = tourFrames(first.photoIds.length, this.o.timings, ffmpeg.xfade) / this.o.timings.fps;
      // Several formats take about as much longer as they have more pixels: the limit grows with the count.
      const deadline = Date.now() + renderTimeLimitMs(durationS * videos.length, this.o.wallClock);
      let reported = 0;
      const rendered = await renderBatch(
        {
          store: this.o.store,
          storage: this.o.storage,
          ffmpeg,
          fontFile: this.o.fontFile,
          confinement: this.o.confinement,
          timings: this.o.timings,
          preset: this.o.preset,
          speak: this.o.speak ?? null,
        },
        videos,
        work,
        {
          deadline,
          onSpawn: (child) => {
            slot.children.add(child);
            child.once('close', () => slot.children.delete(child));
          },
          abandoned,
          onProgress: (f) => {
            // 1 is kept for the finished video; small steps are not worth a write.
            const p = Math.min(0.99, Math.floor(f * 100) / 100);
            if (p >= reported + 0.02) {
              reported = p;
              for (const id of ids) void this.o.store.setProgress(id, p);
            }
          },
        },
      );
      if (!rendered || abandoned()) return;
      await this.store(videos, rendered, stored);
      // Scratch goes before the videos show as finished, so a finished video leaves nothing behind.
      await rm(work, { recursive: true, force: true });
      const done = await Promise.all(
        videos.map((v) => {
          const r = rendered.get(v.id)!;
          return this.o.store.completeVideo(
            this.lease.owner,
            v.id,
            { video: { ...r.video.asset, storageKey: r.video.key! }, poster: { ...r.poster.asset, storageKey: r.poster.key! } },
            this.o.callbackFor,
          );
        }),
      );
      const dropped = videos.filter((_, i) => done[i] === null);
      if (dropped.length) {
        const keys = dropped.flatMap((v) => [rendered.get(v.id)!.video.key!, rendered.get(v.id)!.poster.key!]);
        await this.o.storage.delete('assets', keys).catch(() => {});
        this.o.logger.warn('render finished after its lease passed on (cancelled or taken by another worker); result dropped', {
          videoIds: dropped.map((v) => v.id),
        });
      }
      for (const v of done) {
        if (!v) continue;
        this.finished.succeeded++;
        this.o.logger.info('video rendered', { videoId: v.id, format: v.format, durationS });
        this.o.onFinished?.(v);
      }
    } catch (err) {
      await this.o.storage.delete('assets', stored).catch(() => {});
      // A render killed by close() is handed back to the queue; one whose lease was lost belongs to another worker now.
      if (abandoned()) return;
      const detail = err instanceof RenderError ? err.detail : err instanceof Error ? err.message : String(err);
      this.o.logger.error('render failed', { videoIds: ids, error: detail });
      // Clients see a short reason; ffmpeg's output (server paths included) goes only to the log.
      await rm(work, { recursive: true, force: true }).catch(() => {});
      const reason = err instanceof RenderError ? err.message : err instanceof FfmpegError ? err.publicMessage : 'internal render error';
      for (const v of videos) {
        const failed = await this.o.store.failVideo(this.lease.owner, v.id, `render failed: ${reason}`, this.o.callbackFor);
        if (failed) {
          this.finished.failed++;
          this.o.onFinished?.(failed);
        }
      }
    } finally {
      await rm(work, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** Stores each video's files under fresh keys (recorded in `stored`, so a failure removes them again). */
  private async store(videos: readonly VideoRecord[], rendered: Rendered, stored: string[]): Promise<void> {
    for (const v of videos) {
      const r = rendered.get(v.id)!;
      for (const [file, type] of [
        [r.video, 'video/mp4'],
        [r.poster, 'image/jpeg'],
      ] as const) {
        const key = `${randomUUID()}.${type === 'video/mp4' ? 'mp4' : 'jpg'}`;
        await this.o.storage.putFile('assets', key, file.path, type);
        stored.push(key);
        file.key = key;
      }
    }
  }
}

/** A render under way: its videos (one per format), those dropped from it since, and its running ffmpeg processes (the sound is made beside the picture). */
interface Slot {
  children: Set<ChildProcess>;
  videos: VideoRecord[];
  dropped: Set<VideoId>;
  done: Promise<void>;
}

function killAll(slot: Slot): void {
  for (const child of slot.children) child.kill('SIGKILL');
}
