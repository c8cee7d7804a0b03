/**
 * The brain's only source of randomness: mulberry32 streams whose 32-bit state lives on the
 * agent, so a draw is a couple of integer multiplies and no allocation, and one agent's
 * stream never advances because of another agent.
 */

/** Anything carrying a PRNG state word. */
export interface RngHolder {
  rng: number;
}

/** splitmix-style 32-bit finaliser: spreads nearby inputs (agent 1, 2, 3) far apart. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** fold()'s high part for any n in [0, 2^32), where Math.floor(n / 2^32) is 0: computed once. */
const HIGH_ZERO = mix(0 ^ 0x9e3779b9);

/** Folds a safe integer (possibly negative or above 2^32) into 32 bits without losing the high part. */
function fold(n: number): number {
  // Agent ids and game times in milliseconds are below 2^32: one mix instead of two and no division.
  if (n >= 0 && n < 4294967296) return mix((n >>> 0) ^ HIGH_ZERO);
  const lo = n >>> 0;
  const hi = Math.floor(n / 4294967296) >>> 0;
  return mix(lo ^ mix(hi ^ 0x9e3779b9));
}

/** The initial state of an agent's stream, from the bundle seed and the agent id only. */
export function seedFor(seed: number, agent: number, salt = 0): number {
  return mix(fold(seed) ^ mix(fold(agent) + 0x6d2b79f5 + salt)) >>> 0;
}

/** A float in [0, 1), advancing the holder's stream. */
export function rand(h: RngHolder): number {
  const s = (h.rng + 0x6d2b79f5) >>> 0;
  h.rng = s;
  let t = Math.imul(s ^ (s >>> 15), s | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** A float in [lo, hi). */
export function randRange(h: RngHolder, lo: number, hi: number): number {
  return lo + (hi - lo) * rand(h);
}

/**
 * A float in [0, 1) that depends only on its two inputs, without advancing any stream: for
 * per-character rhythms (when to glance, how long to search) that must not shift the draws
 * the agent's stream already makes, so adding one never reshuffles the others.
 */
export function noise(a: number, b: number): number {
  return mix(fold(a) ^ mix(fold(Math.round(b * 1000)) + 0x2545f491)) / 4294967296;
}
