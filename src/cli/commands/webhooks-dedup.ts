import { createHash } from 'node:crypto';

/** How long `webhooks listen` remembers a delivery id it forwarded: a retry inside it is not forwarded again. */
export const DEDUP_WINDOW_MS = 5 * 60_000;
/** Most delivery ids remembered at once; past it the oldest is forgotten first (memory stays bounded under any load). */
export const DEDUP_MAX_IDS = 10_000;
/** Longer ids are remembered by their SHA-256, so each entry costs at most this many characters. */
const ID_KEPT_CHARS = 64;

/**
 * The delivery ids (`webhook-id`) seen in the last DEDUP_WINDOW_MS, at most DEDUP_MAX_IDS of
 * them. A Map keeps insertion order, which is also expiry order (every entry lives the same
 * time), so expiry and eviction both take from the front.
 */
export class DeliveryIds {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly windowMs = DEDUP_WINDOW_MS,
    private readonly max = DEDUP_MAX_IDS,
  ) {}

  /** True the first time `id` is offered inside the window (and remembers it); false for a repeat. */
  first(delivery: string): boolean {
    const id = delivery.length <= ID_KEPT_CHARS ? delivery : `#${createHash('sha256').update(delivery).digest('base64')}`;
    const now = this.now();
    for (const [old, at] of this.seen) {
      if (now - at < this.windowMs) break;
      this.seen.delete(old);
    }
    const at = this.seen.get(id);
    if (at !== undefined && now - at < this.windowMs) return false;
    if (this.seen.size >= this.max) this.seen.delete(this.seen.keys().next().value as string);
    this.seen.set(id, now);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
