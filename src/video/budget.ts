/**
 * A server-wide allowance of bytes held in memory at once. JSON photo uploads are read whole
 * (base64 inside JSON cannot be streamed to disk), so each may hold up to the JSON cap; the
 * budget bounds what all of them together hold, whatever the number of clients.
 */
export class ByteBudget {
  private used = 0;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`a byte budget must be a positive integer, got ${limit}`);
  }

  /** Bytes currently taken. */
  get held(): number {
    return this.used;
  }

  /** Takes n bytes if they fit; false (and nothing taken) if not. */
  take(n: number): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }

  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}
