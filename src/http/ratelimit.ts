import { HttpError, type ErrorCode } from './errors.js';
import { parseIPv6 } from '../net/ssrf.js';
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

/**
 * The key a per-client-address limit counts under. An IPv6 client counts by its /64: a host or
 * home network is handed a whole /64 and can send from any of its 2^64 addresses, so counting
 * each address alone would be no limit at all. IPv4 (plain, or IPv4-mapped as a dual-stack
 * socket reports it) counts by the address. Text that is not an address is its own key.
 */
export function clientAddressKey(address: string): string {
  if (!address.includes(':')) return address;
  const b = parseIPv6(address);
  if (b === null) return address;
  if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return b.slice(12).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}
