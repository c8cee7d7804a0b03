// The rate limiter every route class shares, apart from HTTP: storage implements it (the
// shared PostgreSQL limiter), transport answers with it (src/http/ratelimit.ts), neither
// knowing the other.
/** The verdict on one request, with what the X-RateLimit-* headers report. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the oldest counted request leaves the window (now when none is counted). */
  resetAt: number;
  /** Milliseconds until a refused request could be admitted; 0 when allowed. */
  retryAfterMs: number;
}

/** A limit: at most `limit` requests in any window of `windowMs`. */
export interface Rate {
  limit: number;
  windowMs: number;
}

/**
 * Counts requests per key. Every route class (sessions, keys, logins, telemetry) shares one
 * limiter; the key names the class and the caller (`session:…`, `api-key:…`). The clock is
 * the caller's (`now`), so tests drive time without sleeping.
 *
 * Synchronous on purpose: the signed config pull is answered straight off the socket with
 * no promise, and it is counted too. A limiter shared by several replicas answers from its
 * own view and reconciles that view with the others in the background.
 */
export interface RateLimiter {
  /** Counts one request under `key` when the window has room; a refused request is not counted. */
  hit(key: string, rate: Rate, now: number): RateDecision;
  /** The verdict `hit` would give, counting nothing. */
  peek(key: string, rate: Rate, now: number): RateDecision;
  /**
   * Takes back one request `hit` admitted under `key` at `at` (the same `now`), as if it had
   * never been counted: for a request admitted before a check that can only be answered later
   * refused it (a replay found by the statement that would have stored it).
   */
  release(key: string, at: number): void;
}

type Log = { times: Float64Array; head: number; size: number; windowMs: number };

/** How often (ms) idle keys are forgotten. */
const SWEEP_EVERY_MS = 60_000;

/**
 * A sliding-window log in memory: each key keeps the times of its admitted requests within
 * the last window in a ring of at most `limit` slots, so no window of `windowMs` ever admits
 * more than `limit` (a fixed window admits up to twice that across a boundary; a token bucket
 * smooths but is not exact per minute). Refused requests are not counted, so a client that
 * backs off as told by Retry-After is admitted then.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, Log>();
  private lastSweep = -Infinity;

  hit(key: string, rate: Rate, now: number): RateDecision {
    checkRate(rate);
    this.sweep(now);
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = { times: new Float64Array(Math.min(rate.limit, 16)), head: 0, size: 0, windowMs: rate.windowMs }));
    log.windowMs = rate.windowMs;
    expire(log, now);
    if (log.size >= rate.limit) return refused(log, rate, now);
    if (log.size === log.times.length) grow(log, rate.limit);
    log.times[(log.head + log.size) % log.times.length] = now;
    log.size++;
    return { allowed: true, limit: rate.limit, remaining: rate.limit - log.size, resetAt: log.times[log.head]! + rate.windowMs, retryAfterMs: 0 };
  }

  peek(key: string, rate: Rate, now: number): RateDecision {
    checkRate(rate);
    const log = this.logs.get(key);
    if (!log) return { allowed: true, limit: rate.limit, remaining: rate.limit, resetAt: now, retryAfterMs: 0 };
    expire(log, now);
    if (log.size >= rate.limit) return refused(log, rate, now);
    return {
      allowed: true,
      limit: rate.limit,
      remaining: rate.limit - log.size,
      resetAt: log.size > 0 ? log.times[log.head]! + rate.windowMs : now,
      retryAfterMs: 0,
    };
  }

  release(key: string, at: number): void {
    const log = this.logs.get(key);
    if (!log) return;
    const n = log.times.length;
    // The newest entry made at `at` goes, and the newer ones move down one place: the ring stays
    // in the order of admission. Rare (a refused replay), so the shift's cost does not matter.
    for (let i = log.size - 1; i >= 0; i--) {
      if (log.times[(log.head + i) % n] !== at) continue;
      for (let j = i; j < log.size - 1; j++) log.times[(log.head + j) % n] = log.times[(log.head + j + 1) % n]!;
      log.size--;
      return;
    }
  }

  /** Keys with a request inside their window (idle keys are forgotten within a minute). */
  get size(): number {
    return this.logs.size;
  }

  /** Forgets keys idle for a whole window, at most once a minute, so memory follows active keys. */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, log] of this.logs) {
      const newest = log.times[(log.head + log.size - 1 + log.times.length) % log.times.length]!;
      if (log.size === 0 || newest <= now - log.windowMs) this.logs.delete(key);
    }
  }
}

function checkRate(rate: Rate): void {
  if (!Number.isInteger(rate.limit) || rate.limit < 1) throw new Error(`a rate limit must be a positive integer, got ${rate.limit}`);
  if (!(rate.windowMs > 0)) throw new Error(`a rate window must be positive, got ${rate.windowMs}`);
}

/** Drops the requests that have left the window (the ring's oldest entries come first). */
function expire(log: Log, now: number): void {
  while (log.size > 0 && log.times[log.head]! <= now - log.windowMs) {
    log.head = (log.head + 1) % log.times.length;
    log.size--;
  }
}

function refused(log: Log, rate: Rate, now: number): RateDecision {
  // With a lowered limit more than `limit` may still be counted: the slot frees when the
  // request `limit` places from the newest leaves the window.
  const blocking = log.times[(log.head + log.size - rate.limit) % log.times.length]!;
  const resetAt = blocking + rate.windowMs;
  return { allowed: false, limit: rate.limit, remaining: 0, resetAt, retryAfterMs: resetAt - now };
}

/** Doubles a full ring (up to the limit), oldest entry first, so a high limit costs memory only when used. */
function grow(log: Log, limit: number): void {
  const times = new Float64Array(Math.min(limit, log.times.length * 2));
  for (let i = 0; i < log.size; i++) times[i] = log.times[(log.head + i) % log.times.length]!;
  log.times = times;
  log.head = 0;
}

/** "100 requests per minute", "10 requests per 15 minutes", "2 requests per second": a rate as a message says it. */
export function describeRate(rate: Rate, noun = 'requests'): string {
  const { limit, windowMs } = rate;
  const per = (n: number, unit: string): string => (n === 1 ? `per ${unit}` : `per ${n} ${unit}s`);
  const window =
    windowMs % 3_600_000 === 0
      ? per(windowMs / 3_600_000, 'hour')
      : windowMs % 60_000 === 0
        ? per(windowMs / 60_000, 'minute')
        : windowMs % 1000 === 0
          ? per(windowMs / 1000, 'second')
          : `per ${windowMs} ms`;
  return `${limit} ${noun} ${window}`;
}
