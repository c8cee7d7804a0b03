import type { Pool } from '../store/postgres.js';
import type { ReplayLedger } from './replay.js';

/** Signatures written in one INSERT at most. */
export const REPLAY_BATCH = 1000;
/** How often (ms) signatures past the timestamp window are deleted. */
const PRUNE_EVERY_MS = 30_000;

interface Waiter {
  ts: number;
  slot: number;
  resolve: (fresh: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * The replay ledger on PostgreSQL: the table cp_replay with (ts, slot) unique, so of two
 * replicas recording one signature exactly one inserts it. Signatures that arrive while an
 * insert is running wait for the next, which takes them all (one round trip for a burst).
 */
export class PgReplayLedger implements ReplayLedger {
  private queue: Waiter[] = [];
  private running = false;
  private lastPrune = 0;

  constructor(
    private readonly pool: Pool,
    private readonly windowS: number,
    private readonly now: () => number = Date.now,
  ) {}

  record(ts: number, slot: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ts, slot, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, REPLAY_BATCH);
        try {
          await this.insert(batch);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
      await this.prune();
    } finally {
      this.running = false;
    }
  }

  private async insert(batch: Waiter[]): Promise<void> {
    const { rows } = await this.pool.query<{ ts: number; slot: number }>(
      'INSERT INTO cp_replay (ts, slot) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING RETURNING ts, slot',
      [batch.map((w) => w.ts), batch.map((w) => w.slot)],
    );
    const inserted = new Set(rows.map((r) => `${r.ts}:${r.slot}`));
    // The same signature twice in one batch: the first is the use, the second its replay.
    for (const w of batch) w.resolve(inserted.delete(`${w.ts}:${w.slot}`));
  }

  private async prune(): Promise<void> {
    const now = this.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    // A signature older than the window is refused by its timestamp alone.
    await this.pool.query('DELETE FROM cp_replay WHERE ts < $1', [Math.floor(now / 1000) - this.windowS - 1]).catch(() => {});
  }
}
