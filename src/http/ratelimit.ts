import { HttpError, type ErrorCode } from './errors.js';
import type { RateDecision } from '../ratelimit/limiter.js';

/** The headers of a rate-limited answer. Reset is in epoch seconds, Retry-After in whole seconds. */
export function rateHeaders(d: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(Math.ceil(d.resetAt / 1000)),
  };
  if (!d.allowed) headers['retry-after'] = String(retryAfterSeconds(d));
  return headers;
}

export function retryAfterSeconds(d: RateDecision): number {
  return Math.max(1, Math.ceil(d.retryAfterMs / 1000));
}

/**
 * The refusal of a request over a limit: `429 rate_limited` (or another code, such as a
 * quota's `plan_limit`) with Retry-After and the X-RateLimit-* headers, the limit in the message.
 */
export function overLimit(d: RateDecision, what: string, code: ErrorCode = 'rate_limited'): HttpError {
  return new HttpError(code, `The limit is ${what}; retry after ${retryAfterSeconds(d)} s.`, { headers: rateHeaders(d) });
}
