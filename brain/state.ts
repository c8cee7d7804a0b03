import { CACHE_FIELDS, INITIAL_NUMS, NUM_FIELDS, type CacheField, type NumField } from './agent-fields.js';
import type { Goal, Mode } from './modes.js';
import { SlabPool } from './slab.js';
import type { Role, Traits } from './types.js';

/** Per-agent state. Its persisted form is in state-schema.ts, its numeric fields in agent-fields.ts. */

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

export const VISITED_CAP = 4;

/** The numbers of a character, in one Float64Array (`num`), read and written by name (`a.fear`). */
type NumberSlots = { num: Float64Array } & Record<NumField | CacheField, number>;

/** Agents' `num` blocks come from slabs of this many (36 kB); see slab.ts. */
export const NUM_SLAB_BLOCKS = 64;
/** Freed `num` blocks kept for reuse at most (about 2.3 MB). */
export const NUM_FREE_BLOCKS = 4096;

const numPool = new SlabPool(INITIAL_NUMS.length, NUM_SLAB_BLOCKS, NUM_FREE_BLOCKS);

function newNums(): Float64Array {
  const m = numPool.take();
  m.set(INITIAL_NUMS);
  return m;
}

/**
 * An agent leaves the brain: its `num` block goes back for reuse and the agent keeps a copy
 * of its own, since an export under way (exportBatches) may still write it out.
 */
export function detachNums(a: AgentState): void {
  const m = a.num;
  a.num = m.slice();
  numPool.give(m);
}

/**
 * The base of AgentState: `num`, holding every numeric field at its index in the field table
 * (agent-fields.ts), and one accessor per field derived from that table, so an accessor and
 * its slot cannot drift apart. They live in one Float64Array rather than as object fields
 * because V8 (with pointer compression) boxes every double-valued field in its own heap
 * number: a tick reading twenty of them chased twenty pointers across the heap. Each accessor
 * closes over a constant index, and V8 inlines it where it is called.
 */
function numberSlots(): new () => NumberSlots {
  class Slots {
    num = newNums();
  }
  [...NUM_FIELDS, ...CACHE_FIELDS].forEach((name, index) => {
    const slot = index;
    Object.defineProperty(Slots.prototype, name, {
      get(this: Slots): number {
        return this.num[slot]!;
      },
      set(this: Slots, v: number) {
        this.num[slot] = v;
      },
    });
  });
  return Slots as unknown as new () => NumberSlots;
}

const NumSlots = numberSlots();

/**
 * One character's state. Nothing in it refers to another agent or to the Brain (squads refer
 * to agents, never the reverse). Optional positions are flag + three numbers rather than
 * objects so that a tick updates them without allocating. `nrv` … `fatR` are derived from
 * traits by temper() whenever traits change, and read by the per-tick code instead of the
 * traits object. toPlain()/fromPlain() convert to and from the JSON form that exportState
 * writes and STATE_SCHEMA checks.
 */
export class AgentState extends NumSlots {
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
    super();
    this.rng = rng;
    this.firstT = time;
    this.lastT = time;
  }
}
