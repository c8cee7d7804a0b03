/**
 * When to try again. After the first attempt fails the delivery is retried after each delay in
 * turn (8 attempts over about 28 hours, as Svix does), each delay spread by ±10% so that
 * receivers coming back from an outage are not hit by every retry at the same instant.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];

export const JITTER = 0.1;
/** The longest wait a receiver's Retry-After can impose. */
export const MAX_RETRY_AFTER_MS = 3_600_000;
/** An endpoint whose attempts have all failed for this long is disabled (the breaker opens). */
export const DISABLE_AFTER_MS = 24 * 3_600_000;

/**
 * Order: a delivery waits while an earlier delivery of the same conversation to the same
 * endpoint is unfinished (pending a retry or in flight), but not longer than this after it fell
 * due; then it goes on, and its log says which delivery it passed. Ten minutes cover the first
 * two retries (5 s, then 5 min) of the one before it.
 */
export const ORDER_HOLD_MS = 10 * 60_000;

/** The largest `rate_limit` an endpoint may set (deliveries per second). */
export const RATE_LIMIT_MAX = 1000;
/**
 * A rate-limited endpoint's attempts take slots (1000 + RATE_GUARD_MS) / rate_limit ms apart, and
 * each is sent within RATE_GUARD_MS of its slot or handed back unsent (the dispatcher checks just
 * before sending): rate_limit + 1 starts then span at least a second whichever replicas sent
 * them, and a receiver sees at most rate_limit arrivals in any second unless the network delays
 * one attempt by this much more than the next.
 */
export const RATE_GUARD_MS = 100;

/** The spacing of a rate-limited endpoint's attempts, in (fractional) milliseconds. */
export function rateSpacingMs(rateLimit: number): number {
  return (1000 + RATE_GUARD_MS) / rateLimit;
}

/**
 * Deliveries in flight at once per process, over all endpoints (`serve --webhook-concurrency`):
 * each holds one connection to its receiver.
 */
export const DELIVERY_CONCURRENCY = 64;
/** The most `--webhook-concurrency` may set. */
export const DELIVERY_CONCURRENCY_MAX = 1024;
/**
 * Deliveries in flight at once to one endpoint (`serve --webhook-endpoint-concurrency`, at most
 * the process's concurrency), so a slow receiver holds at most an eighth of the process's slots
 * and the others keep theirs. It is fairness between endpoints, not the receiver's protection:
 * an endpoint that must not be sent faster than a given pace sets its `rate_limit`. Eight, not
 * fewer: a busy receiver 50 ms away then still takes 160 deliveries a second, and with eight or
 * more endpoints busy every slot of the process can be in use.
 */
export const DELIVERY_CONCURRENCY_PER_ENDPOINT = 8;

/** A receiver must answer 2xx within this long; a slower answer is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * How long a claimed delivery stays with the dispatcher that claimed it. Past this, another
 * replica may claim it again (its holder is presumed dead), so it must outlast the slowest
 * attempt: the address lookup, the send up to DELIVERY_TIMEOUT_MS, and writing the result.
 */
export const DELIVERY_LEASE_MS = 60_000;

/** The delay before the next attempt after `attempts` failed ones, or null when retries are exhausted. */
export function retryDelay(attempts: number, random: () => number, delays: readonly number[] = RETRY_DELAYS_MS): number | null {
  const base = delays[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 + (random() * 2 - 1) * JITTER));
}

/** Retry-After as milliseconds (delta-seconds or an HTTP date), bounded to [0, MAX_RETRY_AFTER_MS]; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

export { seededRandom } from '../random.js';
