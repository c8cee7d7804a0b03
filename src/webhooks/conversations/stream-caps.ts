import { HttpError } from '../../http/errors.js';
import type { TenantId } from '../../identity/types.js';

export interface VisitorStreamLimits {
  /** Live visitor streams one client address (an IPv6 client by its /64) holds at once; past it 429. */
  perAddress: number;
  /** Live visitor streams one tenant's widgets hold at once, whatever addresses they come from; past it 503. */
  perTenant: number;
  /** Live visitor streams in all; past it 503. */
  total: number;
}

/** A refused stream comes back after this many seconds (a stream holds its place until its visitor leaves). */
const RETRY_AFTER_S = '10';

/**
 * Counts the live visitor streams of this process (event streams and reply streams: each holds a
 * connection for as long as its visitor stays) by client address and by tenant, and refuses one
 * past a cap before anything is stored. Without it one address could hold every connection its
 * own cap allows, and one tenant's visitors (from many addresses) every connection the server
 * holds, so no other tenant's visitor, and no other request, would get one.
 */
export class VisitorStreamCaps {
  private readonly byAddress = new Map<string, number>();
  private readonly byTenant = new Map<TenantId, number>();
  private open = 0;

  constructor(private readonly limits: Readonly<VisitorStreamLimits>) {}

  /** Live streams now (tests and the benchmark). */
  get size(): number {
    return this.open;
  }

  /** Counts a stream in; returns its release (idempotent). Throws the refusal having counted nothing. */
  admit(address: string, tenant: TenantId): () => void {
    const { perAddress, perTenant, total } = this.limits;
    if ((this.byAddress.get(address) ?? 0) >= perAddress)
      throw new HttpError(
        'rate_limited',
        `Too many live chat streams: at most ${perAddress} live chat streams from one address at once; close one (another tab) first.`,
        {
          headers: { 'retry-after': RETRY_AFTER_S },
        },
      );
    if (this.open >= total) throw busy(`The chat server holds at most ${total} live chat streams at once; try again shortly.`);
    if ((this.byTenant.get(tenant) ?? 0) >= perTenant) throw busy('This chat holds its most live conversations right now; try again shortly.');
    bump(this.byAddress, address, 1);
    bump(this.byTenant, tenant, 1);
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      bump(this.byAddress, address, -1);
      bump(this.byTenant, tenant, -1);
      this.open--;
    };
  }
}

function busy(message: string): HttpError {
  return new HttpError('unavailable', message, { headers: { 'retry-after': RETRY_AFTER_S } });
}

function bump<K>(map: Map<K, number>, key: K, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
