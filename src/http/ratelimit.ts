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

/**
 * The key a per-client-address limit counts under. An IPv6 client counts by its /64: a host or
 * home network is handed a whole /64 and can send from any of its 2^64 addresses, so counting
 * each address alone would be no limit at all. IPv4 (plain, or IPv4-mapped as a dual-stack
 * socket reports it) counts by the address. Text that is not an address is its own key.
 */
export function clientAddressKey(address: string): string {
  if (!address.includes(':')) return address;
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address in text (compressed or not, with a trailing dotted IPv4 part or not), or null. */
function ipv6Groups(text: string): number[] | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    const b = v4.slice(1).map(Number);
    if (b.some((x) => x > 255)) return null;
    s = `${s.slice(0, v4.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 2 && fill === 0 && head.length + tail.length === 8)) return null;
  const all = [...head, ...Array<string>(fill).fill('0'), ...tail];
  if (all.length !== 8 || all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}
