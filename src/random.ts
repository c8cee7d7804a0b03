/**
 * A small seeded PRNG (mulberry32) for everything outside the brain that needs repeatable
 * randomness: jitter, sampling, synthetic workloads. Tests and benchmarks fix the seed; the
 * brain keeps its own per-agent streams in brain/prng.ts (it imports nothing of src/).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
