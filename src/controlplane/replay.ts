/**
 * Signatures seen inside the timestamp window, for replay detection. A signature covers its
 * own timestamp, so a replay always lands in the bucket of the second it was signed for;
 * buckets older than the window are dropped whole, because the timestamp check alone rejects
 * their signatures from then on. Exact up to `max` remembered signatures; past that the
 * oldest second is forgotten first (the timestamp window still bounds any replay to 300 s).
 */
export class ReplayGuard {
  private readonly buckets = new Map<number, Set<number>>();
  private size = 0;

  constructor(private readonly windowS: number, private readonly max: number) {}

  /**
   * Records a signature (its first 52 bits as a number: a false match needs a 2^-52
   * coincidence) signed for unix second `ts`; false when it was already recorded.
   */
  remember(ts: number, slot: number, nowS: number): boolean {
    let bucket = this.buckets.get(ts);
    if (bucket === undefined) {
      this.expire(nowS);
      bucket = new Set();
      this.buckets.set(ts, bucket);
    } else if (bucket.has(slot)) return false;
    bucket.add(slot);
    if (++this.size > this.max) this.dropOldest();
    return true;
  }

  get remembered(): number {
    return this.size;
  }

  private expire(nowS: number): void {
    for (const [ts, bucket] of this.buckets) {
      if (ts < nowS - this.windowS) {
        this.size -= bucket.size;
        this.buckets.delete(ts);
      }
    }
  }

  private dropOldest(): void {
    let oldest = Infinity;
    for (const ts of this.buckets.keys()) if (ts < oldest) oldest = ts;
    const bucket = this.buckets.get(oldest);
    if (!bucket) return;
    this.size -= bucket.size;
    this.buckets.delete(oldest);
  }
}
