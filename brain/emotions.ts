import { rand } from './prng.js';
import type { Perception } from './reactive/perception.js';
import type { AgentState } from './state.js';

/**
 * Fear, anger and calm in [0, 1]: events push them, and they relax toward a per-character
 * baseline with a half-life measured in game seconds (never wall time).
 */

const HALF_LIFE_S = 30;
const DECAY_PER_S = -Math.LN2 / HALF_LIFE_S;

/**
 * The decay factor of the last dt: a game ticks at a fixed rate, so nearly every tick has the
 * dt of the one before, and the same exp() need not be worked out again (the value is the
 * same to the bit, so memoising changes no reply).
 */
let lastDt = 0;
let lastK = 1;

function decay(dt: number): number {
  if (dt !== lastDt) {
    lastK = Math.exp(dt * DECAY_PER_S);
    lastDt = dt;
  }
  return lastK;
}

function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/**
 * One tick of feeling. `lostSquadmate`: a squadmate died since the last tick. `blunt` dampens
 * reactions, 0 = fresh, 1 = exhausted (fatigue, when human_factors is on).
 */
export function updateEmotions(a: AgentState, p: Perception, dt: number, lostSquadmate: boolean, blunt: number): void {
  const n = a.nrv;
  const k = dt === 0 ? 1 : decay(dt);
  // Baselines: nervous characters never quite relax.
  const bf = 0.15 * n;
  const ba = 0.1 * (1 - a.agr);
  const bc = 0.7 - 0.4 * n;
  let fear = bf + (a.fear - bf) * k;
  let anger = ba + (a.anger - ba) * k;
  let calm = bc + (a.calm - bc) * k;
  const gain = 1 - 0.5 * blunt;
  if (p.damage > 0) {
    fear += (p.damage / 80) * (0.5 + n) * gain;
    anger += (p.damage / 100) * (1.5 - a.agr) * gain;
    calm -= (p.damage / 80) * gain;
  }
  if (lostSquadmate) {
    fear += 0.35 * (0.5 + n) * gain;
    anger += 0.3 * gain;
    calm -= 0.3 * gain;
  }
  const d = dt > 10 ? 10 : dt;
  if (p.hostiles > 0) {
    fear += 0.01 * d * p.hostiles * (0.5 + n) * gain;
    calm -= 0.02 * d * gain;
  }
  if (p.friendly !== null) {
    calm += 0.02 * d;
    fear -= 0.01 * d;
  }
  a.fear = clamp01(fear);
  a.anger = clamp01(anger);
  a.calm = clamp01(calm);
}

/** The dominant mood, for persona and dialogue. */
export function mood(a: AgentState): 'afraid' | 'angry' | 'calm' | 'uneasy' {
  if (a.fear >= 0.5 && a.fear >= a.anger) return 'afraid';
  if (a.anger >= 0.5) return 'angry';
  if (a.calm >= 0.5) return 'calm';
  return 'uneasy';
}

/** Least game seconds between two emotes of one character. */
export const EMOTE_GAP_S = 20;

/**
 * Picks an emote for this tick or returns null. Emotion-driven emotes need emotional_events;
 * a wave at a friendly player nearby needs only emotes. The draw happens only once the gap
 * has passed, so a quiet character does not burn its random stream.
 */
export function pickEmote(
  a: AgentState,
  p: Perception,
  time: number,
  fleeing: boolean,
  engaging: boolean,
  emotions: boolean,
  sociability: number,
): string | null {
  if (time - a.lastEmoteT < EMOTE_GAP_S) return null;
  let name: string | null = null;
  let odds = 0;
  if (emotions && fleeing && a.fear > 0.6) {
    name = 'panic';
    odds = 0.5;
  } else if (emotions && engaging && a.anger > 0.6) {
    name = 'taunt';
    odds = 0.3;
  } else if (!fleeing && !engaging && p.friendly !== null) {
    name = 'wave';
    odds = 0.15 + 0.5 * sociability;
  } else if (emotions && !fleeing && !engaging && p.hostiles === 0 && a.calm > 0.75) {
    name = 'stretch';
    odds = 0.05;
  }
  if (name === null || rand(a) >= odds) return null;
  a.lastEmoteT = time;
  return name;
}
