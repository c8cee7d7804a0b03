import type { Pool } from '../store/postgres.js';
import type { ReplayLedger } from './replay.js';

/** Signatures written in one INSERT at most (a larger burst goes in several, one after another). */
export const REPLAY_BATCH = 1000;
/** How often (ms) signatures past the timestamp window are deleted. */
export const REPLAY_PRUNE_EVERY_MS = 30_000;

/** Prepared once per connection: a flush costs no parse or plan. */
const RECORD = 'INSERT INTO cp_replay (ts, slot) SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING RETURNING ts, slot';

/**
 * One flush: the signatures of every request that arrived while the previous flush was at the
 * database, as two columns. The requests wait on `done`, which resolves with, per signature, 1
 * when this replica's insert was the one that stored it (the first use) and 0 when it was
 * there already (a replay), or rejects when the insert failed (then nothing was stored).
 */
interface Flush {
  ts: number[];
  slot: number[];
  done: Promise<Uint8Array>;
  resolve: (fresh: Uint8Array) => void;
  reject: (err: unknown) => void;
}

/**
 * The replay ledger on PostgreSQL, by group commit: the table cp_replay with (ts, slot) unique,
 * so of two replicas recording one signature exactly one inserts it. Concurrent requests'
 * signatures go in one multi-row INSERT … ON CONFLICT DO NOTHING RETURNING per flush; the next
 * flush starts when the previous round trip returns (or when REPLAY_BATCH signatures wait), so
 * a burst costs one statement and each request one promise, whatever its size. Nothing is
 * held back by a timer: an idle ledger flushes at the end of the event loop's turn.
 */
export class PgReplayLedger implements ReplayLedger {
  private next: Flush | null = null;
  private running = false;
  private lastPrune: number;

  constructor(
    private readonly pool: Pool,
    private readonly windowS: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastPrune = now();
  }

  record(ts: number, slot: number): Promise<boolean> {
    let flush = this.next;
    if (flush === null || flush.ts.length >= REPLAY_BATCH) {
      // A full flush is sent as it is; this signature starts the one after it.
      if (flush !== null) this.queued.push(flush);
      flush = this.next = open();
    }
    const i = flush.ts.push(ts) - 1;
    flush.slot.push(slot);
    if (!this.running) {
      // The first flush of a burst starts after this turn of the event loop, so it takes every
      // request that arrived in the same turn rather than the first alone.
      this.running = true;
      setImmediate(() => void this.drain());
    }
    return flush.done.then((fresh) => fresh[i] === 1);
  }

  /** Full flushes waiting their turn behind the one at the database. */
  private readonly queued: Flush[] = [];

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const flush = this.queued.shift() ?? this.next;
        if (flush === null) break;
        if (flush === this.next) this.next = null;
        await this.insert(flush);
      }
    } finally {
      this.running = false;
    }
    this.prune();
  }

  private async insert(flush: Flush): Promise<void> {
    let rows: { ts: string; slot: string }[];
    try {
      // The arrays go as PostgreSQL array literals: node-postgres would otherwise escape and
      // quote every element of both, a fifth of a replica's pull in the profile. Integers below
      // 2^53 print exactly.
      const values = [`{${flush.ts.join(',')}}`, `{${flush.slot.join(',')}}`];
      ({ rows } = await this.pool.query<{ ts: string; slot: string }>({ name: 'cp-replay-record', text: RECORD, values }));
    } catch (err) {
      // One statement: it stored all of the flush or nothing, and every request of it is told.
      flush.reject(err);
      return;
    }
    flush.resolve(freshness(flush, rows));
  }

  private prune(): void {
    const now = this.now();
    if (now - this.lastPrune < REPLAY_PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    // A signature older than the window is refused by its timestamp alone. Off the flush path:
    // requests never wait for it.
    this.pool.query('DELETE FROM cp_replay WHERE ts < $1', [Math.floor(now / 1000) - this.windowS - 1]).catch(() => {});
  }
}

function open(): Flush {
  let resolve!: (fresh: Uint8Array) => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<Uint8Array>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A rejection is handled by each request's own then; this one keeps an idle flush quiet.
  done.catch(() => {});
  return { ts: [], slot: [], done, resolve, reject };
}

/** Which signatures of `flush` this insert stored: all of them when every row came back. */
function freshness(flush: Flush, rows: readonly { ts: string; slot: string }[]): Uint8Array {
  const fresh = new Uint8Array(flush.ts.length);
  if (rows.length === fresh.length) return fresh.fill(1);
  const stored = new Set(rows.map((r) => `${r.ts}:${r.slot}`));
  // The same signature twice in one flush: the first is the use, the second its replay.
  for (let i = 0; i < fresh.length; i++) fresh[i] = stored.delete(`${flush.ts[i]}:${flush.slot[i]}`) ? 1 : 0;
  return fresh;
}
