import { distH, vec } from './geometry.js';
import { rand, randRange } from './prng.js';
import type { Goal } from './modes.js';
import { VISITED_CAP, type AgentState } from './state.js';
import type { GameFraming, Intent, PointOfInterest, SelfState, Speed, Vec3 } from './types.js';
import type { WhyRecorder } from './behaviours/why.js';

/**
 * Global goals: when nothing is hostile, needs (thirst, hunger, health) and traits choose what
 * the character is out to do, and the goal decides where it walks. hunger and thirst are read
 * as need levels (0 = sated, 100 = starving). With game_knowledge on, goals head for the
 * snapshot's points of interest and the bundle's game framing tilts the choice; without it
 * the character knows no places and searches by roaming.
 */

/** Multipliers the game framing puts on goal scores; all 1 for the default survival framing. */
export interface Framing {
  needs: number;
  loot: number;
  guard: number;
  roam: number;
}

export const NEUTRAL_FRAMING: Framing = { needs: 1, loot: 1, guard: 1, roam: 1 };

/** Reads the framing's words once per bundle, not per tick. */
export function framingOf(game: GameFraming | null): Framing {
  if (game === null) return NEUTRAL_FRAMING;
  const text = `${game.name} ${game.premise} ${game.goal}`.toLowerCase();
  const has = (re: RegExp): boolean => re.test(text);
  return {
    needs: has(/surviv|hunger|thirst|starv/) ? 1.3 : 1,
    loot: has(/loot|scaveng|extract|gear|salvage|treasure/) ? 1.5 : 1,
    guard: has(/defend|protect|guard|hold|fortif/) ? 1.5 : 1,
    roam: has(/explor|discover|travel|wander/) ? 1.4 : 1,
  };
}

/** Goals are reconsidered this often (game seconds), or sooner once reached. */
export const REPLAN_S = 15;
/** Within this of a goal's place the character has arrived. */
export const GOAL_ARRIVAL_M = 3;
/** A need at or above this is urgent: it overrides a patrol route and makes the character jog. */
export const URGENT_NEED = 80;

const POI_KIND: Partial<Record<Goal, string>> = {
  find_water: 'water',
  find_food: 'food',
  find_medical: 'medical',
  loot: 'loot',
};

/** The goals plan() chooses among, in SCORES order (regroup is the squads' business). */
const CHOICES: readonly Goal[] = ['find_water', 'find_food', 'find_medical', 'loot', 'guard', 'roam'];
/** Scratch for plan(): it is synchronous, so one buffer serves every agent without allocating. */
const SCORES = new Float64Array(CHOICES.length);

function needScore(level: number): number {
  if (level <= 30) return 0;
  const x = level / 100;
  return 1.6 * x * x;
}

/** A need goal started is kept until the need is down to this (a drink is finished, not sipped). */
export const SATED_NEED = 30;

/**
 * Whether the character's own needs come first: an urgent need, or a need goal under way that
 * is not yet sated. Squad members with such a need leave the squad's side until it is met.
 */
export function needy(a: AgentState, st: SelfState): boolean {
  if (urgent(st)) return true;
  return (a.goal === 'find_water' && st.thirst > SATED_NEED) || (a.goal === 'find_food' && st.hunger > SATED_NEED);
}

export function urgent(st: SelfState): boolean {
  return st.thirst >= URGENT_NEED || st.hunger >= URGENT_NEED || st.health < 100 - URGENT_NEED;
}

/**
 * Chooses the goal when it is due; returns true when the goal kind changed (the `plan`
 * counter). Scores are utilities: needs, then traits (curious characters loot and roam,
 * careful ones guard, tired ones do less), a little noise from the agent's stream, and a
 * bonus for the current goal so characters do not dither. `why`, on an explained tick, is given
 * every goal's score as it was compared (noise and bonus included).
 */
export function plan(
  a: AgentState,
  st: SelfState,
  poi: PointOfInterest[] | undefined,
  time: number,
  f: Framing,
  knowledge: boolean,
  tired: number,
  why: WhyRecorder | null = null,
): boolean {
  if (a.goal !== 'none' && time - a.goalT < REPLAN_S) return false;
  const t = a.traits;
  const careful = a.careful;
  const sc = SCORES;
  sc[0] = 1.1 * needScore(st.thirst) * f.needs;
  sc[1] = needScore(st.hunger) * f.needs;
  sc[2] = (st.health < 70 ? 1.4 * (1 - st.health / 100) + (st.blood < 3000 ? 0.4 : 0) : 0) * f.needs;
  sc[3] = (0.2 + 0.35 * t.openness + 0.2 * (1 - careful) - 0.3 * tired) * f.loot;
  sc[4] = (a.role === 'guard' ? 0.9 : 0.15 + 0.4 * careful) * f.guard;
  sc[5] = (0.25 + 0.35 * t.openness - 0.2 * tired) * f.roam;
  let best: Goal = 'roam';
  let bestScore = -Infinity;
  for (let i = 0; i < CHOICES.length; i++) {
    const g = CHOICES[i]!;
    const v = sc[i]! + 0.25 * rand(a) + (g === a.goal ? 0.15 : 0);
    if (why !== null) why.weigh(g, v);
    if (v > bestScore) {
      bestScore = v;
      best = g;
    }
  }
  const changed = best !== a.goal;
  a.goal = best;
  a.goalT = time;
  // The same search, not yet at its point, goes on to that point: a new point every REPLAN_S would be a change of mind each time.
  if (!changed && a.goalHas && a.goalPoi === '' && a.goal !== 'guard' && distH(st.pos.x, st.pos.z, a.goalX, a.goalZ) > GOAL_ARRIVAL_M) return false;
  place(a, st.pos, poi, knowledge);
  return changed;
}

/** Sets where the current goal leads. */
function place(a: AgentState, pos: Vec3, pois: PointOfInterest[] | undefined, knowledge: boolean): void {
  if (a.goal === 'guard' && a.anchor) {
    setGoal(a, '', a.anchorX, a.anchorY, a.anchorZ);
    return;
  }
  const kind = POI_KIND[a.goal];
  if (kind !== undefined && knowledge && pois !== undefined) {
    const poi = nearestPoi(a, pos, pois, kind, a.goal === 'loot');
    if (poi !== null) {
      setGoal(a, poi.id, poi.pos.x, poi.pos.y, poi.pos.z);
      return;
    }
  }
  // No known place: search by wandering 40-120 m in a direction from the agent's stream.
  const angle = rand(a) * 2 * Math.PI;
  const dist = randRange(a, 40, 120);
  setGoal(a, '', pos.x + Math.sin(angle) * dist, pos.y, pos.z + Math.cos(angle) * dist);
}

function setGoal(a: AgentState, poi: string, x: number, y: number, z: number): void {
  a.goalPoi = poi;
  a.goalHas = true;
  a.goalX = x;
  a.goalY = y;
  a.goalZ = z;
}

function nearestPoi(a: AgentState, pos: Vec3, pois: PointOfInterest[], kind: string, skipVisited: boolean): PointOfInterest | null {
  let best: PointOfInterest | null = null;
  let bestD = Infinity;
  for (let i = 0; i < pois.length; i++) {
    const p = pois[i]!;
    if (p.kind !== kind || (skipVisited && a.visited.includes(p.id))) continue;
    const d = distH(pos.x, pos.z, p.pos.x, p.pos.z);
    if (d < bestD || (d === bestD && best !== null && p.id < best.id)) {
      best = p;
      bestD = d;
    }
  }
  return best;
}

function markVisited(a: AgentState, id: string): void {
  if (id === '' || a.visited.includes(id)) return;
  if (a.visited.length < VISITED_CAP) a.visited.push(id);
  else {
    a.visited[a.visitedNext] = id;
    a.visitedNext = (a.visitedNext + 1) % VISITED_CAP;
  }
}

/** Careful characters walk to their goals, reckless ones jog; urgency always jogs. */
export function goalSpeed(a: AgentState, isUrgent: boolean): Speed {
  return isUrgent || a.careful < 0.5 ? 'jog' : 'walk';
}

/**
 * Moves toward the goal, or on arrival idles there (drinking, eating, guarding, looting) and
 * makes the goal due for reconsideration, except guarding, which is a place to stay.
 * Returns the speed moved at, or null when idle.
 */
export function pushGoal(out: Intent[], a: AgentState, pos: Vec3, speed: Speed): Speed | null {
  if (!a.goalHas) {
    out.push({ kind: 'Idle', reason: 'none' });
    return null;
  }
  if (distH(pos.x, pos.z, a.goalX, a.goalZ) > GOAL_ARRIVAL_M) {
    out.push({ kind: 'MoveTo', to: vec(a.goalX, a.goalY, a.goalZ), speed });
    return speed;
  }
  if (a.goal === 'guard') {
    out.push({ kind: 'Idle', reason: 'guarding' });
    return null;
  }
  if (a.goal === 'loot') markVisited(a, a.goalPoi);
  const found = a.goalPoi !== '';
  // A place that was only a search point, or looted, or roamed to, is done with: choose again.
  if (!found || a.goal === 'roam' || a.goal === 'loot') a.goalT = -1e9;
  out.push({ kind: 'Idle', reason: found ? arrivedReason(a.goal) : a.goal === 'roam' ? 'looking_around' : 'searching' });
  return null;
}

function arrivedReason(g: Goal): string {
  switch (g) {
    case 'find_water':
      return 'drinking';
    case 'find_food':
      return 'eating';
    case 'find_medical':
      return 'healing';
    case 'loot':
      return 'looting';
    default:
      return 'looking_around';
  }
}

export function modeForGoal(g: Goal): 'guarding' | 'roaming' | 'traveling' {
  return g === 'guard' ? 'guarding' : g === 'roam' ? 'roaming' : 'traveling';
}
