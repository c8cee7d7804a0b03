/**
 * A server-wide allowance of bytes held in memory at once. Each request may hold up to its
 * route's body limit while its body arrives (and a JSON photo upload, read whole since base64
 * inside JSON cannot be streamed to disk, up to the JSON cap); a budget bounds what all of
 * them together hold, whatever the number of clients.
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
