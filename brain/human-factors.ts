import { rand, randRange } from './prng.js';
import type { AgentState } from './state.js';
import type { Speed } from './types.js';

/**
 * Players are not machines: they wander off for a minute, take breaks, tire, and log off when
 * their evening is over. Rates are per game second, scaled by the agent's proneness traits.
 */

/** At afk_proneness 1 a character goes AFK about once per 10 game minutes of quiet time. */
const AFK_RATE_PER_S = 1 / 600;
/** At break_proneness 1, a break about once per 40 game minutes. */
const BREAK_RATE_PER_S = 1 / 2400;
const AFK_S: readonly [number, number] = [15, 90];
const BREAK_S: readonly [number, number] = [120, 600];
/** Above this fatigue the character no longer jogs. */
export const TIRED = 0.6;
/** Rates at dt larger than this are capped, so a long gap between ticks is not a long spell of activity. */
const MAX_DT_S = 10;

export function sessionOver(a: AgentState, time: number): boolean {
  return time - a.firstT >= a.sessionS;
}

/** Whether an AFK spell or break is running at `time`; clears a finished one. */
export function isAway(a: AgentState, time: number): boolean {
  if (a.afkReason === '') return false;
  if (time < a.afkUntil) return true;
  a.afkReason = '';
  return false;
}

export function endAway(a: AgentState): void {
  a.afkReason = '';
  a.afkUntil = 0;
}

/**
 * Maybe starts an AFK spell or a break (only ever called when nothing is going on). One draw
 * per tick decides both: with rate × dt at most a few percent, P = rate × dt is the Poisson
 * probability to well under one percent, without an exp() per tick.
 */
export function maybeGoAway(a: AgentState, time: number, dt: number): boolean {
  if (dt <= 0) return false;
  const d = dt > MAX_DT_S ? MAX_DT_S : dt;
  const pAfk = a.afkP * AFK_RATE_PER_S * d;
  const pBreak = a.brkP * BREAK_RATE_PER_S * d;
  const u = rand(a);
  if (u < pAfk) {
    a.afkReason = 'afk';
    a.afkUntil = time + randRange(a, AFK_S[0], AFK_S[1]);
    return true;
  }
  if (u < pAfk + pBreak) {
    a.afkReason = 'break';
    a.afkUntil = time + randRange(a, BREAK_S[0], BREAK_S[1]);
    return true;
  }
  return false;
}

/** Fatigue per game second by what the character did this tick (negative = rest). */
function effort(speed: Speed | null, away: boolean): number {
  if (away) return -0.01;
  switch (speed) {
    case 'sprint':
      return 0.004;
    case 'jog':
      return 0.002;
    case 'walk':
      return 0.0005;
    default:
      return -0.003;
  }
}

export function updateFatigue(a: AgentState, speed: Speed | null, away: boolean, dt: number): void {
  const d = dt > MAX_DT_S ? MAX_DT_S : dt;
  const e = effort(speed, away);
  const rate = e > 0 ? e * (0.5 + a.fatR) : e;
  const f = a.fatigue + rate * d;
  a.fatigue = f < 0 ? 0 : f > 1 ? 1 : f;
}

/** A tired character walks where it would jog; sprinting (fleeing) still happens, adrenaline. */
export function tiredSpeed(a: AgentState, speed: Speed): Speed {
  return speed === 'jog' && a.fatigue > TIRED ? 'walk' : speed;
}
