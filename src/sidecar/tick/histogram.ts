/**
 * A fixed-bucket latency histogram in microseconds, HDR-like: exact below 16 µs, then eight
 * buckets per power of two (about 12% resolution) up to 2^31 µs. Recording is a few integer
 * operations and no allocation, so it can sit on the tick path.
 */
const LINEAR = 16;
const SUB = 8;
const OCTAVES = 27; // 2^4 .. 2^31
const BUCKETS = LINEAR + OCTAVES * SUB;
const MAX_US = 2 ** 31 - 1;

function indexOf(us: number): number {
  const v = us <= 0 ? 0 : us >= MAX_US ? MAX_US : Math.floor(us);
  if (v < LINEAR) return v;
  const msb = 31 - Math.clz32(v);
  const shift = msb - 3;
  return LINEAR + (msb - 4) * SUB + ((v >>> shift) - SUB);
}

/** The largest value (µs) a bucket holds: percentiles report this upper edge. */
function upperEdge(index: number): number {
  if (index < LINEAR) return index;
  const octave = Math.floor((index - LINEAR) / SUB);
  const sub = (index - LINEAR) % SUB;
  const shift = octave + 1;
  return (SUB + sub + 1) * 2 ** shift - 1;
}

export interface LatencySummary {
  count: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
}

export interface HistogramMark {
  readonly counts: Float64Array;
  readonly total: number;
}

export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private total = 0;
  private max = 0;
  /** Sum of every value recorded, µs (a Prometheus histogram's _sum). */
  private totalUs = 0;

  record(us: number): void {
    this.counts[indexOf(us)]! += 1;
    this.total++;
    this.totalUs += us;
    if (us > this.max) this.max = us;
  }

  /** Sum of every value recorded since the last reset, µs. */
  get sumUs(): number {
    return this.totalUs;
  }

  /**
   * Cumulative counts at each of `edgesUs` (ascending): how many values fell in buckets whose
   * upper edge is at most that edge. A bucket straddling an edge counts at the next one, so a
   * value is never reported faster than it was; read at scrape time, never on the tick path.
   */
  cumulative(edgesUs: readonly number[]): number[] {
    const out = new Array<number>(edgesUs.length).fill(0);
    let e = 0;
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const upper = upperEdge(i);
      while (e < edgesUs.length && edgesUs[e]! < upper) out[e++] = seen;
      seen += this.counts[i]!;
    }
    while (e < edgesUs.length) out[e++] = seen;
    return out;
  }

  get count(): number {
    return this.total;
  }

  /** The upper edge of the bucket holding quantile q (0..1); 0 when empty. */
  percentile(q: number): number {
    if (this.total === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(upperEdge(i), Math.ceil(this.max));
    }
    return Math.ceil(this.max);
  }

  summary(): LatencySummary {
    return {
      count: this.total,
      p50_us: this.percentile(0.5),
      p90_us: this.percentile(0.9),
      p99_us: this.percentile(0.99),
      p999_us: this.percentile(0.999),
      max_us: Math.ceil(this.max),
    };
  }

  /** A copy of the counts now, for percentiles of an interval later (percentileSince). */
  mark(): HistogramMark {
    return { counts: this.counts.slice(), total: this.total };
  }

  /** The upper bucket edge of quantile q over the values recorded since `mark`; 0 when none. */
  percentileSince(mark: HistogramMark, q: number): number {
    const total = this.total - mark.total;
    if (total <= 0) return 0;
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]! - mark.counts[i]!;
      if (seen >= rank) return Math.min(upperEdge(i), Math.ceil(this.max));
    }
    return Math.ceil(this.max);
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.totalUs = 0;
    this.max = 0;
  }
}
