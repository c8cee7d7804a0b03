/**
 * Fixed-size Float64Array blocks cut from shared slabs, for the per-agent numbers (an agent's
 * fields, its memory). A Float64Array of its own is an ArrayBuffer of its own, allocated
 * outside the JS heap; blocks that are views of one slab sit side by side in the order the
 * agents were made, and the all-on tick of `bench brain` measured cheaper with them than with
 * a buffer per block (figures in bench/RESULTS.md). A block given back is reused, zeroed, by
 * the next take().
 */
export class SlabPool {
  private slab: Float64Array | null = null;
  private used: number;
  private readonly free: Float64Array[] = [];

  /**
   * `size` numbers a block, `perSlab` blocks a slab, at most `maxFree` freed blocks kept (the
   * rest are left to the garbage collector, so a pool does not hold a large brain's worth of
   * slabs once it has been cleared).
   */
  constructor(
    readonly size: number,
    readonly perSlab: number,
    readonly maxFree: number,
  ) {
    this.used = perSlab;
  }

  /** A zeroed block. */
  take(): Float64Array {
    const m = this.free.pop();
    if (m !== undefined) {
      m.fill(0);
      return m;
    }
    if (this.slab === null || this.used === this.perSlab) {
      this.slab = new Float64Array(this.size * this.perSlab);
      this.used = 0;
    }
    const at = this.used++ * this.size;
    return this.slab.subarray(at, at + this.size);
  }

  /** Gives a block of this pool back. Nothing else may still refer to it: a holder that may read on keeps a copy. */
  give(m: Float64Array): void {
    if (this.free.length < this.maxFree) this.free.push(m);
  }
}
