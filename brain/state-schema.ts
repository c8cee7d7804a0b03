import { CONTACT_KINDS, EVENT_KINDS, MEMORY_CAPS, memoryFromPlain, memoryToPlain } from './memory-block.js';
import { NUM_FIELD_TABLE, NUM_FIELDS, type NumCheck, type NumField } from './agent-fields.js';
import { GOALS, MODES, type Goal, type Mode } from './modes.js';
import { AgentState, VISITED_CAP, type Memory } from './state.js';
import { ROLES, type Role, type Traits } from './types.js';

/** The persisted form of an agent: its JSON shape, the conversions to and from it, and the schema importState checks it against. */

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
  | { enum: readonly string[] }
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
    arr: { obj: { target: 'int', kind: { enum: CONTACT_KINDS }, x: 'num', y: 'num', z: 'num', t: 'num', hostile: 'bool' } },
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
  events: { arr: { obj: { kind: { enum: EVENT_KINDS }, t: 'num', ref: 'num' } }, max: MEMORY_CAPS.events },
  eventsNext: { intIn: [0, MEMORY_CAPS.events - 1] },
};

const OTHER_FIELDS_SCHEMA: Schema = {
  id: 'int',
  name: 'str',
  role: { enum: ROLES },
  traits: { obj: TRAITS_SCHEMA },
  themes: { arr: 'str', max: 256 },
  ticks: 'int',
  contact: 'bool',
  contactId: 'int',
  contactShared: 'bool',
  sawHostile: 'bool',
  waypoint: 'int',
  mode: { enum: MODES },
  afkReason: { enum: ['', 'afk', 'break'] },
  loggedOff: 'bool',
  goal: { enum: GOALS },
  goalPoi: 'str',
  goalHas: 'bool',
  visited: { arr: 'str', max: VISITED_CAP },
  visitedNext: 'int',
  anchor: 'bool',
  squad: 'str',
  lossSeq: 'int',
  mem: { nullable: { obj: MEMORY_SCHEMA } },
};

const CHECKS: Record<NumCheck, Field> = { num: 'num', int: 'int', unit };

/** What importState accepts for one agent: its numbers as the field table says, and the rest. */
export const STATE_SCHEMA: Schema = {
  ...OTHER_FIELDS_SCHEMA,
  ...Object.fromEntries(NUM_FIELDS.map((name) => [name, CHECKS[NUM_FIELD_TABLE[name].check]])),
};
