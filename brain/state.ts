import { CONTACT_KINDS, EVENT_KINDS, MEMORY_CAPS, memoryFromPlain, memoryToPlain } from './memory-block.js';
import { ROLES, type Role, type Traits } from './types.js';

export { MEMORY_CAPS } from './memory-block.js';

/** Per-agent state and the shape it is persisted in. */

/** What the roster shows a character doing. */
export const MODES = [
  'idle',
  'patrolling',
  'engaging',
  'fleeing',
  'investigating',
  'traveling',
  'roaming',
  'guarding',
  'regrouping',
  'afk',
  'on_break',
  'logged_off',
  'dead',
] as const;
export type Mode = (typeof MODES)[number];

export const GOALS = ['none', 'find_water', 'find_food', 'find_medical', 'loot', 'guard', 'roam', 'regroup'] as const;
export type Goal = (typeof GOALS)[number];

export interface ContactMemory {
  target: number;
  kind: string;
  x: number;
  y: number;
  z: number;
  t: number;
  hostile: boolean;
}

export interface PlayerMemory {
  id: number;
  /** Empty unless the bundle allows player names in speech (phrase_cache.allow_player_names). */
  name: string;
  first_s: number;
  last_s: number;
  meetings: number;
}

export interface HeardMemory {
  from: number;
  text: string;
  at_s: number;
}

export interface EventMemory {
  kind: string;
  t: number;
  ref: number;
}

/**
 * The JSON form of an agent's memory (the agent keeps it as a MemoryBlock, see
 * memory-block.ts): bounded rings that grow to their cap once, then the oldest slot is
 * overwritten in place.
 */
export interface Memory {
  contacts: ContactMemory[];
  contactsNext: number;
  players: PlayerMemory[];
  heard: HeardMemory[];
  heardNext: number;
  heardLast_s: number;
  events: EventMemory[];
  eventsNext: number;
}

/**
 * The numeric fields, in the order of `AgentState.num`. They live in one Float64Array rather
 * than as object fields because V8 (with pointer compression) boxes every double-valued field
 * in its own heap number: a tick reading twenty of them chased twenty pointers across the
 * heap. Here they share a few cache lines; the accessors keep call sites reading `a.fear`.
 */
export const NUM_FIELDS = [
  'rng',
  'firstT',
  'lastT',
  'sessionS',
  'health',
  'blood',
  'x',
  'y',
  'z',
  'contactX',
  'contactY',
  'contactZ',
  'contactT',
  'fatigue',
  'afkUntil',
  'goalX',
  'goalY',
  'goalZ',
  'goalT',
  'anchorX',
  'anchorY',
  'anchorZ',
  'fear',
  'anger',
  'calm',
  'lastEmoteT',
  'engagedPlayerT',
  'memT',
  'nrv',
  'agr',
  'brave',
  'social',
  'careful',
  'afkP',
  'brkP',
  'fatR',
  'engT',
  'engTarget',
  'fireT',
  'fireTarget',
  'faceYaw',
  'faceUntil',
  'glanceT',
  'nextEmoteT',
  'heardT',
  'fleeT',
  'fleeBend',
  'fledId',
  'fledT',
  'invT',
  'searchT',
  'pauseUntil',
  'pausedT',
  'progT',
  'progX',
  'progZ',
  'detourUntil',
  'detourX',
  'detourZ',
] as const;
export type NumField = (typeof NUM_FIELDS)[number];

/**
 * The fields added in state layout 2 (the believable-behaviour clocks, see conduct.ts), with
 * the value a character loaded from a layout-1 file starts with: nothing under way.
 */
export const LAYOUT_2_DEFAULTS: Readonly<Partial<Record<NumField, number>>> = {
  engT: -1e9,
  engTarget: -1,
  fireT: -1e9,
  fireTarget: -1,
  faceYaw: 0,
  faceUntil: -1e9,
  glanceT: 0,
  nextEmoteT: 0,
  heardT: -1e9,
  fleeT: -1e9,
  fleeBend: 0,
  fledId: -1,
  fledT: -1e9,
  invT: -1e9,
  searchT: -1e9,
};

/**
 * The fields added in state layout 3 (waypoint pauses and the no-progress detour, see
 * conduct.ts), with the value a character loaded from an older file starts with: nothing under way.
 */
export const LAYOUT_3_DEFAULTS: Readonly<Partial<Record<NumField, number>>> = {
  pauseUntil: -1e9,
  pausedT: -1e9,
  progT: -1e9,
  progX: 0,
  progZ: 0,
  detourUntil: -1e9,
  detourX: 0,
  detourZ: 0,
};

export const VISITED_CAP = 4;

/**
 * One character's state. Nothing in it refers to another agent or to the Brain (squads refer
 * to agents, never the reverse). Optional positions are flag + three numbers rather than
 * objects so that a tick updates them without allocating. `nrv` … `fatR` are derived from
 * traits by temper() whenever traits change, and read by the per-tick code instead of the
 * traits object. toPlain()/fromPlain() convert to and from the JSON form that exportState
 * writes and STATE_SCHEMA checks.
 */
export class AgentState {
  readonly num = new Float64Array(NUM_FIELDS.length);
  name = '';
  role: Role = 'survivor';
  themes: string[] = [];
  ticks = 0;
  /** Last hostile actually seen (own sighting or a squadmate's), for Investigate. */
  contact = false;
  contactId = 0;
  contactShared = false;
  sawHostile = false;
  waypoint = 0;
  mode: Mode = 'idle';
  afkReason: '' | 'afk' | 'break' = '';
  loggedOff = false;
  goal: Goal = 'none';
  goalPoi = '';
  goalHas = false;
  visited: string[] = [];
  visitedNext = 0;
  anchor = false;
  squad = '';
  lossSeq = 0;
  /** Memory's numbers (memory-block.ts layout); null until memory first has something to keep, or while the policy is off. */
  mem: Float64Array | null = null;
  /** Player names by memory slot; null while none is kept. */
  memNames: string[] | null = null;
  /** Lines heard by memory slot; null while none is kept. */
  memTexts: string[] | null = null;

  constructor(
    readonly id: number,
    rng: number,
    time: number,
    public traits: Traits,
  ) {
    this.rng = rng;
    this.firstT = time;
    this.lastT = time;
    this.health = 100;
    this.blood = 5000;
    this.calm = 0.5;
    this.lastEmoteT = -1e9;
    this.engagedPlayerT = -1e9;
    this.memT = -1e9;
    for (const [k, v] of Object.entries(LAYOUT_2_DEFAULTS)) this.num[NUM_FIELDS.indexOf(k as NumField)] = v;
    for (const [k, v] of Object.entries(LAYOUT_3_DEFAULTS)) this.num[NUM_FIELDS.indexOf(k as NumField)] = v;
  }

  /** PRNG state word (a uint32; kept as a double so it never boxes). */

  get rng(): number {
    return this.num[0]!;
  }
  set rng(v: number) {
    this.num[0] = v;
  }

  get firstT(): number {
    return this.num[1]!;
  }
  set firstT(v: number) {
    this.num[1] = v;
  }

  get lastT(): number {
    return this.num[2]!;
  }
  set lastT(v: number) {
    this.num[2] = v;
  }

  get sessionS(): number {
    return this.num[3]!;
  }
  set sessionS(v: number) {
    this.num[3] = v;
  }

  get health(): number {
    return this.num[4]!;
  }
  set health(v: number) {
    this.num[4] = v;
  }

  get blood(): number {
    return this.num[5]!;
  }
  set blood(v: number) {
    this.num[5] = v;
  }

  get x(): number {
    return this.num[6]!;
  }
  set x(v: number) {
    this.num[6] = v;
  }

  get y(): number {
    return this.num[7]!;
  }
  set y(v: number) {
    this.num[7] = v;
  }

  get z(): number {
    return this.num[8]!;
  }
  set z(v: number) {
    this.num[8] = v;
  }

  get contactX(): number {
    return this.num[9]!;
  }
  set contactX(v: number) {
    this.num[9] = v;
  }

  get contactY(): number {
    return this.num[10]!;
  }
  set contactY(v: number) {
    this.num[10] = v;
  }

  get contactZ(): number {
    return this.num[11]!;
  }
  set contactZ(v: number) {
    this.num[11] = v;
  }

  get contactT(): number {
    return this.num[12]!;
  }
  set contactT(v: number) {
    this.num[12] = v;
  }

  get fatigue(): number {
    return this.num[13]!;
  }
  set fatigue(v: number) {
    this.num[13] = v;
  }

  get afkUntil(): number {
    return this.num[14]!;
  }
  set afkUntil(v: number) {
    this.num[14] = v;
  }

  get goalX(): number {
    return this.num[15]!;
  }
  set goalX(v: number) {
    this.num[15] = v;
  }

  get goalY(): number {
    return this.num[16]!;
  }
  set goalY(v: number) {
    this.num[16] = v;
  }

  get goalZ(): number {
    return this.num[17]!;
  }
  set goalZ(v: number) {
    this.num[17] = v;
  }

  get goalT(): number {
    return this.num[18]!;
  }
  set goalT(v: number) {
    this.num[18] = v;
  }

  get anchorX(): number {
    return this.num[19]!;
  }
  set anchorX(v: number) {
    this.num[19] = v;
  }

  get anchorY(): number {
    return this.num[20]!;
  }
  set anchorY(v: number) {
    this.num[20] = v;
  }

  get anchorZ(): number {
    return this.num[21]!;
  }
  set anchorZ(v: number) {
    this.num[21] = v;
  }

  get fear(): number {
    return this.num[22]!;
  }
  set fear(v: number) {
    this.num[22] = v;
  }

  get anger(): number {
    return this.num[23]!;
  }
  set anger(v: number) {
    this.num[23] = v;
  }

  get calm(): number {
    return this.num[24]!;
  }
  set calm(v: number) {
    this.num[24] = v;
  }

  get lastEmoteT(): number {
    return this.num[25]!;
  }
  set lastEmoteT(v: number) {
    this.num[25] = v;
  }

  get engagedPlayerT(): number {
    return this.num[26]!;
  }
  set engagedPlayerT(v: number) {
    this.num[26] = v;
  }

  /** Game time memory last sampled the targets. */

  get memT(): number {
    return this.num[27]!;
  }
  set memT(v: number) {
    this.num[27] = v;
  }

  get nrv(): number {
    return this.num[28]!;
  }
  set nrv(v: number) {
    this.num[28] = v;
  }

  get agr(): number {
    return this.num[29]!;
  }
  set agr(v: number) {
    this.num[29] = v;
  }

  get brave(): number {
    return this.num[30]!;
  }
  set brave(v: number) {
    this.num[30] = v;
  }

  get social(): number {
    return this.num[31]!;
  }
  set social(v: number) {
    this.num[31] = v;
  }

  get careful(): number {
    return this.num[32]!;
  }
  set careful(v: number) {
    this.num[32] = v;
  }

  get afkP(): number {
    return this.num[33]!;
  }
  set afkP(v: number) {
    this.num[33] = v;
  }

  get brkP(): number {
    return this.num[34]!;
  }
  set brkP(v: number) {
    this.num[34] = v;
  }

  get fatR(): number {
    return this.num[35]!;
  }
  set fatR(v: number) {
    this.num[35] = v;
  }

  get engT(): number {
    return this.num[36]!;
  }
  set engT(v: number) {
    this.num[36] = v;
  }

  get engTarget(): number {
    return this.num[37]!;
  }
  set engTarget(v: number) {
    this.num[37] = v;
  }

  get fireT(): number {
    return this.num[38]!;
  }
  set fireT(v: number) {
    this.num[38] = v;
  }

  get fireTarget(): number {
    return this.num[39]!;
  }
  set fireTarget(v: number) {
    this.num[39] = v;
  }

  get faceYaw(): number {
    return this.num[40]!;
  }
  set faceYaw(v: number) {
    this.num[40] = v;
  }

  get faceUntil(): number {
    return this.num[41]!;
  }
  set faceUntil(v: number) {
    this.num[41] = v;
  }

  get glanceT(): number {
    return this.num[42]!;
  }
  set glanceT(v: number) {
    this.num[42] = v;
  }

  get nextEmoteT(): number {
    return this.num[43]!;
  }
  set nextEmoteT(v: number) {
    this.num[43] = v;
  }

  get heardT(): number {
    return this.num[44]!;
  }
  set heardT(v: number) {
    this.num[44] = v;
  }

  get fleeT(): number {
    return this.num[45]!;
  }
  set fleeT(v: number) {
    this.num[45] = v;
  }

  get fleeBend(): number {
    return this.num[46]!;
  }
  set fleeBend(v: number) {
    this.num[46] = v;
  }

  get fledId(): number {
    return this.num[47]!;
  }
  set fledId(v: number) {
    this.num[47] = v;
  }

  get fledT(): number {
    return this.num[48]!;
  }
  set fledT(v: number) {
    this.num[48] = v;
  }

  get invT(): number {
    return this.num[49]!;
  }
  set invT(v: number) {
    this.num[49] = v;
  }

  get searchT(): number {
    return this.num[50]!;
  }
  set searchT(v: number) {
    this.num[50] = v;
  }

  get pauseUntil(): number {
    return this.num[51]!;
  }
  set pauseUntil(v: number) {
    this.num[51] = v;
  }

  get pausedT(): number {
    return this.num[52]!;
  }
  set pausedT(v: number) {
    this.num[52] = v;
  }

  get progT(): number {
    return this.num[53]!;
  }
  set progT(v: number) {
    this.num[53] = v;
  }

  get progX(): number {
    return this.num[54]!;
  }
  set progX(v: number) {
    this.num[54] = v;
  }

  get progZ(): number {
    return this.num[55]!;
  }
  set progZ(v: number) {
    this.num[55] = v;
  }

  get detourUntil(): number {
    return this.num[56]!;
  }
  set detourUntil(v: number) {
    this.num[56] = v;
  }

  get detourX(): number {
    return this.num[57]!;
  }
  set detourX(v: number) {
    this.num[57] = v;
  }

  get detourZ(): number {
    return this.num[58]!;
  }
  set detourZ(v: number) {
    this.num[58] = v;
  }
}

/** The JSON form of an agent: every field by name, numbers included. */
export type PlainAgent = { [K in NumField]: number } & {
  id: number;
  traits: Traits;
  name: string;
  role: Role;
  themes: string[];
  ticks: number;
  contact: boolean;
  contactId: number;
  contactShared: boolean;
  sawHostile: boolean;
  waypoint: number;
  mode: Mode;
  afkReason: '' | 'afk' | 'break';
  loggedOff: boolean;
  goal: Goal;
  goalPoi: string;
  goalHas: boolean;
  visited: string[];
  visitedNext: number;
  anchor: boolean;
  squad: string;
  lossSeq: number;
  mem: Memory | null;
};

/** A deep copy as plain JSON data. */
export function toPlain(a: AgentState): PlainAgent {
  const out = {
    id: a.id,
    traits: { ...a.traits },
    name: a.name,
    role: a.role,
    themes: [...a.themes],
    ticks: a.ticks,
    contact: a.contact,
    contactId: a.contactId,
    contactShared: a.contactShared,
    sawHostile: a.sawHostile,
    waypoint: a.waypoint,
    mode: a.mode,
    afkReason: a.afkReason,
    loggedOff: a.loggedOff,
    goal: a.goal,
    goalPoi: a.goalPoi,
    goalHas: a.goalHas,
    visited: [...a.visited],
    visitedNext: a.visitedNext,
    anchor: a.anchor,
    squad: a.squad,
    lossSeq: a.lossSeq,
    mem: a.mem === null ? null : memoryToPlain(a.mem, { names: a.memNames, texts: a.memTexts }),
  } as PlainAgent;
  for (let i = 0; i < NUM_FIELDS.length; i++) out[NUM_FIELDS[i]!] = a.num[i]!;
  return out;
}

/** Builds an agent from checked plain data (see STATE_SCHEMA), copying everything. */
export function fromPlain(p: PlainAgent): AgentState {
  const a = new AgentState(p.id, p.rng, p.firstT, { ...p.traits });
  for (let i = 0; i < NUM_FIELDS.length; i++) a.num[i] = p[NUM_FIELDS[i]!];
  a.name = p.name;
  a.role = p.role;
  a.themes = [...p.themes];
  a.ticks = p.ticks;
  a.contact = p.contact;
  a.contactId = p.contactId;
  a.contactShared = p.contactShared;
  a.sawHostile = p.sawHostile;
  a.waypoint = p.waypoint;
  a.mode = p.mode;
  a.afkReason = p.afkReason;
  a.loggedOff = p.loggedOff;
  a.goal = p.goal;
  a.goalPoi = p.goalPoi;
  a.goalHas = p.goalHas;
  a.visited = [...p.visited];
  a.visitedNext = p.visitedNext;
  a.anchor = p.anchor;
  a.squad = p.squad;
  a.lossSeq = p.lossSeq;
  if (p.mem !== null) {
    const m = memoryFromPlain(p.mem);
    a.mem = m.block;
    a.memNames = m.names;
    a.memTexts = m.texts;
  }
  return a;
}

// ---- the shape importState accepts ----

export type Field =
  | 'num'
  | 'int'
  | 'str'
  | 'bool'
  | { unit: true }
  | { intIn: readonly [number, number] }
  | { oneOf: readonly string[] }
  | { arr: Field; max: number }
  | { obj: Schema }
  | { nullable: Field };
export type Schema = Readonly<Record<string, Field>>;

const unit = { unit: true } as const;

const TRAITS_SCHEMA: Schema = {
  openness: unit,
  conscientiousness: unit,
  extraversion: unit,
  agreeableness: unit,
  neuroticism: unit,
  afk_proneness: unit,
  break_proneness: unit,
  fatigue_rate: unit,
};

/**
 * Kinds are the ones the brain writes and write positions lie within their ring: memory is
 * kept in fixed slots (memory-block.ts), and a position outside its ring would write over
 * another ring. Files written by the brain always satisfy both.
 */
const MEMORY_SCHEMA: Schema = {
  contacts: {
    arr: { obj: { target: 'int', kind: { oneOf: CONTACT_KINDS }, x: 'num', y: 'num', z: 'num', t: 'num', hostile: 'bool' } },
    max: MEMORY_CAPS.contacts,
  },
  contactsNext: { intIn: [0, MEMORY_CAPS.contacts - 1] },
  players: {
    arr: { obj: { id: 'int', name: 'str', first_s: 'num', last_s: 'num', meetings: 'int' } },
    max: MEMORY_CAPS.players,
  },
  heard: { arr: { obj: { from: 'int', text: 'str', at_s: 'num' } }, max: MEMORY_CAPS.heard },
  heardNext: { intIn: [0, MEMORY_CAPS.heard - 1] },
  heardLast_s: 'num',
  events: { arr: { obj: { kind: { oneOf: EVENT_KINDS }, t: 'num', ref: 'num' } }, max: MEMORY_CAPS.events },
  eventsNext: { intIn: [0, MEMORY_CAPS.events - 1] },
};

export const STATE_SCHEMA: Schema = {
  id: 'int',
  rng: 'int',
  name: 'str',
  role: { oneOf: ROLES },
  traits: { obj: TRAITS_SCHEMA },
  nrv: unit,
  agr: unit,
  brave: unit,
  social: unit,
  careful: unit,
  afkP: unit,
  brkP: unit,
  fatR: unit,
  themes: { arr: 'str', max: 256 },
  firstT: 'num',
  lastT: 'num',
  ticks: 'int',
  sessionS: 'num',
  health: 'num',
  blood: 'num',
  x: 'num',
  y: 'num',
  z: 'num',
  contact: 'bool',
  contactId: 'int',
  contactX: 'num',
  contactY: 'num',
  contactZ: 'num',
  contactT: 'num',
  contactShared: 'bool',
  sawHostile: 'bool',
  waypoint: 'int',
  mode: { oneOf: MODES },
  fatigue: unit,
  afkUntil: 'num',
  afkReason: { oneOf: ['', 'afk', 'break'] },
  loggedOff: 'bool',
  goal: { oneOf: GOALS },
  goalPoi: 'str',
  goalHas: 'bool',
  goalX: 'num',
  goalY: 'num',
  goalZ: 'num',
  goalT: 'num',
  visited: { arr: 'str', max: VISITED_CAP },
  visitedNext: 'int',
  anchor: 'bool',
  anchorX: 'num',
  anchorY: 'num',
  anchorZ: 'num',
  squad: 'str',
  lossSeq: 'int',
  fear: unit,
  anger: unit,
  calm: unit,
  lastEmoteT: 'num',
  engagedPlayerT: 'num',
  memT: 'num',
  engT: 'num',
  engTarget: 'num',
  fireT: 'num',
  fireTarget: 'num',
  faceYaw: 'num',
  faceUntil: 'num',
  glanceT: 'num',
  nextEmoteT: 'num',
  heardT: 'num',
  fleeT: 'num',
  fleeBend: 'num',
  fledId: 'num',
  fledT: 'num',
  invT: 'num',
  searchT: 'num',
  pauseUntil: 'num',
  pausedT: 'num',
  progT: 'num',
  progX: 'num',
  progZ: 'num',
  detourUntil: 'num',
  detourX: 'num',
  detourZ: 'num',
  mem: { nullable: { obj: MEMORY_SCHEMA } },
};
