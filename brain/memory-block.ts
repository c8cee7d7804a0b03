import { SlabPool } from './slab.js';
import type { Memory } from './state.js';
import { TARGET_KINDS } from './tick-schema.js';

/**
 * The numeric layout of one agent's memory: every number of its four rings in one
 * Float64Array, struct-of-arrays (all contact ids together, all player ids together, …), with
 * the few strings (player names, lines heard) in two small arrays made only when first needed.
 * The rings were arrays of small objects: a sample walked a dozen objects scattered over the
 * heap, which with 10,000 agents ticked in turn meant a cache miss per object. A slot here is
 * the same slot as in those arrays, so the JSON form (`Memory`, what exportState writes) is
 * unchanged and converts both ways exactly.
 */

export const MEMORY_CAPS = { contacts: 8, players: 12, heard: 6, events: 12, textChars: 120, nameChars: 32 } as const;

/** Target kinds as stored (codes are indexes into TARGET_KINDS). */
export const CONTACT_KINDS = TARGET_KINDS;

/** What remember() notes, by code (index). */
export const EVENT_KINDS = ['spotted', 'damaged', 'lost_squadmate', 'squad_contact', 'logoff', 'afk', 'break', 'fled', 'engaged', 'plan'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Event codes for remember(). */
export const EV = {
  spotted: 0,
  damaged: 1,
  lost_squadmate: 2,
  squad_contact: 3,
  logoff: 4,
  afk: 5,
  break: 6,
  fled: 7,
  engaged: 8,
  plan: 9,
} as const satisfies Record<EventKind, number>;

const C = MEMORY_CAPS.contacts;
const P = MEMORY_CAPS.players;
const H = MEMORY_CAPS.heard;
const E = MEMORY_CAPS.events;

// Ring lengths and write positions first, so a tick that only checks them reads one cache line.
export const CONTACTS_LEN = 0;
export const CONTACTS_NEXT = 1;
export const PLAYERS_LEN = 2;
export const HEARD_LEN = 3;
export const HEARD_NEXT = 4;
export const HEARD_LAST = 5;
export const EVENTS_LEN = 6;
export const EVENTS_NEXT = 7;

/**
 * The slot a ring's next entry takes (the ring's length at `lenAt`, its oldest entry at
 * `nextAt`): the next free one while the ring grows, then the oldest, overwritten.
 */
export function nextSlot(m: Float64Array, lenAt: number, nextAt: number, cap: number): number {
  const len = m[lenAt]!;
  if (len < cap) {
    m[lenAt] = len + 1;
    return len;
  }
  const slot = m[nextAt]!;
  m[nextAt] = (slot + 1) % cap;
  return slot;
}
export const CT_TARGET = 8;
export const CT_KIND = CT_TARGET + C;
export const CT_X = CT_KIND + C;
export const CT_Y = CT_X + C;
export const CT_Z = CT_Y + C;
export const CT_T = CT_Z + C;
export const CT_HOSTILE = CT_T + C;
export const PL_ID = CT_HOSTILE + C;
export const PL_FIRST = PL_ID + P;
export const PL_LAST = PL_FIRST + P;
export const PL_MEETINGS = PL_LAST + P;
export const HD_FROM = PL_MEETINGS + P;
export const HD_AT = HD_FROM + H;
export const EV_KIND = HD_AT + H;
export const EV_T = EV_KIND + E;
export const EV_REF = EV_T + E;
export const MEMORY_SIZE = EV_REF + E;

/** Memory blocks come from slabs of this many (80 kB); see slab.ts. */
export const MEMORY_SLAB_BLOCKS = 64;
/** Freed memory blocks kept for reuse at most (about 5 MB): a brain's churn of agents, not a cleared brain's slabs. */
export const MEMORY_FREE_BLOCKS = 4096;

const pool = new SlabPool(MEMORY_SIZE, MEMORY_SLAB_BLOCKS, MEMORY_FREE_BLOCKS);

/** A fresh, empty memory block. */
export function newMemoryBlock(): Float64Array {
  const m = pool.take();
  m[HEARD_LAST] = -1e9;
  return m;
}

/** Gives a block from newMemoryBlock back for reuse; the caller holds no other reference to it (memory.ts, detach). */
export function freeMemoryBlock(m: Float64Array): void {
  pool.give(m);
}

/** The strings of a memory, by slot; null until a non-empty one is stored. */
export interface MemoryStrings {
  names: string[] | null;
  texts: string[] | null;
}

/** A fresh array of `n` empty strings (packed, so later stores stay fast). */
export function emptyStrings(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push('');
  return out;
}

/** The JSON form, slots in order, keys in the order the object rings were written in. */
export function memoryToPlain(m: Float64Array, s: MemoryStrings): Memory {
  const contacts = [];
  for (let i = 0; i < m[CONTACTS_LEN]!; i++) {
    contacts.push({
      target: m[CT_TARGET + i]!,
      kind: CONTACT_KINDS[m[CT_KIND + i]!]!,
      x: m[CT_X + i]!,
      y: m[CT_Y + i]!,
      z: m[CT_Z + i]!,
      t: m[CT_T + i]!,
      hostile: m[CT_HOSTILE + i] !== 0,
    });
  }
  const players = [];
  for (let i = 0; i < m[PLAYERS_LEN]!; i++) {
    players.push({ id: m[PL_ID + i]!, name: s.names?.[i] ?? '', first_s: m[PL_FIRST + i]!, last_s: m[PL_LAST + i]!, meetings: m[PL_MEETINGS + i]! });
  }
  const heard = [];
  for (let i = 0; i < m[HEARD_LEN]!; i++) heard.push({ from: m[HD_FROM + i]!, text: s.texts?.[i] ?? '', at_s: m[HD_AT + i]! });
  const events = [];
  for (let i = 0; i < m[EVENTS_LEN]!; i++) events.push({ kind: EVENT_KINDS[m[EV_KIND + i]!]!, t: m[EV_T + i]!, ref: m[EV_REF + i]! });
  return {
    contacts,
    contactsNext: m[CONTACTS_NEXT]!,
    players,
    heard,
    heardNext: m[HEARD_NEXT]!,
    heardLast_s: m[HEARD_LAST]!,
    events,
    eventsNext: m[EVENTS_NEXT]!,
  };
}

/**
 * From checked JSON (STATE_SCHEMA: lengths within the caps, write positions within the rings,
 * kinds from CONTACT_KINDS and EVENT_KINDS), copying everything.
 */
export function memoryFromPlain(p: Memory): { block: Float64Array } & MemoryStrings {
  const m = newMemoryBlock();
  const s: MemoryStrings = { names: null, texts: null };
  m[CONTACTS_LEN] = p.contacts.length;
  m[CONTACTS_NEXT] = p.contactsNext;
  p.contacts.forEach((c, i) => {
    m[CT_TARGET + i] = c.target;
    m[CT_KIND + i] = CONTACT_KINDS.indexOf(c.kind as (typeof CONTACT_KINDS)[number]);
    m[CT_X + i] = c.x;
    m[CT_Y + i] = c.y;
    m[CT_Z + i] = c.z;
    m[CT_T + i] = c.t;
    m[CT_HOSTILE + i] = c.hostile ? 1 : 0;
  });
  m[PLAYERS_LEN] = p.players.length;
  p.players.forEach((pl, i) => {
    m[PL_ID + i] = pl.id;
    m[PL_FIRST + i] = pl.first_s;
    m[PL_LAST + i] = pl.last_s;
    m[PL_MEETINGS + i] = pl.meetings;
    if (pl.name !== '') (s.names ??= emptyStrings(P))[i] = pl.name;
  });
  m[HEARD_LEN] = p.heard.length;
  m[HEARD_NEXT] = p.heardNext;
  m[HEARD_LAST] = p.heardLast_s;
  p.heard.forEach((h, i) => {
    m[HD_FROM + i] = h.from;
    m[HD_AT + i] = h.at_s;
    if (h.text !== '') (s.texts ??= emptyStrings(H))[i] = h.text;
  });
  m[EVENTS_LEN] = p.events.length;
  m[EVENTS_NEXT] = p.eventsNext;
  p.events.forEach((e, i) => {
    m[EV_KIND + i] = EVENT_KINDS.indexOf(e.kind as EventKind);
    m[EV_T + i] = e.t;
    m[EV_REF + i] = e.ref;
  });
  return { block: m, ...s };
}
