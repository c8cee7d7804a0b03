import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import { HttpError } from './errors.js';

/** Open requests one client address may hold at once, by default. */
export const DEFAULT_CONNECTIONS_PER_ADDRESS = 1000;
/** Open requests the whole server holds at once, by default. */
export const DEFAULT_CONNECTIONS_TOTAL = 20_000;
/** The largest either cap may be set to. */
export const MAX_CONNECTION_CAP = 1_000_000;

export interface ConnectionCaps {
  /** At most this many at once from one client address (the TCP peer). */
  perAddress: number;
  /** At most this many at once in all. */
  total: number;
}

export const DEFAULT_CONNECTION_CAPS: Readonly<ConnectionCaps> = { perAddress: DEFAULT_CONNECTIONS_PER_ADDRESS, total: DEFAULT_CONNECTIONS_TOTAL };

/**
 * A client address as a map key: an IPv4 address (plain or IPv4-mapped) as its 32-bit number,
 * an IPv6 one by its /64 as hex. One host is given a whole /64 and may send from any of its
 * 2^64 addresses, so counting each IPv6 address alone would be no cap (the rate limits count
 * the same way: clientAddressKey).
 */
export type Peer = number | string;

/** The Peer of a request admitted while too few are open for any address to reach its cap: counted in all only. */
export const UNCOUNTED: Peer = -1;

/**
 * Counts the connections that hold a request open (headers read, answer not finished), per
 * client address and in all, and refuses one past either cap before anything of its body is
 * read. uWebSockets.js tells a server of requests, not of sockets: an HTTP/1.1 connection
 * holds at most one request at a time, so a connection is counted while it has one open, and
 * an idle keep-alive connection (which uWS closes after 10 s) holds no memory worth counting.
 */
export class ConnectionCounter {
  private readonly byPeer = new Map<Peer, number>();
  private open = 0;
  /** Open requests admitted without reading their address (see threshold). */
  private uncounted = 0;
  /**
   * Below this many open requests none is counted by address: reading a request's address off
   * uWS (a native call and an ArrayBuffer) cost a twentieth of a tick. No address can reach the
   * cap below it; above it, an address is refused once its counted requests and every
   * uncounted one still open together reach the cap, so no address ever holds more than the cap.
   */
  private readonly threshold: number;

  constructor(private readonly caps: Readonly<ConnectionCaps> = DEFAULT_CONNECTION_CAPS) {
    checkCaps(caps);
    this.threshold = Math.floor(caps.perAddress / 2);
  }

  /** Counts a request in; throws the refusal (429 over the address's cap, 503 over the total) having counted nothing. */
  admit(res: UwsResponse): Peer {
    if (this.open >= this.caps.total) throw overTotal(this.caps.total);
    if (this.open < this.threshold) {
      this.open++;
      this.uncounted++;
      return UNCOUNTED;
    }
    const peer = peerOf(res.getRemoteAddress());
    const held = this.byPeer.get(peer) ?? 0;
    if (held + this.uncounted >= this.caps.perAddress) throw overAddress(this.caps.perAddress);
    this.byPeer.set(peer, held + 1);
    this.open++;
    return peer;
  }

  release(peer: Peer): void {
    if (peer === UNCOUNTED) {
      this.open--;
      this.uncounted--;
      return;
    }
    const held = this.byPeer.get(peer);
    if (held === undefined) return;
    if (held <= 1) this.byPeer.delete(peer);
    else this.byPeer.set(peer, held - 1);
    this.open--;
  }

  /** Open requests now, in all and from the busiest addresses (for tests and status). */
  snapshot(): { open: number; addresses: number } {
    return { open: this.open, addresses: this.byPeer.size };
  }
}

/** Throws unless both caps are integers from 1 to MAX_CONNECTION_CAP and the per-address one is at most the total. */
export function checkCaps(caps: Readonly<ConnectionCaps>): void {
  for (const [name, v] of [
    ['per-address', caps.perAddress],
    ['total', caps.total],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_CONNECTION_CAP)
      throw new Error(`the ${name} connection cap must be an integer from 1 to ${MAX_CONNECTION_CAP}, got ${v}`);
  }
}

function peerOf(address: ArrayBuffer): Peer {
  const b = new Uint8Array(address);
  if (b.length === 4) return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  if (b.length === 16 && isMapped(b)) return ((b[12]! << 24) | (b[13]! << 16) | (b[14]! << 8) | b[15]!) >>> 0;
  return Buffer.from(b.buffer, b.byteOffset, 8).toString('hex');
}

/** ::ffff:a.b.c.d, the form uWS reports an IPv4 peer in on a dual-stack socket. */
function isMapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

function overAddress(cap: number): HttpError {
  return new HttpError('rate_limited', `Too many open connections from this address (at most ${cap} at once).`, { headers: { 'retry-after': '1' } });
}

function overTotal(cap: number): HttpError {
  return new HttpError('unavailable', `The server holds its most open connections (${cap}); try again shortly.`, { headers: { 'retry-after': '1' } });
}
