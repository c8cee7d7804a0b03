import type { Role, Traits } from './types.js';

/**
 * Per-agent state. It is plain data on purpose (numbers, strings, booleans, arrays of plain
 * records): `exportState` copies it as it is, `importState` checks it against STATE_SCHEMA,
 * and nothing in it refers to another agent or to the Brain (squads refer to agents, never
 * the reverse). Optional positions are flag + three numbers rather than objects so that a
 * tick updates them without allocating.
 */

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

export const ROLES = ['survivor', 'bandit', 'guard', 'trader'] as const;

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

/** Bounded rings: arrays grow to their cap once, then the oldest slot is overwritten in place. */
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

export const MEMORY_CAPS = { contacts: 8, players: 12, heard: 6, events: 12, textChars: 120, nameChars: 32 } as const;

export interface AgentState {
  id: number;
  rng: number;
  name: string;
  role: Role;
  traits: Traits;
  /**
   * Derived from traits by temper() whenever traits change, and read by the per-tick code
   * instead of `traits`: one object fewer to pull into cache on every tick.
   */
  nrv: number;
  agr: number;
  brave: number;
  social: number;
  careful: number;
  afkP: number;
  brkP: number;
  fatR: number;
  themes: string[];
  firstT: number;
  lastT: number;
  ticks: number;
  sessionS: number;
  health: number;
  blood: number;
  x: number;
  y: number;
  z: number;
  /** Last hostile actually seen (own sighting or a squadmate's), for Investigate. */
  contact: boolean;
  contactId: number;
  contactX: number;
  contactY: number;
  contactZ: number;
  contactT: number;
  contactShared: boolean;
  sawHostile: boolean;
  waypoint: number;
  mode: Mode;
  fatigue: number;
  afkUntil: number;
  afkReason: '' | 'afk' | 'break';
  loggedOff: boolean;
  goal: Goal;
  goalPoi: string;
  goalHas: boolean;
  goalX: number;
  goalY: number;
  goalZ: number;
  goalT: number;
  visited: string[];
  visitedNext: number;
  anchor: boolean;
  anchorX: number;
  anchorY: number;
  anchorZ: number;
  squad: string;
  lossSeq: number;
  fear: number;
  anger: number;
  calm: number;
  lastEmoteT: number;
  engagedPlayerT: number;
  /** Game time memory last sampled the targets. */
  memT: number;
  mem: Memory | null;
}

export const VISITED_CAP = 4;

export function createAgent(id: number, rng: number, time: number, traits: Traits): AgentState {
  return {
    id,
    rng,
    name: '',
    role: 'survivor',
    traits,
    nrv: 0,
    agr: 0,
    brave: 0,
    social: 0,
    careful: 0,
    afkP: 0,
    brkP: 0,
    fatR: 0,
    themes: [],
    firstT: time,
    lastT: time,
    ticks: 0,
    sessionS: 0,
    health: 100,
    blood: 5000,
    x: 0,
    y: 0,
    z: 0,
    contact: false,
    contactId: 0,
    contactX: 0,
    contactY: 0,
    contactZ: 0,
    contactT: 0,
    contactShared: false,
    sawHostile: false,
    waypoint: 0,
    mode: 'idle',
    fatigue: 0,
    afkUntil: 0,
    afkReason: '',
    loggedOff: false,
    goal: 'none',
    goalPoi: '',
    goalHas: false,
    goalX: 0,
    goalY: 0,
    goalZ: 0,
    goalT: 0,
    visited: [],
    visitedNext: 0,
    anchor: false,
    anchorX: 0,
    anchorY: 0,
    anchorZ: 0,
    squad: '',
    lossSeq: 0,
    fear: 0,
    anger: 0,
    calm: 0.5,
    lastEmoteT: -1e9,
    engagedPlayerT: -1e9,
    memT: -1e9,
    mem: null,
  };
}

// ---- the shape importState accepts ----

export type Field =
  | 'num'
  | 'int'
  | 'str'
  | 'bool'
  | { unit: true }
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

const MEMORY_SCHEMA: Schema = {
  contacts: {
    arr: { obj: { target: 'int', kind: 'str', x: 'num', y: 'num', z: 'num', t: 'num', hostile: 'bool' } },
    max: MEMORY_CAPS.contacts,
  },
  contactsNext: 'int',
  players: {
    arr: { obj: { id: 'int', name: 'str', first_s: 'num', last_s: 'num', meetings: 'int' } },
    max: MEMORY_CAPS.players,
  },
  heard: { arr: { obj: { from: 'int', text: 'str', at_s: 'num' } }, max: MEMORY_CAPS.heard },
  heardNext: 'int',
  heardLast_s: 'num',
  events: { arr: { obj: { kind: 'str', t: 'num', ref: 'num' } }, max: MEMORY_CAPS.events },
  eventsNext: 'int',
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
  mem: { nullable: { obj: MEMORY_SCHEMA } },
};
