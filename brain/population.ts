import { rand, type RngHolder } from './prng.js';
import type { AgentState } from './state.js';
import { TRAIT_NAMES, type Population, type Profile, type Traits } from './types.js';

/**
 * Who a character is: traits drawn once per agent from the bundle's population (or given by
 * the profile), and the three axes decisions are scored on.
 */

function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/**
 * Triangular draw around the mean: most characters are near it, a few reach mean ± spread.
 * Every trait is drawn even when the profile overrides it, so the stream stays aligned and an
 * override of one trait does not reshuffle the others.
 */
export function sampleTraits(pop: Population, rng: RngHolder): Traits {
  const t = {} as Traits;
  for (const name of TRAIT_NAMES) {
    const r = pop[name];
    const u = rand(rng) + rand(rng) - 1;
    t[name] = clamp01(r.mean + r.spread * u);
  }
  return t;
}

/**
 * Applies profile.traits over the sampled ones; called every tick so a changed profile takes
 * effect. Returns whether a trait changed (the caller then re-tempers the agent). Written out
 * per trait: a store by a variable name (`traits[name] = v`) is megamorphic, and this runs on
 * every tick that carries a profile.
 */
export function applyProfileTraits(traits: Traits, profile: Profile): boolean {
  const p = profile.traits;
  if (p === undefined) return false;
  let changed = false;
  let v: number | undefined;
  if ((v = p.openness) !== undefined && v >= 0 && v <= 1 && v !== traits.openness) {
    traits.openness = v;
    changed = true;
  }
  if ((v = p.conscientiousness) !== undefined && v >= 0 && v <= 1 && v !== traits.conscientiousness) {
    traits.conscientiousness = v;
    changed = true;
  }
  if ((v = p.extraversion) !== undefined && v >= 0 && v <= 1 && v !== traits.extraversion) {
    traits.extraversion = v;
    changed = true;
  }
  if ((v = p.agreeableness) !== undefined && v >= 0 && v <= 1 && v !== traits.agreeableness) {
    traits.agreeableness = v;
    changed = true;
  }
  if ((v = p.neuroticism) !== undefined && v >= 0 && v <= 1 && v !== traits.neuroticism) {
    traits.neuroticism = v;
    changed = true;
  }
  if ((v = p.afk_proneness) !== undefined && v >= 0 && v <= 1 && v !== traits.afk_proneness) {
    traits.afk_proneness = v;
    changed = true;
  }
  if ((v = p.break_proneness) !== undefined && v >= 0 && v <= 1 && v !== traits.break_proneness) {
    traits.break_proneness = v;
    changed = true;
  }
  if ((v = p.fatigue_rate) !== undefined && v >= 0 && v <= 1 && v !== traits.fatigue_rate) {
    traits.fatigue_rate = v;
    changed = true;
  }
  return changed;
}

/** Refreshes the agent's derived temperament from its traits. */
export function temper(a: AgentState): void {
  const t = a.traits;
  a.nrv = t.neuroticism;
  a.agr = t.agreeableness;
  a.brave = bravery(t);
  a.social = sociability(t);
  a.careful = carefulness(t);
  a.afkP = t.afk_proneness;
  a.brkP = t.break_proneness;
  a.fatR = t.fatigue_rate;
}

/** BRAIN.md's coward by traits (the profile can also say so): high neuroticism with low agreeableness. */
export function cowardly(a: AgentState): boolean {
  return a.nrv >= COWARD_NEUROTICISM && a.agr <= COWARD_AGREEABLENESS;
}

/** Session length in game seconds, uniform in the bundle's [min, max] minutes. */
export function sampleSessionS(pop: Population, rng: RngHolder): number {
  const [lo, hi] = pop.session_min;
  return (lo + (hi - lo) * rand(rng)) * 60;
}

export const COWARD_NEUROTICISM = 0.7;
export const COWARD_AGREEABLENESS = 0.3;

/** Brave (1) vs timid (0): calm nerves and an outgoing temper stand their ground. */
export function bravery(t: Traits): number {
  return clamp01(0.65 * (1 - t.neuroticism) + 0.2 * t.extraversion + 0.15 * (1 - t.agreeableness));
}

/** Social (1) vs loner (0): keeps close to the squad, greets players, answers speech. */
export function sociability(t: Traits): number {
  return clamp01(0.7 * t.extraversion + 0.3 * t.agreeableness);
}

/** Careful (1) vs reckless (0): walks rather than jogs, keeps its distance, rests. */
export function carefulness(t: Traits): number {
  return clamp01(0.75 * t.conscientiousness + 0.25 * t.neuroticism);
}
