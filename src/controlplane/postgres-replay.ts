import type { Pool, PoolClient } from '../store/postgres.js';
import type { ReplayLedger } from './replay.js';

/** Signatures written in one INSERT at most (a larger burst goes in several, one after another). */
export const REPLAY_BATCH = 1000;
/** Turns of the event loop a flush waits at most, after the one before it returned, for more signatures to join it. */
export const REPLAY_GATHER_TURNS = 3;
/** How often (ms) signatures past the timestamp window are deleted. */
export const REPLAY_PRUNE_EVERY_MS = 30_000;

/**
 * Prepared once per connection: a flush costs no parse or plan. It answers with the positions
 * (1-based) of the flush's replays only: a signature that was there already, or the second of
 * one signature sent twice in the flush. The common flush, every signature new, comes back as
 * no rows at all, so the replica parses nothing per request (returning every stored row cost
 * a row object per pull).
 */
const RECORD = `WITH v AS (
    SELECT ts, slot, i, row_number() OVER (PARTITION BY ts, slot ORDER BY i) AS k
      FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS u(ts, slot, i)
  ), ins AS (
    INSERT INTO cp_replay (ts, slot) SELECT ts, slot FROM v WHERE k = 1 ORDER BY i ON CONFLICT DO NOTHING RETURNING ts, slot
  )
  SELECT v.i FROM v LEFT JOIN ins ON ins.ts = v.ts AND ins.slot = v.slot WHERE ins.ts IS NULL OR v.k > 1`;

/**
 * One flush: the signatures of every request that arrived while the previous flush was at the
 * database, as two columns, and what each request waits for. When the insert returns, each
 * request's continuation runs right there with its freshness (true when this replica's insert
 * was the one that stored the signature, false when it was there already: a replay), and its
 * value or throw settles the request's promise; when the insert failed (then nothing was
 * stored), every promise is rejected with the failure.
 */
interface Flush {
  ts: number[];
  slot: number[];
  waiters: Waiter[];
}

/** A request waiting on a flush: its continuation and its promise's two ends. */
interface Waiter {
  next: (fresh: boolean) => unknown;
  failed: (() => void) | undefined;
  resolve: (value: unknown) => void;
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

  record(ts: number, slot: number): Promise<boolean>;
  record<T>(ts: number, slot: number, then: (fresh: boolean) => T | PromiseLike<T>, failed?: () => void): Promise<T>;
  record(ts: number, slot: number, then: (fresh: boolean) => unknown = isFresh, failed?: () => void): Promise<unknown> {
    let flush = this.next;
    if (flush === null || flush.ts.length >= REPLAY_BATCH) {
      // A full flush is sent as it is; this signature starts the one after it.
      if (flush !== null) this.queued.push(flush);
      flush = this.next = { ts: [], slot: [], waiters: [] };
    }
    flush.ts.push(ts);
    flush.slot.push(slot);
    if (!this.running) {
      // The first flush of a burst starts after this turn of the event loop, so it takes every
      // request that arrived in the same turn rather than the first alone.
      this.running = true;
      setImmediate(() => void this.drain());
    }
    // One promise per request, settled by the flush itself with the continuation's result: no
    // chain of promises between the insert's return and the request's answer.
    const waiters = flush.waiters;
    return new Promise((resolve, reject) => void waiters.push({ next: then, failed, resolve, reject }));
  }

  /** Full flushes waiting their turn behind the one at the database. */
  private readonly queued: Flush[] = [];

  private async drain(): Promise<void> {
    // One connection for the whole busy period rather than one checkout per flush: the pool's
    // checkout and return cost the replica about as much CPU as a small flush's own round trip,
    // and a replica with few clients sends many small flushes.
    const held: Held = { client: null, broken: false };
    try {
      let sent = 0;
      for (;;) {
        // After a flush returns, its requests are answered in the same turn and their clients'
        // next requests arrive in the turns after: the following flush waits for those turns'
        // polls (REPLAY_GATHER_TURNS at most, while it holds fewer signatures than the flush
        // before it), so it carries them too instead of leaving them to a flush of their own.
        // A flush costs the replica far more CPU than a signature in it; the wait is a few
        // turns of the event loop, no timer.
        for (let turn = 0; turn < REPLAY_GATHER_TURNS && this.queued.length === 0 && (this.next?.ts.length ?? 0) < sent; turn++) await nextPoll();
        const flush = this.queued.shift() ?? this.next;
        if (flush === null) break;
        if (flush === this.next) this.next = null;
        sent = flush.ts.length;
        await this.insert(held, flush);
      }
    } finally {
      giveBack(held);
      this.running = false;
    }
    this.prune(this.now());
  }

  written(now: number): void {
    this.prune(now);
  }

  private async insert(held: Held, flush: Flush): Promise<void> {
    let rows: { i: number }[];
    try {
      // The arrays go as PostgreSQL array literals: node-postgres would otherwise escape and
      // quote every element of both, a fifth of a replica's pull in the profile. Integers below
      // 2^53 print exactly.
      const values = [`{${flush.ts.join(',')}}`, `{${flush.slot.join(',')}}`];
      if (held.broken) giveBack(held);
      const client = held.client ?? (await this.checkOut(held));
      ({ rows } = await client.query<{ i: number }>({ name: 'cp-replay-record-v2', text: RECORD, values }));
    } catch (err) {
      // One statement: it stored all of the flush or nothing, and every request of it is told.
      // The connection may be what failed: it is closed, and the next flush takes another.
      held.broken = true;
      giveBack(held);
      for (const w of flush.waiters) {
        w.failed?.();
        w.reject(err);
      }
      return;
    }
    settle(flush.waiters, rows);
  }

  private async checkOut(held: Held): Promise<PoolClient> {
    const client = await this.pool.connect();
    held.client = client;
    held.broken = false;
    // Between two flushes no query is running on it, so a lost connection is reported as an
    // event rather than as a failed query: without a listener it would end the process.
    held.onError = () => void (held.broken = true);
    client.on('error', held.onError);
    return client;
  }

  private prune(now: number): void {
    if (now - this.lastPrune < REPLAY_PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    // A signature older than the window is refused by its timestamp alone. Off the flush path:
    // requests never wait for it.
    this.pool.query('DELETE FROM cp_replay WHERE ts < $1', [Math.floor(now / 1000) - this.windowS - 1]).catch(() => {});
  }
}

/** The connection a busy ledger keeps between flushes, and whether it failed. */
interface Held {
  client: PoolClient | null;
  broken: boolean;
  onError?: () => void;
}

/** Returns the held connection to the pool, closed if it failed. */
function giveBack(held: Held): void {
  const client = held.client;
  if (client === null) return;
  held.client = null;
  if (held.onError) client.removeListener('error', held.onError);
  client.release(held.broken);
}

/** Resolves in the check phase after the event loop's next poll phase. */
function nextPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

const isFresh = (fresh: boolean): boolean => fresh;

/**
 * Runs each request's continuation with its freshness (every signature stored but the replays
 * whose positions, counted from 1, came back) and settles its promise with the outcome.
 */
function settle(waiters: readonly Waiter[], rows: readonly { i: number }[]): void {
  let replays: Set<number> | null = null;
  // int8 arrives as a number (the pool's type parsers).
  if (rows.length > 0) replays = new Set(rows.map((r) => Number(r.i) - 1));
  for (let i = 0; i < waiters.length; i++) {
    const w = waiters[i]!;
    try {
      w.resolve(w.next(replays === null || !replays.has(i)));
    } catch (err) {
      w.reject(err);
    }
  }
}
