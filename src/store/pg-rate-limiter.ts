import { randomUUID } from 'node:crypto';
import { MemoryRateLimiter, type Rate, type RateDecision, type RateLimiter } from '../ratelimit/limiter.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { migratePg, type PgMigration, type Pool } from './postgres.js';

/** How often (ms) a replica writes its new hits and reads the others' counts. */
export const RATE_SYNC_MS = 200;
/** A window is counted in this many buckets in the shared table (a 60 s window in 3 s buckets). */
export const RATE_BUCKETS_PER_WINDOW = 20;
/** The shortest bucket, so that a 1 s window is not a row per request. */
export const RATE_MIN_BUCKET_MS = 100;
/** Keys whose shared counts one sync reads at most (the busiest, most recently hit first). */
export const RATE_SYNC_MAX_KEYS = 5000;
/** How often (ms) expired buckets are deleted. */
const PRUNE_EVERY_MS = 60_000;

export const RATE_LIMIT_PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    // Unlogged: counts that matter for one window at most are not worth a WAL write each;
    // after a crash of the database server they start from zero, as a restart's would.
    sql: `
      CREATE UNLOGGED TABLE rate_hits (
        key TEXT NOT NULL,
        replica TEXT NOT NULL,
        bucket BIGINT NOT NULL,
        n BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (key, bucket, replica)
      );
      CREATE INDEX rate_hits_expiry ON rate_hits (expires_at);
    `,
  },
];

interface Others {
  /** Requests the other replicas admitted under this key within its window, as last read. */
  count: number;
  /** Start of the oldest bucket of those, so a refusal can say when room comes back. */
  oldest: number;
  /** The rate left to this replica (the limit less `count`), made once per read rather than per request. */
  share?: Rate;
}

/** The part of `rate` the other replicas have not used, as this replica's own limiter counts it. */
function ownShare(others: Others, rate: Rate): Rate {
  const share = others.share;
  if (share !== undefined && share.windowMs === rate.windowMs && share.limit === rate.limit - others.count) return share;
  return (others.share = { limit: rate.limit - others.count, windowMs: rate.windowMs });
}

/**
 * A rate limiter shared by every replica on one PostgreSQL database. `hit` stays synchronous
 * (the signed-pull shortcut cannot await): each replica counts exactly what it admits itself,
 * and adds what the others admitted as last read. In the background, every RATE_SYNC_MS, it
 * writes its new hits (per key, in buckets of a twentieth of the window) and reads the
 * others' counts of the keys it has seen. A client spread over N replicas is therefore held
 * to the limit, give or take what it sends to the other replicas within about two sync
 * intervals (the counts a replica has not read yet).
 */
export class PgRateLimiter implements RateLimiter {
  private readonly own = new MemoryRateLimiter();
  private readonly others = new Map<string, Others>();
  /** Hits not written yet: key → window and bucket → count. */
  private pending = new Map<string, { windowMs: number; buckets: Map<number, number> }>();
  /** Keys hit within their window: key → [window, last hit]. */
  private readonly seen = new Map<string, [number, number]>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private lastPrune = 0;
  private readonly replica: string;
  private readonly now: () => number;
  private readonly logger: Logger;

  private constructor(
    private readonly pool: Pool,
    options: PgRateLimiterOptions,
  ) {
    this.replica = options.replicaId ?? randomUUID();
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger;
  }

  /** The limiter on `pool`, its table migrated and its background sync started. */
  static async open(pool: Pool, options: PgRateLimiterOptions = {}): Promise<PgRateLimiter> {
    await migratePg(pool, 'ratelimit', RATE_LIMIT_PG_MIGRATIONS);
    const limiter = new PgRateLimiter(pool, options);
    limiter.timer = setInterval(() => void limiter.sync(), options.syncMs ?? RATE_SYNC_MS);
    limiter.timer.unref();
    return limiter;
  }

  hit(key: string, rate: Rate, now: number): RateDecision {
    const others = this.othersOf(key, rate, now);
    if (others !== null && others.count >= rate.limit) return this.refusedByOthers(others, rate, now);
    const d = this.own.hit(key, others === null ? rate : ownShare(others, rate), now);
    // Every call is on a request's path: the key's entry is updated in place, not replaced.
    const seen = this.seen.get(key);
    if (seen === undefined) this.seen.set(key, [rate.windowMs, now]);
    else {
      seen[0] = rate.windowMs;
      seen[1] = now;
    }
    if (d.allowed) this.record(key, rate.windowMs, now);
    // The decision is the memory limiter's own new object: its limit is set, not copied.
    d.limit = rate.limit;
    return d;
  }

  peek(key: string, rate: Rate, now: number): RateDecision {
    const others = this.othersOf(key, rate, now);
    if (others !== null && others.count >= rate.limit) return this.refusedByOthers(others, rate, now);
    const d = this.own.peek(key, others === null ? rate : ownShare(others, rate), now);
    d.limit = rate.limit;
    return d;
  }

  release(key: string, at: number): void {
    this.own.release(key, at);
    const windowMs = this.seen.get(key)?.[0];
    // Written already or not, the hit's bucket goes down by one: a sync adds what is pending,
    // so -1 takes back a hit an earlier sync wrote.
    if (windowMs !== undefined) this.record(key, windowMs, at, -1);
  }

  /** Writes pending hits and reads the others' counts now (the background sync does this every RATE_SYNC_MS). */
  sync(): Promise<void> {
    this.syncing ??= this.syncOnce()
      .catch((err) => this.logger.error('rate limits: sync with the database failed', { error: String(err) }))
      .finally(() => (this.syncing = null));
    return this.syncing;
  }

  /** Stops the background sync after writing what is pending. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sync();
  }

  /** What the other replicas admitted under `key` as last read, or null when nothing of theirs binds. */
  private othersOf(key: string, rate: Rate, now: number): Others | null {
    const o = this.others.get(key);
    // Counts read before the window moved past their oldest bucket no longer bind.
    if (o === undefined || o.count === 0 || o.oldest + rate.windowMs <= now) return null;
    return o;
  }

  private refusedByOthers(others: Others, rate: Rate, now: number): RateDecision {
    const resetAt = Math.max(now + 1, others.oldest + rate.windowMs);
    return { allowed: false, limit: rate.limit, remaining: 0, resetAt, retryAfterMs: resetAt - now };
  }

  private record(key: string, windowMs: number, now: number, n = 1): void {
    const bucketMs = bucketOf(windowMs);
    const bucket = now - (now % bucketMs);
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { windowMs, buckets: new Map() }));
    p.buckets.set(bucket, (p.buckets.get(bucket) ?? 0) + n);
  }

  private async syncOnce(): Promise<void> {
    const now = this.now();
    const pending = this.pending;
    this.pending = new Map();
    const keys: string[] = [];
    const buckets: number[] = [];
    const counts: number[] = [];
    const expiries: number[] = [];
    for (const [key, p] of pending) {
      for (const [bucket, n] of p.buckets) {
        keys.push(key);
        buckets.push(bucket);
        counts.push(n);
        expiries.push(bucket + bucketOf(p.windowMs) + p.windowMs);
      }
    }
    if (keys.length > 0) {
      await this.pool.query(
        `INSERT INTO rate_hits (key, replica, bucket, n, expires_at)
         SELECT k, $1, b, n, e FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) AS t(k, b, n, e)
         ON CONFLICT (key, bucket, replica) DO UPDATE SET n = rate_hits.n + excluded.n`,
        [this.replica, keys, buckets, counts, expiries],
      );
    }
    await this.readOthers(now);
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await this.pool.query('DELETE FROM rate_hits WHERE expires_at < $1', [now]);
    }
  }

  private async readOthers(now: number): Promise<void> {
    for (const [key, [windowMs, last]] of this.seen) if (last + windowMs <= now) this.seen.delete(key);
    const active = [...this.seen].sort((a, b) => b[1][1] - a[1][1]).slice(0, RATE_SYNC_MAX_KEYS);
    if (active.length === 0) {
      this.others.clear();
      return;
    }
    const { rows } = await this.pool.query<{ key: string; n: number; oldest: number }>(
      `SELECT h.key, SUM(h.n) AS n, MIN(h.bucket) AS oldest
         FROM rate_hits h JOIN unnest($1::text[], $2::bigint[]) AS k(key, since) ON h.key = k.key
        WHERE h.replica <> $3 AND h.bucket >= k.since
        GROUP BY h.key`,
      [active.map(([key]) => key), active.map(([, [windowMs]]) => now - windowMs), this.replica],
    );
    this.others.clear();
    for (const r of rows) this.others.set(r.key, { count: r.n, oldest: r.oldest });
  }
}

export interface PgRateLimiterOptions {
  /** This replica's name in the shared table; default a random UUID. */
  replicaId?: string;
  /** The clock of the background sync (bucket expiry, window starts); default Date.now. */
  now?: () => number;
  /** Milliseconds between syncs; default RATE_SYNC_MS. */
  syncMs?: number;
  logger?: Logger;
}

function bucketOf(windowMs: number): number {
  return Math.max(RATE_MIN_BUCKET_MS, Math.ceil(windowMs / RATE_BUCKETS_PER_WINDOW));
}
