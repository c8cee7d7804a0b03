/**
 * The numeric fields of an agent's state, in one table: their order in `AgentState.num`, the
 * check their persisted value gets, the value a new character starts with, and the state
 * layout that added them. The accessors (`a.fear`), NUM_FIELDS, the persisted schema and the
 * defaults a layout-1 file loads with are all derived from it, so a field is added in one
 * line. The order is the order of `AgentState.num` and of each agent's numbers in an exported
 * state: append new fields at the end.
 */

/** How a persisted number is checked: any finite number, a safe integer, or within [0, 1]. */
export type NumCheck = 'num' | 'int' | 'unit';

export interface NumFieldSpec {
  readonly check: NumCheck;
  /** The value a new character starts with (and a character loaded from an older layout). */
  readonly initial: number;
  /** The state layout that added the field. */
  readonly layout: 1 | 2 | 3 | 4 | 5;
}

/** "Long ago": a clock that has never run. */
const NEVER = -1e9;

function field(check: NumCheck, initial = 0, layout: NumFieldSpec['layout'] = 1): NumFieldSpec {
  return { check, initial, layout };
}
/** A field of state layout 2 (the believable-behaviour clocks, see conduct.ts): a layout-1 file loads it at `initial`, nothing under way. */
function layout2(initial: number): NumFieldSpec {
  return field('num', initial, 2);
}
/** A field of state layout 3 (waypoint pauses and the no-progress detour, see conduct.ts): an older file loads it at `initial`, nothing under way. */
function layout3(initial: number): NumFieldSpec {
  return field('num', initial, 3);
}

/** A field of state layout 4 (squads that stay together, see brain.ts and squads.ts): an older file loads it at `initial`, nothing under way. */
function layout4(initial: number): NumFieldSpec {
  return field('num', initial, 4);
}

/** A field of state layout 5 (a profile's coward flag kept once given): an older file loads it at `initial`. */
function layout5(check: NumCheck, initial: number): NumFieldSpec {
  return field(check, initial, 5);
}

export const NUM_FIELD_TABLE = {
  /** PRNG state word (a uint32; kept as a double so it never boxes). */
  rng: field('int'),
  firstT: field('num'),
  lastT: field('num'),
  sessionS: field('num'),
  health: field('num', 100),
  blood: field('num', 5000),
  x: field('num'),
  y: field('num'),
  z: field('num'),
  contactX: field('num'),
  contactY: field('num'),
  contactZ: field('num'),
  contactT: field('num'),
  fatigue: field('unit'),
  afkUntil: field('num'),
  goalX: field('num'),
  goalY: field('num'),
  goalZ: field('num'),
  goalT: field('num'),
  anchorX: field('num'),
  anchorY: field('num'),
  anchorZ: field('num'),
  fear: field('unit'),
  anger: field('unit'),
  calm: field('unit', 0.5),
  lastEmoteT: field('num', NEVER),
  engagedPlayerT: field('num', NEVER),
  /** Game time memory last sampled the targets. */
  memT: field('num', NEVER),
  // Derived from traits by temper() whenever traits change, and read by the per-tick code instead of the traits object.
  nrv: field('unit'),
  agr: field('unit'),
  brave: field('unit'),
  social: field('unit'),
  careful: field('unit'),
  afkP: field('unit'),
  brkP: field('unit'),
  fatR: field('unit'),
  engT: layout2(NEVER),
  engTarget: layout2(-1),
  fireT: layout2(NEVER),
  fireTarget: layout2(-1),
  faceYaw: layout2(0),
  faceUntil: layout2(NEVER),
  glanceT: layout2(0),
  nextEmoteT: layout2(0),
  heardT: layout2(NEVER),
  fleeT: layout2(NEVER),
  fleeBend: layout2(0),
  fledId: layout2(-1),
  fledT: layout2(NEVER),
  invT: layout2(NEVER),
  searchT: layout2(NEVER),
  pauseUntil: layout3(NEVER),
  pausedT: layout3(NEVER),
  progT: layout3(NEVER),
  progX: layout3(0),
  progZ: layout3(0),
  detourUntil: layout3(NEVER),
  detourX: layout3(0),
  detourZ: layout3(0),
  /** When the squad's leader found itself beyond the leash (NEVER while within it). */
  strayT: layout4(NEVER),
  /** `profile.coward` as last given: 1 a coward, 0 not said or said false (a tick that leaves it out keeps it, as name, role and traits are kept). */
  cowardFlag: layout5('unit', 0),
} as const satisfies Record<string, NumFieldSpec>;

export type NumField = keyof typeof NUM_FIELD_TABLE;

/** The numeric fields, in the order of `AgentState.num`. */
export const NUM_FIELDS = Object.keys(NUM_FIELD_TABLE) as readonly NumField[];

/**
 * The fields added after state layout `layout`, each at the value a character loaded from a
 * file of that layout starts with (nothing under way).
 */
export function fieldsAddedAfter(layout: number): Readonly<Partial<Record<NumField, number>>> {
  return Object.fromEntries(NUM_FIELDS.filter((name) => NUM_FIELD_TABLE[name].layout > layout).map((name) => [name, NUM_FIELD_TABLE[name].initial]));
}

/**
 * Per-character values the tick would otherwise recompute from noise() every tick (conduct.ts,
 * squads.ts, the squad follow): kept in `AgentState.num` after the persisted fields, never
 * exported. Each starts NaN and is worked out on first use, so an agent made by an import gets
 * the same values a fresh one does. The `…For` fields hold what a value was worked out for (a
 * flight's start, a target, a callout's time): a different key means work it out again.
 */
export const CACHE_FIELDS = [
  /** windingDown()'s wind-down length. */
  'windS',
  /** pushManoeuvre()'s reposition window. */
  'repoS',
  /** The squad follow's offset from the leader. */
  'followDX',
  'followDZ',
  /** fleeMinS()'s noise and flightGoesOn()'s clear distance, for the flight that started at fleeFor. */
  'fleeN',
  'fleeClear',
  'fleeFor',
  /** acquireDelay()'s noise for target acqFor. */
  'acqN',
  'acqFor',
  /** heedDelay()'s noise for the callout made at heedFor. */
  'heedN',
  'heedFor',
] as const;

export type CacheField = (typeof CACHE_FIELDS)[number];

/** A new character's numbers, copied into its `num` at once: the persisted fields, then the caches (NaN, not worked out yet). */
export const INITIAL_NUMS: Readonly<Float64Array> = Float64Array.from([
  ...NUM_FIELDS.map((name) => NUM_FIELD_TABLE[name].initial),
  ...CACHE_FIELDS.map(() => NaN),
]);
