import { lookup as dnsLookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * The one SSRF guard for every URL the server calls out to (webhook endpoints, video
 * callbacks): the URL must be HTTPS and every address its host resolves to must be public.
 * It runs when a URL is registered and again before every request; the request then connects
 * to the addresses checked here (see sender.ts), so a DNS answer that changes between the
 * check and the connect (rebinding) cannot reach an internal host. IPv4 literals in any
 * notation (2130706433, 0x7f.1, 017700000001) arrive here already normalised by the WHATWG
 * URL parser; IPv6 forms that embed an IPv4 address are judged by that address.
 */

export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'cgnat' | 'unique_local' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

export type Resolve = (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;

/** How long one DNS query waits for its name server before asking again (tries) or giving up. */
export const DNS_TIMEOUT_MS = 2000;
/** Queries sent to each name server before a lookup gives up (ETIMEOUT). */
export const DNS_TRIES = 2;

/**
 * Resolves a host for the guard by asking the name servers directly (c-ares: Node's
 * dns.Resolver, on the event loop), bounded by `timeoutMs` and `tries`. Not getaddrinfo: that
 * runs on libuv's four worker threads, shared with file reads and password hashes, and holds one
 * until the system resolver gives up, so a few receivers whose name server never answers (any
 * tenant may register one) stalled the whole process. A name DNS does not know (NXDOMAIN, or no
 * address record) may still be in /etc/hosts (localhost, a name an operator added): that one is
 * looked up the system's way, one lookup at a time, so it holds at most one worker thread.
 */
export function dnsResolve(options: { servers?: string[]; timeoutMs?: number; tries?: number } = {}): Resolve {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? DNS_TIMEOUT_MS, tries: options.tries ?? DNS_TRIES });
  if (options.servers) resolver.setServers(options.servers);
  let systemLookup: Promise<unknown> = Promise.resolve();
  const system = async (host: string) => {
    const turn = systemLookup.then(() => dnsLookup(host, { all: true, verbatim: true }));
    systemLookup = turn.catch(() => {});
    return (await turn).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }) as const);
  };
  // A name server that does not answer in time (or whose own upstream failed) would hold the
  // system's lookup just as long: those answers are final. Any other failure (no such name, no
  // name server configured or reachable) may still be a name of /etc/hosts.
  const final = (err: unknown) => ['ETIMEOUT', 'ESERVFAIL'].includes((err as NodeJS.ErrnoException).code ?? '');
  return async (host) => {
    // Names reserved for this machine (RFC 6761) are never asked of DNS.
    if (host === 'localhost' || host === 'localhost.' || host.endsWith('.localhost')) return system(host);
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const out: { address: string; family: 4 | 6 }[] = [];
    if (v4.status === 'fulfilled') for (const address of v4.value) out.push({ address, family: 4 });
    if (v6.status === 'fulfilled') for (const address of v6.value) out.push({ address, family: 6 });
    if (out.length > 0) return out;
    const failed = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected' && final(r.reason));
    if (failed) throw failed.reason;
    return system(host);
  };
}

let shared: Resolve | null = null;
/** dnsResolve with the system's name servers, made at its first use (a resolver reads /etc/resolv.conf). */
export const defaultResolve: Resolve = (host) => (shared ??= dnsResolve())(host);

export type GuardResult =
  | { ok: true; url: URL; addresses: { address: string; family: 4 | 6 }[] }
  /** `unresolved`: the host has no address now (DNS down or record not yet published), which may change. */
  | { ok: false; reason: string; unresolved?: true };

/**
 * Which non-public destinations a server admits: none (false, `brainstem serve`), this
 * machine's loopback addresses over http or https ('loopback', `brainstem up`: the local stack,
 * so `webhooks listen` works without a flag), or every private address and plain http anywhere
 * (true, `--allow-private-webhooks`).
 */
export type PrivateUrls = boolean | 'loopback';

export interface GuardOptions {
  allowPrivate: PrivateUrls;
  resolve?: Resolve;
  /**
   * Admit a host that does not resolve (yet), with no addresses. Registration sets it: DNS may
   * be down or the record not yet published, and a name with no address cannot reach an
   * internal host; every delivery resolves and checks again, without this option.
   */
  admitUnresolved?: boolean;
}

/**
 * Appended to every refusal that `--allow-private-webhooks` would have admitted, so whoever
 * reads it (an API client's error, a delivery log line) learns the way out in the same line.
 */
export const ALLOW_PRIVATE_HINT =
  'start the server with --allow-private-webhooks (brainstem serve or up) to allow plain http and private addresses in development';

const notLoopbackOverHttp = `must use https beyond this machine (plain http reaches only loopback addresses); ${ALLOW_PRIVATE_HINT}`;

/** Checks a URL's scheme and every address its host resolves to. */
export async function guardUrl(raw: string, options: GuardOptions): Promise<GuardResult> {
  // The URL parser trims and drops these silently; refused so the URL stored is the URL called.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return { ok: false, reason: 'must not contain spaces or control characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not a valid absolute URL' };
  }
  const allow = options.allowPrivate;
  if (url.protocol !== 'https:' && !(allow !== false && url.protocol === 'http:')) {
    return {
      ok: false,
      reason: allow !== false ? 'must use http or https' : url.protocol === 'http:' ? `must use https; ${ALLOW_PRIVATE_HINT}` : 'must use https',
    };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // Names reserved for this machine (RFC 6761) are refused without asking DNS what it thinks.
  if (allow === false && (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.')) {
    return { ok: false, reason: `points at this machine (localhost); only public addresses are allowed; ${ALLOW_PRIVATE_HINT}` };
  }
  // On the local stack plain http is for this machine only: a name that does not resolve (yet)
  // cannot be shown to be loopback, so registration refuses it over http as it would a public one.
  const httpNeedsLoopback = allow === 'loopback' && url.protocol === 'http:' && !(host === 'localhost' || host === 'localhost.' || host.endsWith('.localhost'));
  const admitUnresolved = options.admitUnresolved === true && !httpNeedsLoopback;
  let addresses: { address: string; family: 4 | 6 }[];
  const literal = isIP(host);
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (options.resolve ?? defaultResolve)(host);
    } catch (err) {
      if (admitUnresolved) return { ok: true, url, addresses: [] };
      if (httpNeedsLoopback && options.admitUnresolved) return { ok: false, reason: notLoopbackOverHttp };
      return { ok: false, reason: `host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`, unresolved: true };
    }
    if (addresses.length === 0 && httpNeedsLoopback && options.admitUnresolved) return { ok: false, reason: notLoopbackOverHttp };
    if (addresses.length === 0)
      return admitUnresolved ? { ok: true, url, addresses } : { ok: false, reason: `host ${host} does not resolve`, unresolved: true };
  }
  if (allow === 'loopback') {
    // This machine, over http or https; beyond it, what a server without the flag admits.
    for (const a of addresses) {
      const cls = classifyAddress(a.address);
      if (cls === 'loopback') continue;
      if (cls !== 'public')
        return {
          ok: false,
          reason: `resolves to a ${cls.replace('_', '-')} address (${a.address}); only public and loopback addresses are allowed; ${ALLOW_PRIVATE_HINT}`,
        };
      if (url.protocol === 'http:') return { ok: false, reason: notLoopbackOverHttp };
    }
  } else if (allow === false) {
    for (const a of addresses) {
      const cls = classifyAddress(a.address);
      if (cls !== 'public')
        return { ok: false, reason: `resolves to a ${cls.replace('_', '-')} address (${a.address}); only public addresses are allowed; ${ALLOW_PRIVATE_HINT}` };
    }
  }
  return { ok: true, url, addresses };
}

/**
 * The form a URL registered for later calls (a webhook endpoint, a video callback) is kept in:
 * the URL that will be called. A fragment (`#…`) is refused: a client never sends it, so the
 * endpoint would not see what the owner wrote. A URL with characters outside ASCII (an IDN
 * host, a path in another script) is kept as the URL parser writes it, the host in its `xn--`
 * form and the path percent-encoded: that is what the request carries and a certificate names.
 * An ASCII URL is kept exactly as written. `url` is the one guardUrl parsed from `raw`.
 */
export function registeredUrl(raw: string, url: URL): { ok: true; url: string } | { ok: false; reason: string } {
  if (raw.includes('#')) return { ok: false, reason: 'must not carry a fragment (#…): a fragment is never sent with the request' };
  return { ok: true, url: /[^\u0000-\u007f]/.test(raw) ? url.href : raw };
}

/** Classifies an IPv4 or IPv6 address (IPv4-mapped and other IPv4-embedding IPv6 forms by their IPv4 part). */
export function classifyAddress(address: string): AddressClass {
  const v4 = parseIPv4(address);
  if (v4) return classifyV4(v4);
  const v6 = parseIPv6(address);
  if (!v6) return 'reserved';
  return classifyV6(v6);
}

function classifyV4(b: number[]): AddressClass {
  const [a, c] = [b[0]!, b[1]!];
  if (a === 0) return b.every((x) => x === 0) ? 'unspecified' : 'reserved';
  if (a === 127) return 'loopback';
  if (a === 10) return 'private';
  if (a === 172 && c >= 16 && c <= 31) return 'private';
  if (a === 192 && c === 168) return 'private';
  if (a === 169 && c === 254) return 'link_local';
  if (a === 100 && c >= 64 && c <= 127) return 'cgnat';
  if (a >= 224 && a <= 239) return 'multicast';
  if (b.every((x) => x === 255)) return 'broadcast';
  if (a >= 240) return 'reserved';
  // IETF protocol assignments, TEST-NETs and the benchmarking range are never a real receiver.
  if (a === 192 && c === 0 && (b[2] === 0 || b[2] === 2)) return 'reserved';
  if (a === 198 && (c === 18 || c === 19)) return 'reserved';
  if (a === 198 && c === 51 && b[2] === 100) return 'reserved';
  if (a === 203 && c === 0 && b[2] === 113) return 'reserved';
  // The deprecated 6to4 relay anycast: whichever relay is nearest, never a receiver.
  if (a === 192 && c === 88 && b[2] === 99) return 'reserved';
  return 'public';
}

function classifyV6(b: number[]): AddressClass {
  const zeroUpTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(16)) return 'unspecified';
  if (zeroUpTo(15) && b[15] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), ::a.b.c.d (compatible),
  // 64:ff9b::a.b.c.d (NAT64): judge the IPv4 inside.
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(b.slice(12));
  if (zeroUpTo(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return classifyV4(b.slice(12));
  if (zeroUpTo(12)) return classifyV4(b.slice(12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) return classifyV4(b.slice(12));
  // 64:ff9b:1::/48 is NAT64 for local use (RFC 8215): it translates into a private network.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b[4] === 0x00 && b[5] === 0x01) return 'private';
  // 2001::/23, IETF protocol assignments: Teredo (2001::/32, an IPv4 client hidden in its last 32
  // bits), benchmarking, ORCHID and a few anycast services. Never a webhook receiver.
  if (b[0] === 0x20 && b[1] === 0x01 && (b[2]! & 0xfe) === 0) return 'reserved';
  // 6to4 (2002::/16) carries an IPv4 address in bytes 2–5.
  if (b[0] === 0x20 && b[1] === 0x02) {
    const inner = classifyV4(b.slice(2, 6));
    if (inner !== 'public') return inner;
  }
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link_local';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private'; // deprecated site-local fec0::/10
  if ((b[0]! & 0xfe) === 0xfc) return 'unique_local';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'reserved'; // documentation
  if (b[0] === 0x3f && b[1] === 0xff && (b[2]! & 0xf0) === 0) return 'reserved'; // documentation, 3fff::/20
  // SRv6 segment ids (5f00::/16) are routed only inside an operator's own network.
  if (b[0] === 0x5f && b[1] === 0x00) return 'reserved';
  if (b[0] === 0x01 && b[1] === 0x00 && b.slice(2, 8).every((x) => x === 0)) return 'reserved'; // discard-only
  return 'public';
}

/** Dotted-quad only: the URL parser has already normalised other IPv4 notations (0x7f.1, 2130706433). */
export function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/** 16 bytes of an IPv6 address (zone id dropped, embedded dotted IPv4 allowed); null if malformed. */
export function parseIPv6(input: string): number[] | null {
  let s = input.replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (!v4) return null;
    tail = v4;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !rest) return null;
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const words = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
  const bytes: number[] = [];
  for (const w of words) bytes.push(w >> 8, w & 0xff);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}
