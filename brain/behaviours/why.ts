import type { WhyOption } from '../types.js';

/**
 * The explanation of a tick (`?explain=1`, the simulator's record): filled by the decision as it
 * happens, never recomputed afterwards. A tick that does not ask has no recorder on its context
 * (`TickCtx.why` is null): the scoring functions test that one reference and do nothing else,
 * and the overlays run through the table's one dispatch call as always (dispatch.ts).
 */

/** Most options one tick weighs: the six goals of a plan, or engage and flee; more are not kept. */
export const MAX_WEIGHED = 8;
/** Options an explanation lists, best first. */
export const WHY_OPTIONS = 3;
/**
 * The most bytes `"why":{…}` can add to a JSON reply: the longest mode and goal, three options
 * with the longest names and scores far beyond any the brain gives, and a rule naming the
 * longest behaviour and every overlay (test/brain/why.test.ts builds that one). Replies that
 * explain themselves typically add 60-180 bytes.
 */
export const WHY_MAX_BYTES = 512;
/** Decimals a score is given with: enough to order them as the brain did, short on the wire. */
const SCORE_SCALE = 1000;

/** One per Brain, reused by every explained tick: the scores weighed so far this tick. */
export class WhyRecorder {
  private readonly names: string[] = Array.from({ length: MAX_WEIGHED }, () => '');
  private readonly scores = new Float64Array(MAX_WEIGHED);
  private count = 0;

  /** Forgets the previous tick's scores. */
  begin(): void {
    this.count = 0;
  }

  /**
   * Records an option the decision scored, as the decision compared it. An option scored twice
   * in one tick keeps the later score (the one the decision went on with).
   */
  weigh(name: string, score: number): void {
    const n = this.count;
    for (let i = 0; i < n; i++) {
      if (this.names[i] === name) {
        this.scores[i] = score;
        return;
      }
    }
    if (n === MAX_WEIGHED) return;
    this.names[n] = name;
    this.scores[n] = score;
    this.count = n + 1;
  }

  /** The best WHY_OPTIONS options weighed, best first; of equal scores the one weighed first (as the brain's own comparisons keep it). */
  top(): WhyOption[] {
    const out: WhyOption[] = [];
    let taken = 0;
    for (let pick = 0; pick < WHY_OPTIONS; pick++) {
      let best = -1;
      for (let i = 0; i < this.count; i++) if ((taken & (1 << i)) === 0 && (best < 0 || this.scores[i]! > this.scores[best]!)) best = i;
      if (best < 0) break;
      taken |= 1 << best;
      // `+ 0` turns a rounded -0 into 0, which JSON and MessagePack write alike.
      out.push({ name: this.names[best]!, score: Math.round(this.scores[best]! * SCORE_SCALE) / SCORE_SCALE + 0 });
    }
    return out;
  }
}
