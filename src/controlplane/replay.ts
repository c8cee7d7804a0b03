/**
 * Signatures seen inside the timestamp window, for replay detection. A signature covers its
 * own timestamp, so a replay always lands in the bucket of the second it was signed for;
 * buckets older than the window are dropped whole, because the timestamp check alone rejects
 * their signatures from then on. Exact up to `max` remembered signatures; past that the
 * oldest second is forgotten first (the timestamp window still bounds any replay to 300 s).
 */
export class ReplayGuard {
  private readonly buckets = new Map<number, SlotSet>();
  private latest: SlotSet | undefined;
  private size = 0;

  constructor(
    private readonly windowS: number,
    private readonly max: number,
  ) {}

  /**
   * Records a signature (its first 52 bits as a number: a false match needs a 2^-52
   * coincidence) signed for unix second `ts`; false when it was already recorded.
   */
  remember(ts: number, slot: number, nowS: number): boolean {
    let bucket = this.buckets.get(ts);
    if (bucket === undefined) {
      this.expire(nowS);
      // Sized for as many signatures as the last second saw, so a busy second does not grow
      // its table step by step (each step rehashes everything); a quiet one shrinks it again.
      bucket = new SlotSet(this.latest?.count ?? 0);
      this.buckets.set(ts, bucket);
      this.latest = bucket;
    }
    if (!bucket.add(slot)) return false;
    if (++this.size > this.max) this.dropOldest();
    return true;
  }

  get remembered(): number {
    return this.size;
  }

  private expire(nowS: number): void {
    for (const [ts, bucket] of this.buckets) {
      if (ts < nowS - this.windowS) {
        this.size -= bucket.count;
        this.buckets.delete(ts);
      }
    }
  }

  private dropOldest(): void {
    let oldest = Infinity;
    for (const ts of this.buckets.keys()) if (ts < oldest) oldest = ts;
    const bucket = this.buckets.get(oldest);
    if (!bucket) return;
    this.size -= bucket.count;
    this.buckets.delete(oldest);
  }
}

/**
 * A set of 52-bit integers in a Float64Array with open addressing. A million remembered
 * signatures would be a million heap numbers in a Set, which every major GC walks (pauses of
 * tens of ms on the pull path); in a typed array they cost the collector nothing.
 */
class SlotSet {
  private table: Float64Array;
  count = 0;

  /** Room for `expected` slots before the first growth (at most half full, at least 1024 entries). */
  constructor(expected: number) {
    this.table = new Float64Array(Math.max(1024, 2 ** Math.ceil(Math.log2(2 * expected + 2))));
  }

  /** Adds `slot` (0 ≤ slot < 2^52); false when it was already there. */
  add(slot: number): boolean {
    if ((this.count + 1) * 2 > this.table.length) this.grow();
    // Stored as slot + 1 so that 0 can mean empty; slots are random bits, so their low bits index well.
    const v = slot + 1;
    const mask = this.table.length - 1;
    for (let i = (v >>> 0) & mask; ; i = (i + 1) & mask) {
      const cur = this.table[i]!;
      if (cur === 0) {
        this.table[i] = v;
        this.count++;
        return true;
      }
      if (cur === v) return false;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Float64Array(old.length * 2);
    const mask = this.table.length - 1;
    for (const v of old) {
      if (v === 0) continue;
      let i = (v >>> 0) & mask;
      while (this.table[i] !== 0) i = (i + 1) & mask;
      this.table[i] = v;
    }
  }
}

/**
 * Signatures recorded where every replica on one database sees them: a signature used on one
 * replica is a replay on every other. `record` resolves true when the signature is new.
 */
export interface ReplayLedger {
  record(ts: number, slot: number): Promise<boolean>;
  /**
   * `record`, with what the request does once the ledger has answered run at that moment
   * (`then(fresh)`): the promise settles with its value or its throw. A request's answer then
   * waits on one promise rather than a chain of them. When the record could not be written,
   * `failed` runs before the promise rejects with the failure.
   */
  record<T>(ts: number, slot: number, then: (fresh: boolean) => T | PromiseLike<T>, failed?: () => void): Promise<T>;
  /**
   * Signatures were written to the record by another statement (a telemetry batch's, which
   * records its reports' signatures itself) at `now`: the ledger keeps pruning the record on its
   * schedule as it does after its own writes.
   */
  written(now: number): void;
}
