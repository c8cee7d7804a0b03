import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Db } from './sqlite.js';

/**
 * How often the checkpoint thread copies the WAL into the database file while it is written. Each
 * run copies every page changed since the last one and syncs both files: more often copies the
 * same hot index pages again (at 20 ms the thread spent about twice the CPU).
 */
export const CHECKPOINT_INTERVAL_MS = 100;
/** The longest it waits between looks while nothing is written. */
export const CHECKPOINT_IDLE_MAX_MS = 1000;
/** SQLite's own automatic checkpoint (pages of WAL): what the writer does until the thread runs. */
const INLINE_CHECKPOINT_PAGES = 1000;
/**
 * With the thread running, the writer still checkpoints by itself past this many pages of WAL
 * (16 MB at 4 KB a page), so the WAL stays bounded if the thread falls behind or fails.
 */
export const FALLBACK_CHECKPOINT_PAGES = 4000;
/** The thread starts once the WAL file has reached this size (SQLite's automatic checkpoint size): a file written that much is busy. */
const START_AT_BYTES = INLINE_CHECKPOINT_PAGES * 4096;
/** How often the WAL file's size is looked at until then. */
const WATCH_MS = 1000;

export interface CheckpointerData {
  file: string;
}

/**
 * Moves the WAL checkpoints of a busy SQLite file off the event loop. SQLite's automatic
 * checkpoint runs inside the commit that passes 1,000 pages of WAL: it copies those pages into
 * the database file and syncs both files to disk, and everything else the process does waits
 * for it, the disk's sync included (tens of milliseconds every few thousand webhook deliveries).
 * Here a worker thread with its own connection does that copy in PASSIVE checkpoints, which
 * neither wait for nor block the writer, and the writer's own checkpoint is kept only as a
 * fallback at FALLBACK_CHECKPOINT_PAGES. Durability is unchanged: commits are written to the WAL
 * as before, and the copy syncs as SQLite's own checkpoint does.
 *
 * A thread costs a start-up (loading SQLite again, ~0.1 s of CPU), so it starts only once the WAL
 * file has reached START_AT_BYTES: a file that is rarely written (a test, a quiet server) keeps
 * SQLite's own checkpoint and no thread. If the thread fails, the writer checkpoints by itself again.
 */
export class BackgroundCheckpoints {
  private worker: Worker | null = null;
  private watch: NodeJS.Timeout | null = null;
  private stopped = false;
  private readyNow: () => void = () => {};
  /** Settles once the thread has its connection (or has ended), so a benchmark can leave its start-up out. */
  readonly ready = new Promise<void>((resolve) => (this.readyNow = resolve));

  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly warn: (message: string, fields: Record<string, unknown>) => void = () => {},
  ) {
    this.watch = setInterval(() => this.look(), WATCH_MS);
    this.watch.unref();
  }

  /** True while the checkpoint thread runs. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Starts the thread now if the WAL is large enough (the interval calls this; tests may too). */
  look(): void {
    let size = 0;
    try {
      size = statSync(`${this.file}-wal`).size;
    } catch {
      return; // no WAL yet
    }
    if (size >= START_AT_BYTES) this.start();
  }

  /** Starts the thread, whatever the WAL's size. */
  start(): void {
    if (this.worker || this.stopped) return;
    // Closed without stop() (a test may close the handle under a running server): nothing left to checkpoint.
    if (!this.db.open) {
      this.stopped = true;
      if (this.watch) clearInterval(this.watch);
      this.watch = null;
      return;
    }
    if (this.watch) clearInterval(this.watch);
    this.watch = null;
    const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: { file: this.file } satisfies CheckpointerData });
    this.worker = worker;
    this.db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
    worker.on('message', (m: { ready?: true; warning?: string }) => {
      // Held open only while it starts (so `ready` settles); then it never keeps the process alive.
      if (m.ready) {
        if (!this.stopped) worker.unref();
        this.readyNow();
      }
      if (m.warning) this.warn('database: a background checkpoint failed; the next one tries again', { error: m.warning });
    });
    worker.on('error', (err) => this.warn('database: the checkpoint thread failed; the writer checkpoints by itself again', { error: String(err) }));
    worker.on('exit', () => {
      this.readyNow();
      if (this.worker !== worker) return;
      this.worker = null;
      // Back to SQLite's own checkpoint (unless the database is closing): the WAL must not grow unchecked.
      if (!this.stopped && this.db.open) this.db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
    });
  }

  /** Stops the thread (its connection closed) before the database is closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watch) clearInterval(this.watch);
    this.watch = null;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Held open until the thread is gone: unreferenced, a process with nothing else to do would exit before the database is closed.
    worker.ref();
    worker.postMessage('stop');
    await exited;
    this.worker = null;
  }
}
