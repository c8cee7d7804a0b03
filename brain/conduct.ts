import { cm, distH, rem, vec, yawTo } from './geometry.js';
import { noise } from './prng.js';
import type { Squad } from './squads.js';
import type { AgentState } from './state.js';
import {
  hasTarget,
  HEARD_AHEAD_S,
  type HeardSpeech,
  type Intent,
  type PointOfInterest,
  type Role,
  type SelfState,
  type Speed,
  type Target,
  type TargetKind,
  type Vec3,
} from './types.js';
import { ARRIVAL_M } from './reactive/patrol.js';
import { TICK_LIMITS } from './tick-schema.js';

/**
 * Believable conduct (human_factors on): how a character fights, flees, searches and idles,
 * shaped by its traits so a crowd is a population rather than clones or turrets. Every rhythm
 * comes from game time and noise() of the agent id, never from the agent's PRNG stream, so
 * the draws the other subsystems make are unchanged. Nothing here allocates beyond the
 * intents it pushes.
 */

// ---- combat ----

/**
 * Acquisition: the time from first sight to the first shot grows with range (about
 * ACQUIRE_BASE_S + ACQUIRE_PER_M per metre: 0.5 s at 20 m, 2 s at 150 m), is longer for the
 * nervous, varies per hostile, and never exceeds ACQUIRE_MAX_S.
 */
export const ACQUIRE_BASE_S = 0.25;
export const ACQUIRE_PER_M = 0.012;
export const ACQUIRE_MAX_S = 3;
/** Calm characters (neuroticism below this) fire at once at targets within CLOSE_M. */
export const CALM_NERVES = 0.4;
export const CLOSE_M = 30;
/** Every RELOAD_EVERY-th burst cycle is a reload: no fire for the whole cycle. */
export const RELOAD_EVERY = 4;
/** At most this many members of one squad fire at one target at a time. */
export const MAX_SHOOTERS_PER_TARGET = 3;
/** A squadmate counts as firing when it fired this recently. */
const SHOOTING_FRESH_S = 1;
/** Characters that do not hold reposition once per this window (per character in [5, 10] s), moving for the first MOVE_S. */
export const REPOSITION_MIN_S = 5;
export const REPOSITION_MAX_S = 10;
const MOVE_S = 3.5;
/** Below this many rounds a character halves its effective range: ammo conserved. */
export const LOW_AMMO = 10;
/** A cover point farther than this is not worth running to under fire. */
export const COVER_REACH_M = 80;

/** Effective range by role against people; zombies are engaged close, animals only in self-defence. */
export const EFFECTIVE_RANGE_M: Readonly<Record<Role, number>> = { survivor: 150, bandit: 180, guard: 250, trader: 100 };
export const ZOMBIE_RANGE_M = 40;
export const ANIMAL_RANGE_M = 20;

export type Style = 'hold' | 'advance' | 'flank' | 'cover';

/** The engagement style traits give: reckless and brave advance, curious flank, careful and nervous take cover. */
export function styleOf(a: AgentState): Style {
  if (a.careful >= 0.5 && a.nrv >= 0.4) return 'cover';
  if (a.brave >= 0.58 && a.careful < 0.5) return 'advance';
  if (a.traits.openness >= 0.55) return 'flank';
  return 'hold';
}

export function acquireDelay(a: AgentState, dist: number, target: number): number {
  if (a.nrv < CALM_NERVES && dist < CLOSE_M) return 0;
  if (a.acqFor !== target) {
    a.acqN = noise(a.id, target);
    a.acqFor = target;
  }
  const d = (ACQUIRE_BASE_S + ACQUIRE_PER_M * dist) * (0.7 + 0.6 * a.nrv) * (0.8 + 0.4 * a.acqN);
  return d < ACQUIRE_MAX_S ? d : ACQUIRE_MAX_S;
}

function rangeFor(a: AgentState, kind: TargetKind, ammo: number): number {
  const r = kind === 'zombie' ? ZOMBIE_RANGE_M : kind === 'animal' ? ANIMAL_RANGE_M : EFFECTIVE_RANGE_M[a.role];
  return ammo < LOW_AMMO ? r * 0.5 : r;
}

/**
 * Starts or continues an engagement: returns whether to fire this tick. The acquisition delay
 * runs from the tick the character first sees the hostile, its own first tick included (from
 * outside, that is the first sight: a character new to the brain aims before it shoots like
 * any other); a hostile that hits the character (`hit`) while it is still aiming counts as
 * acquired at once.
 * After the acquisition delay: bursts (longer for the brave) and pauses (longer for the
 * nervous), every RELOAD_EVERY-th cycle a reload.
 */
export function fireNow(a: AgentState, threat: Target, dist: number, time: number, ammo: number, hit: boolean): boolean {
  const delay = acquireDelay(a, dist, threat.id);
  if (a.engTarget !== threat.id || a.mode !== 'engaging') {
    a.engTarget = threat.id;
    a.engT = time;
  }
  // Shot at while still aiming: it fires back at once.
  if (hit && time - a.engT < delay) a.engT = time - delay;
  if (dist > rangeFor(a, threat.kind, ammo)) return false;
  const e = time - a.engT - delay;
  if (e < 0) return false;
  const burst = 1.5 + 2.5 * a.brave;
  const cycle = burst + 0.6 + 1.4 * a.nrv;
  const k = Math.floor(e / cycle);
  if (rem(k, RELOAD_EVERY) === RELOAD_EVERY - 1) return false;
  return e - k * cycle < burst;
}

/** Whether fewer than MAX_SHOOTERS_PER_TARGET other members fire at `target` now. */
export function shooterFree(members: ReadonlyMap<number, AgentState>, a: AgentState, target: number, time: number): boolean {
  let n = 0;
  for (const m of members.values()) {
    if (m !== a && m.fireTarget === target && time - m.fireT <= SHOOTING_FRESH_S && ++n >= MAX_SHOOTERS_PER_TARGET) return false;
  }
  return true;
}

function nearestCover(pois: PointOfInterest[] | undefined, x: number, z: number): PointOfInterest | null {
  if (pois === undefined) return null;
  let best: PointOfInterest | null = null;
  let bestD = COVER_REACH_M;
  for (let i = 0; i < pois.length; i++) {
    const p = pois[i]!;
    if (p.kind !== 'cover') continue;
    const d = distH(x, z, p.pos.x, p.pos.z);
    if (d < bestD) {
      best = p;
      bestD = d;
    }
  }
  return best;
}

/**
 * Movement while engaged, after Face and Engage: none for holders; the others move for the
 * first MOVE_S of every reposition window. Returns whether it moved.
 */
export function pushManoeuvre(
  out: Intent[],
  a: AgentState,
  pos: Vec3,
  pois: PointOfInterest[] | undefined,
  threat: Target,
  dist: number,
  time: number,
): boolean {
  const style = styleOf(a);
  if (style === 'hold') return false;
  if (style === 'cover') {
    const c = nearestCover(pois, pos.x, pos.z);
    if (c === null || distH(pos.x, pos.z, c.pos.x, c.pos.z) < 2) return false;
    out.push({ kind: 'MoveTo', to: vec(c.pos.x, c.pos.y, c.pos.z), speed: 'jog' });
    return true;
  }
  let window = a.repoS;
  if (window !== window) window = a.repoS = REPOSITION_MIN_S + (REPOSITION_MAX_S - REPOSITION_MIN_S) * noise(a.id, 1);
  if (rem(time - a.engT, window) >= MOVE_S) return false;
  const dx = threat.pos.x - pos.x;
  const dz = threat.pos.z - pos.z;
  const len = dist > 1e-6 ? dist : 1;
  let tx: number;
  let tz: number;
  if (style === 'advance') {
    if (dist < 20) return false;
    tx = pos.x + (dx / len) * 8;
    tz = pos.z + (dz / len) * 8;
  } else {
    // Flank: sideways across the line of fire, to the side the character favours.
    const side = (a.id & 1) === 0 ? 1 : -1;
    tx = pos.x + (dz / len) * 8 * side + (dx / len) * 2;
    tz = pos.z - (dx / len) * 8 * side + (dz / len) * 2;
  }
  out.push({ kind: 'MoveTo', to: vec(tx, pos.y, tz), speed: 'jog' });
  return true;
}

// ---- flight ----

/**
 * A flight lasts at least FLEE_MIN_S..FLEE_MAX_S (drawn per flight; the nervous run longer),
 * unless the character is FLEE_CLEAR_MIN_M..FLEE_CLEAR_MAX_M out of sight sooner, and at most
 * twice its least length once out of sight: no two flights need last alike.
 */
export const FLEE_MIN_S = 5;
export const FLEE_MAX_S = 12;
export const FLEE_CLEAR_MIN_M = 40;
export const FLEE_CLEAR_MAX_M = 80;
/** After a flight the character investigates nothing (least of all what it fled from) for this long. */
export const NO_RETURN_S = 60;
const FLEE_STEP_M = 40;
/** Less than this per second while sprinting is no progress... */
const BLOCKED_MPS = 1;
/**
 * ...judged over at least this long on one way out: one tick is not enough, since a mod that
 * has not yet applied the last reply, or ticks at 10 Hz while the character turns, shows a
 * runner that has hardly moved since the last tick but is not blocked.
 */
export const BLOCKED_WINDOW_S = 2;
/**
 * Turns from the way out tried in turn while blocked (a wall in the way); one that comes within
 * 90 degrees of a threat (plus FLEE_MARGIN_DEG) is skipped, and with none left the character hides.
 */
export const FLEE_SIDES_DEG: readonly number[] = [0, 60, -60, 100, -100];
const FLEE_MARGIN_DEG = 5;
/** fleeBend of a character that has tried every side and hides. */
const HIDING = 360;
/** A squad's flight bearing holds for this long after a member took it (the first of a squad to flee with none fresh)... */
export const SQUAD_BEARING_S = 10;
/** ...by members whose own way out is within 60 degrees of it (it leads away from their threats too). */
const SHARED_BEARING_COS = 0.5;

/** This flight's least length: per character and per flight, longer for the nervous. */
export function fleeMinS(a: AgentState): number {
  flightDraws(a);
  return FLEE_MIN_S + (FLEE_MAX_S - FLEE_MIN_S) * (0.55 * a.fleeN + 0.45 * a.nrv);
}

/** The current flight's draws (fleeN, fleeClear), worked out once per flight rather than every tick of it. */
function flightDraws(a: AgentState): void {
  const t = a.fleeT;
  if (a.fleeFor === t) return;
  a.fleeN = noise(a.id, t);
  a.fleeClear = FLEE_CLEAR_MIN_M + (FLEE_CLEAR_MAX_M - FLEE_CLEAR_MIN_M) * noise(a.id + 1, t);
  a.fleeFor = t;
}

/** Directions (degrees) to the threats of a flight: scratch for pushFlight, sorted in place. */
const bearings = new Float64Array(TICK_LIMITS.maxTargets + 1);

function sortPrefix(xs: Float64Array, n: number): void {
  for (let i = 1; i < n; i++) {
    const v = xs[i]!;
    let j = i - 1;
    while (j >= 0 && xs[j]! > v) {
      xs[j + 1] = xs[j]!;
      j--;
    }
    xs[j + 1] = v;
  }
}

/** The smallest angle between two bearings in degrees, 0..180. */
function turn(a: number, b: number): number {
  const d = rem(Math.abs(a - b), 360);
  return d > 180 ? 360 - d : d;
}

/**
 * Flee through the middle of the widest opening between the threats (every visible hostile,
 * or the last contact when none is in sight), so no bearing runs within 90 degrees of one;
 * when blocked, the sides of that way in turn (FLEE_SIDES_DEG); with no opening wider than a
 * half-circle, or every side tried, the character hides where it is. Returns false when it hides.
 */
export function pushFlight(
  out: Intent[],
  a: AgentState,
  st: SelfState,
  targets: readonly Target[],
  from: number,
  dt: number,
  sq: Squad | null,
  time: number,
): boolean {
  const pos = st.pos;
  let n = 0;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    // A body (health 0) is no threat to run from, as in perception.
    if (!t.hostile || !t.visible || (t.health !== undefined && t.health <= 0) || distH(pos.x, pos.z, t.pos.x, t.pos.z) < 1e-6) continue;
    bearings[n++] = yawTo(pos.x, pos.z, t.pos.x, t.pos.z);
  }
  let mid: number;
  let half: number;
  if (n === 0 && a.detourZ < 90) {
    // Out of sight after fleeing several threats: the opening between them as last seen, not the
    // one contact remembered (a way out of that one alone may lead toward another).
    mid = a.detourX;
    half = a.detourZ;
  } else if (n === 0 && distH(pos.x, pos.z, a.contactX, a.contactZ) > 1e-6) {
    mid = rem(yawTo(pos.x, pos.z, a.contactX, a.contactZ) + 180, 360);
    half = 90;
  } else if (n === 0) {
    mid = rem(st.heading_deg + 180, 360);
    half = 90;
  } else {
    sortPrefix(bearings, n);
    let gap = bearings[0]! + 360 - bearings[n - 1]!;
    let start = bearings[n - 1]!;
    for (let i = 1; i < n; i++) {
      const g = bearings[i]! - bearings[i - 1]!;
      if (g > gap) {
        gap = g;
        start = bearings[i - 1]!;
      }
    }
    mid = rem(start + gap / 2, 360);
    half = gap / 2 - 90;
    // The detour's point is free while fleeing (a goal or patrol starts its detour watch afresh
    // after a flight): it keeps the opening between several threats for the ticks they are out
    // of sight. With one, the contact stands for it.
    if (n > 1) {
      a.detourX = mid;
      a.detourZ = half;
    }
  }
  let way = mid;
  if (sq !== null && sq.members.size > 1) {
    // One squad, one way out: the squad's fresh bearing, when it also leads away from this member's threats, is taken as it is.
    const fresh = time - sq.fleeT <= SQUAD_BEARING_S;
    const shared = yawTo(0, 0, sq.fleeX, sq.fleeZ);
    if (fresh && Math.cos(((shared - mid) * Math.PI) / 180) >= SHARED_BEARING_COS && turn(shared, mid) < half - FLEE_MARGIN_DEG) way = shared;
    else if (!fresh) {
      const r = (mid * Math.PI) / 180;
      sq.fleeX = Math.sin(r);
      sq.fleeZ = Math.cos(r);
      sq.fleeT = time;
    }
  }
  // fleeBend keeps the side being tried, in degrees (HIDING once none is left); any other value, as a state file
  // of an older brain may hold, starts the sides afresh.
  let k = a.fleeBend === HIDING ? FLEE_SIDES_DEG.length : FLEE_SIDES_DEG.indexOf(a.fleeBend);
  if (k < 0) k = 0;
  // Blocked: running this way for BLOCKED_WINDOW_S and hardly moved since it was taken. The progress watch's
  // anchor (progT, progX, progZ) is free while fleeing: a goal or a patrol starts its own watch afresh after a flight.
  if (dt <= 0 || a.mode !== 'fleeing') {
    a.progT = time;
    a.progX = pos.x;
    a.progZ = pos.z;
  } else if (time - a.progT >= BLOCKED_WINDOW_S) {
    if (distH(pos.x, pos.z, a.progX, a.progZ) < BLOCKED_MPS * (time - a.progT)) k++;
    a.progT = time;
    a.progX = pos.x;
    a.progZ = pos.z;
  }
  while (k < FLEE_SIDES_DEG.length && turn(way + FLEE_SIDES_DEG[k]!, mid) >= half - FLEE_MARGIN_DEG) k++;
  a.fleeBend = k < FLEE_SIDES_DEG.length ? FLEE_SIDES_DEG[k]! : HIDING;
  out.push({ kind: 'Flee', from });
  if (k >= FLEE_SIDES_DEG.length) return false;
  const r = ((way + FLEE_SIDES_DEG[k]!) * Math.PI) / 180;
  out.push({ kind: 'MoveTo', to: vec(pos.x + Math.sin(r) * FLEE_STEP_M, pos.y, pos.z + Math.cos(r) * FLEE_STEP_M), speed: 'sprint' });
  return true;
}

export function startFlight(a: AgentState, time: number, from: number): void {
  a.fleeT = time;
  a.fleeBend = 0;
  // No opening between several threats seen yet in this flight (see pushFlight).
  a.detourZ = 90;
  a.fledId = from;
}

/**
 * Whether a flight under way with no hostile in sight goes on: until its least length has
 * passed, and after that until the character is its clear distance from where it last saw
 * the contact (at most twice the least length).
 */
export function flightGoesOn(a: AgentState, x: number, z: number, time: number): boolean {
  if (a.mode !== 'fleeing') return false;
  const min = fleeMinS(a);
  const clear = a.fleeClear;
  return time - a.fleeT < min || (time - a.fleeT < 2 * min && distH(x, z, a.contactX, a.contactZ) < clear);
}

// ---- investigation ----

/** Contacts are remembered for CONTACT_MEMORY_S at most, less the farther they are: not at all from this far. */
export const CONTACT_FORGET_M = 150;
/** Healthy investigators jog until this near the spot, then go crouched. */
export const CAUTIOUS_M = 30;
/** Within this of the spot the character searches it (SEARCH_MIN_S..SEARCH_MAX_S). */
export const SEARCH_RADIUS_M = 3;
export const SEARCH_MIN_S = 10;
export const SEARCH_MAX_S = 20;
/** An investigation is given up after this long. */
export const INVESTIGATE_MAX_S = 120;
/**
 * A healthy character goes to look where a hostile it saw itself went out of sight only when
 * at least this brave (the wounded always do, the timid never): curiosity that looks meant,
 * not a crowd converging.
 */
export const SEEK_BRAVERY = 0.55;
/** At most this many members of a squad investigate one contact. */
export const MAX_INVESTIGATORS = 2;

/** How long a contact seen `dist` metres away is worth investigating. */
export function contactMemoryS(baseS: number, dist: number): number {
  const k = 1 - dist / CONTACT_FORGET_M;
  return k <= 0 ? 0 : baseS * k;
}

/**
 * One tick of an investigation: jog (healthy, while far) or walk (the caller crouches) to the
 * spot, then search it. Returns the speed moved at, 'search' while searching the spot, or
 * null when the search is over (the contact is then forgotten).
 */
export function pushSearch(out: Intent[], a: AgentState, x: number, z: number, time: number, wounded: boolean): Speed | 'search' | null {
  if (a.mode !== 'investigating') {
    a.invT = time;
    a.searchT = -1e9;
  }
  const at = vec(a.contactX, a.contactY, a.contactZ);
  const d = distH(x, z, a.contactX, a.contactZ);
  if (d <= SEARCH_RADIUS_M || a.searchT > 0) {
    if (a.searchT < 0) a.searchT = time;
    if (time - a.searchT >= SEARCH_MIN_S + (SEARCH_MAX_S - SEARCH_MIN_S) * noise(a.id, 2)) {
      a.contact = false;
      return null;
    }
    out.push({ kind: 'Investigate', at });
    out.push({ kind: 'Idle', reason: 'searching' });
    return 'search';
  }
  const speed: Speed = !wounded && d > CAUTIOUS_M ? 'jog' : 'walk';
  out.push({ kind: 'Investigate', at });
  out.push({ kind: 'MoveTo', to: at, speed });
  return speed;
}

// ---- pauses and detours ----

/**
 * A patrol stops at a waypoint for PAUSE_MIN_S..PAUSE_MAX_S (looking around), at most once
 * every PAUSE_GAP_S and not in a session's first PAUSE_GAP_S: a guard who stops now and then,
 * not a shuttle, nor one who stops at every post.
 */
export const PAUSE_MIN_S = 2;
export const PAUSE_MAX_S = 8;
export const PAUSE_GAP_S = 30;

/** Whether the character stands at its current waypoint now (a pause begun or under way). */
export function pausedAtWaypoint(a: AgentState, pos: Vec3, route: readonly Vec3[], time: number): boolean {
  if (time < a.pauseUntil) return standing(a, pos, time);
  const wp = route[a.waypoint >= 0 && a.waypoint < route.length ? a.waypoint : 0]!;
  if (distH(pos.x, pos.z, wp.x, wp.z) > ARRIVAL_M || time - a.pausedT < PAUSE_GAP_S || time - a.firstT < PAUSE_GAP_S) return false;
  a.pausedT = time;
  a.pauseUntil = time + PAUSE_MIN_S + (PAUSE_MAX_S - PAUSE_MIN_S) * noise(a.id, time);
  return standing(a, pos, time);
}

/** Standing on purpose is not being stuck: the progress watch starts again from here. */
function standing(a: AgentState, pos: Vec3, time: number): true {
  a.progT = time;
  a.progX = pos.x;
  a.progZ = pos.z;
  return true;
}

/**
 * A character on its way somewhere that has gained less than PROGRESS_M in NO_PROGRESS_S (a
 * wall, a fence, a corner) steps DETOUR_M aside for DETOUR_S and tries again; stuck again
 * within GIVE_UP_S of a detour, it gives the destination up.
 */
export const NO_PROGRESS_S = 10;
export const PROGRESS_M = 2;
export const DETOUR_S = 5;
export const DETOUR_M = 15;
export const GIVE_UP_S = 2 * NO_PROGRESS_S + DETOUR_S;

/**
 * Watches progress toward (tx, tz). Pushes a MoveTo and returns 'detour' while a detour is
 * under way, returns 'give_up' when the destination is to be dropped, and null to go on as
 * planned. `going` says the character was already on its way last tick (else the watch starts afresh).
 */
export function detour(
  out: Intent[],
  a: AgentState,
  pos: Vec3,
  tx: number,
  tz: number,
  speed: Speed,
  time: number,
  going: boolean,
): 'detour' | 'give_up' | null {
  if (!going) {
    a.detourUntil = -1e9;
    a.progT = time;
    a.progX = pos.x;
    a.progZ = pos.z;
    return null;
  }
  if (time < a.detourUntil) {
    out.push({ kind: 'MoveTo', to: vec(a.detourX, pos.y, a.detourZ), speed });
    return 'detour';
  }
  if (distH(pos.x, pos.z, a.progX, a.progZ) > PROGRESS_M) {
    a.progT = time;
    a.progX = pos.x;
    a.progZ = pos.z;
    return null;
  }
  if (time - a.progT < NO_PROGRESS_S) return null;
  a.progT = time;
  if (time - a.detourUntil < GIVE_UP_S) return 'give_up';
  // Sideways to the way it was going, to the side its own noise picks.
  const d = distH(pos.x, pos.z, tx, tz) || 1;
  const side = noise(a.id, time) < 0.5 ? -1 : 1;
  a.detourX = pos.x + (side * -(tz - pos.z) * DETOUR_M) / d;
  a.detourZ = pos.z + (side * (tx - pos.x) * DETOUR_M) / d;
  a.detourUntil = time + DETOUR_S;
  out.push({ kind: 'MoveTo', to: vec(a.detourX, pos.y, a.detourZ), speed });
  return 'detour';
}

// ---- alive when idle ----

/** Glances every GLANCE_MIN_S..GLANCE_MAX_S, each held for LOOK_S. */
export const GLANCE_MIN_S = 3;
export const GLANCE_MAX_S = 10;
const LOOK_S = 1.5;
/** A heard line from a perceived target turns the character toward the speaker for this long. */
export const TURN_HOLD_S = 2;
/** Ambient emotes (greetings, stretches, nods) come every AMBIENT_MIN_S..AMBIENT_MAX_S: 2.4 to 7.5 an hour, about 4 on average. */
export const AMBIENT_MIN_S = 480;
export const AMBIENT_MAX_S = 1500;
/**
 * A line heard from a known speaker is acknowledged at once (a nod, a wave, a shrug) when the
 * character has not emoted for this long: a player who speaks to a character sees it answer,
 * and the acknowledgement takes the ambient emote's place (the next one is drawn from it), so
 * a talkative player cannot raise a character's emotes past one per ANSWER_GAP_S.
 */
export const ANSWER_GAP_S = 1200;
/** Session wind-down: the last WIND_DOWN_MIN_S..WIND_DOWN_MAX_S (per character) are spent standing still. */
export const WIND_DOWN_MIN_S = 10;
export const WIND_DOWN_MAX_S = 30;

export function newRhythm(a: AgentState, time: number): void {
  a.glanceT = time + GLANCE_MIN_S + (GLANCE_MAX_S - GLANCE_MIN_S) * noise(a.id, 3);
  a.nextEmoteT = time + AMBIENT_MIN_S + (AMBIENT_MAX_S - AMBIENT_MIN_S) * noise(a.id, 4);
}

export function windingDown(a: AgentState, time: number): boolean {
  let wind = a.windS;
  if (wind !== wind) wind = a.windS = WIND_DOWN_MIN_S + (WIND_DOWN_MAX_S - WIND_DOWN_MIN_S) * noise(a.id, 5);
  return time - a.firstT >= a.sessionS - wind;
}

/** Turns toward the speaker of a new line heard from a target the character perceives. Returns whether one was heard. */
export function hear(a: AgentState, lines: readonly HeardSpeech[] | undefined, targets: readonly Target[], pos: Vec3, time: number): boolean {
  if (lines === undefined) return false;
  let turned = false;
  for (let i = 0; i < lines.length; i++) {
    const h = lines[i]!;
    if (h.at_s <= a.heardT || h.at_s > time + HEARD_AHEAD_S || (h.from === a.id && !hasTarget(targets, h.from))) continue;
    a.heardT = h.at_s;
    for (let j = 0; j < targets.length; j++) {
      const t = targets[j]!;
      if (t.id !== h.from) continue;
      a.faceYaw = yawTo(pos.x, pos.z, t.pos.x, t.pos.z);
      a.faceUntil = time + TURN_HOLD_S;
      turned = true;
    }
  }
  return turned;
}

/** Adds the look of the moment: a turn toward a speaker, or a glance around every few seconds. */
export function pushLook(out: Intent[], a: AgentState, heading: number, time: number): void {
  if (time >= a.faceUntil && time >= a.glanceT) {
    a.faceYaw = rem(heading + 40 + 280 * noise(a.id, time), 360);
    a.faceUntil = time + LOOK_S;
    a.glanceT = time + GLANCE_MIN_S + (GLANCE_MAX_S - GLANCE_MIN_S) * noise(a.id + 7, time);
  }
  if (time < a.faceUntil) out.push({ kind: 'Face', yaw_deg: cm(a.faceYaw) });
}

/**
 * The ambient emote due now, or null: a greeting to someone friendly in sight, an answer to a
 * line just heard (due at once when none came for ANSWER_GAP_S), else a stretch or a shrug;
 * each drawn per occasion.
 */
export function ambientEmote(a: AgentState, time: number, greet: boolean, heard: boolean): string | null {
  if (time < a.nextEmoteT && !(heard && time - a.lastEmoteT >= ANSWER_GAP_S)) return null;
  a.nextEmoteT = time + AMBIENT_MIN_S + (AMBIENT_MAX_S - AMBIENT_MIN_S) * noise(a.id, time);
  a.lastEmoteT = time;
  // A greeting is a wave or a nod, as the moment draws it.
  if (greet) return noise(a.id + 6, time) < 0.55 ? 'wave' : 'nod';
  // A line heard is answered with a nod, a wave back, or a shrug from one with nothing to say.
  if (heard) {
    const pick = noise(a.id + 7, time);
    return pick < 0.4 ? 'nod' : pick < 0.7 ? 'wave' : 'shrug';
  }
  // Alone: a stretch or a shrug, drawn each time (the calm stretch more often), so no one gesture is everyone's.
  return noise(a.id + 5, time) < 0.3 + 0.4 * a.calm ? 'stretch' : 'shrug';
}

/** Odds of an emote of fear or anger once EMOTE_GAP_S has passed, per tick, in a fight or a flight. */
const HEAT_ODDS = 0.3;

/**
 * An emote of a fight or a flight (human factors on), or null: the frightened panic, wave for
 * help or point back at what chases them; the angry taunt or point at their target. Which one
 * is drawn each time, so a squad under fire is not one gesture repeated.
 */
export function heatEmote(a: AgentState, time: number, fleeing: boolean, engaging: boolean, gapS: number): string | null {
  if (time - a.lastEmoteT < gapS) return null;
  const scared = fleeing && a.fear > 0.6;
  const angry = engaging && a.anger > 0.6;
  if (!scared && !angry) return null;
  if (noise(a.id + 8, time) >= HEAT_ODDS) return null;
  a.lastEmoteT = time;
  const pick = noise(a.id + 9, time);
  if (scared) return pick < 0.45 ? 'panic' : pick < 0.8 ? 'wave' : 'point';
  return pick < 0.6 ? 'taunt' : 'point';
}

/** A friendly character (player or AI) within greeting range. */
export function friendNear(pos: Vec3, targets: readonly Target[], range: number): boolean {
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    if (!t.hostile && t.visible && (t.kind === 'player' || t.kind === 'ai') && distH(pos.x, pos.z, t.pos.x, t.pos.z) <= range) return true;
  }
  return false;
}
