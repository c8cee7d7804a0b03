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

export interface RateLimiterOptions {
  limit: number;
  windowMs: number;
  now?: () => number;
}

/**
 * A sliding-window log: each key keeps the times of its admitted requests within the last
 * window in a ring of at most `limit` slots, so no window of `windowMs` ever admits more than `limit`
 * (a fixed window admits up to twice that across a boundary; a token bucket smooths but is
 * not exact per minute). Refused requests are not counted, so a client that backs off as
 * told by Retry-After is admitted then.
 */
export class SlidingWindowLimiter {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly logs = new Map<string, Log>();
  private lastSweep = 0;

  constructor(options: RateLimiterOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 1) throw new Error(`limit must be a positive integer, got ${options.limit}`);
    if (!(options.windowMs > 0)) throw new Error(`windowMs must be positive, got ${options.windowMs}`);
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.now = options.now ?? Date.now;
  }

  take(key: string): RateDecision {
    const now = this.now();
    this.sweep(now);
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = { times: new Float64Array(Math.min(this.limit, 16)), head: 0, size: 0 }));
    // Drop the requests that have left the window (the ring's oldest entries come first).
    while (log.size > 0 && log.times[log.head]! <= now - this.windowMs) {
      log.head = (log.head + 1) % log.times.length;
      log.size--;
    }
    if (log.size >= this.limit) {
      const resetAt = log.times[log.head]! + this.windowMs;
      return { allowed: false, limit: this.limit, remaining: 0, resetAt, retryAfterMs: resetAt - now };
    }
    if (log.size === log.times.length) grow(log, this.limit);
    log.times[(log.head + log.size) % log.times.length] = now;
    log.size++;
    return { allowed: true, limit: this.limit, remaining: this.limit - log.size, resetAt: log.times[log.head]! + this.windowMs, retryAfterMs: 0 };
  }

  /** Forgets keys idle for a whole window, at most once per window, so memory follows active keys. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, log] of this.logs) {
      const newest = log.times[(log.head + log.size - 1 + log.times.length) % log.times.length]!;
      if (log.size === 0 || newest <= now - this.windowMs) this.logs.delete(key);
    }
  }
}

type Log = { times: Float64Array; head: number; size: number };

/** Doubles a full ring (up to the limit), oldest entry first, so a high limit costs memory only when used. */
function grow(log: Log, limit: number): void {
  const times = new Float64Array(Math.min(limit, log.times.length * 2));
  for (let i = 0; i < log.size; i++) times[i] = log.times[(log.head + i) % log.times.length]!;
  log.times = times;
  log.head = 0;
}

/** The headers every rate-limited response carries. Reset is in epoch seconds, Retry-After in whole seconds. */
export function rateHeaders(d: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(Math.ceil(d.resetAt / 1000)),
  };
  if (!d.allowed) headers['retry-after'] = String(Math.max(1, Math.ceil(d.retryAfterMs / 1000)));
  return headers;
}
