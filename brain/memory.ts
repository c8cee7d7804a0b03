import {
  CONTACT_KINDS,
  CONTACTS_LEN,
  CONTACTS_NEXT,
  CT_HOSTILE,
  CT_KIND,
  CT_T,
  CT_TARGET,
  CT_X,
  CT_Y,
  CT_Z,
  EV_KIND,
  EV_REF,
  EV_T,
  EVENT_KINDS,
  EVENTS_LEN,
  EVENTS_NEXT,
  HD_AT,
  HD_FROM,
  HEARD_LAST,
  HEARD_LEN,
  HEARD_NEXT,
  MEMORY_CAPS,
  nextSlot,
  PL_FIRST,
  PL_ID,
  PL_LAST,
  PL_MEETINGS,
  PLAYERS_LEN,
  emptyStrings,
  freeMemoryBlock,
  newMemoryBlock,
} from './memory-block.js';
import type { AgentState } from './state.js';
import { hasTarget, HEARD_AHEAD_S, type HeardSpeech, type Target, type TargetKind } from './types.js';

export { EV } from './memory-block.js';

/**
 * Bounded per-agent memory: contacts (the threat of each sample), players met, speech heard,
 * recent events. Every list is a ring that grows to its cap once and is then overwritten in
 * place, in one fixed-size block of numbers per agent (memory-block.ts), so memory costs about
 * 1.3 kB per agent plus the strings it keeps, and a steady-state tick allocates only when it
 * stores a new string.
 */

function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

/** Minimum gap between two sightings of a player for them to count as a new meeting. */
const MEETING_GAP_S = 60;
/** Targets are written to memory at most this often (game seconds). */
export const OBSERVE_EVERY_S = 2;

/** Drops everything the agent remembers (the memory policy was switched off). */
export function forget(a: AgentState): void {
  if (a.mem !== null) freeMemoryBlock(a.mem);
  a.mem = null;
  a.memNames = null;
  a.memTexts = null;
}

/**
 * An agent leaves the brain (evicted, stale, its clock reset, replaced by an import): its
 * block goes back for reuse, and the agent keeps a copy of its memory of its own, since an
 * export under way (exportBatches) may still write it out.
 */
export function detach(a: AgentState): void {
  const m = a.mem;
  if (m === null) return;
  a.mem = m.slice();
  freeMemoryBlock(m);
}

/** Notes an event (`EV` code) when the agent has a memory; `ref` is what it was about (an id, damage, 0). */
export function remember(a: AgentState, kind: number, t: number, ref: number): void {
  const m = a.mem;
  if (m === null) return;
  const i = nextSlot(m, EVENTS_LEN, EVENTS_NEXT, MEMORY_CAPS.events);
  m[EV_KIND + i] = kind;
  m[EV_T + i] = t;
  m[EV_REF + i] = ref;
}

/**
 * Records what this snapshot shows; returns how many new lines were heard. Contacts are the
 * threats perception picked (`threat`), so the targets are not scanned twice for hostiles.
 */
export function observe(
  a: AgentState,
  time: number,
  targets: readonly Target[],
  lines: readonly HeardSpeech[] | undefined,
  threat: Target | null,
  allowNames: boolean,
): number {
  // Who was around is sampled once per OBSERVE_EVERY_S of game time: memory is about
  // meetings, not frames, and a 10 Hz mod would otherwise pay ten times for the same
  // picture. The clock lives on the agent so a tick with nothing to note never touches memory.
  const sample = time - a.memT >= OBSERVE_EVERY_S || time < a.memT;
  if (!sample && (lines === undefined || lines.length === 0)) return 0;
  let m = a.mem;
  if (m === null) m = a.mem = newMemoryBlock();
  if (sample) a.memT = time;
  if (sample && threat !== null) rememberContact(m, threat.id, kindCode(threat.kind), threat.pos.x, threat.pos.y, threat.pos.z, time);
  for (let i = 0; sample && i < targets.length; i++) {
    const t = targets[i]!;
    if (t.visible && t.kind === 'player') rememberPlayer(a, m, t.id, allowNames && t.name !== undefined ? t.name : '', time);
  }
  let heard = 0;
  if (lines !== undefined) {
    const last = m[HEARD_LAST]!;
    let newest = last;
    for (let i = 0; i < lines.length; i++) {
      const h = lines[i]!;
      if (h.at_s <= last || h.at_s > time + HEARD_AHEAD_S || (h.from === a.id && !hasTarget(targets, h.from))) continue;
      heard++;
      if (h.at_s > newest) newest = h.at_s;
      const slot = nextSlot(m, HEARD_LEN, HEARD_NEXT, MEMORY_CAPS.heard);
      m[HD_FROM + slot] = h.from;
      m[HD_AT + slot] = h.at_s;
      (a.memTexts ??= emptyStrings(MEMORY_CAPS.heard))[slot] = clip(h.text, MEMORY_CAPS.textChars);
    }
    m[HEARD_LAST] = newest;
  }
  return heard;
}

/** A target kind as its CONTACT_KINDS code (a kind outside the list is remembered as 'ai'). */
function kindCode(kind: TargetKind): number {
  switch (kind) {
    case 'player':
      return 0;
    case 'ai':
      return 1;
    case 'zombie':
      return 2;
    case 'animal':
      return 3;
    default:
      return 1;
  }
}

function rememberContact(m: Float64Array, id: number, kind: number, x: number, y: number, z: number, t: number): void {
  const len = m[CONTACTS_LEN]!;
  let i = 0;
  while (i < len && m[CT_TARGET + i] !== id) i++;
  if (i === len) i = nextSlot(m, CONTACTS_LEN, CONTACTS_NEXT, MEMORY_CAPS.contacts);
  m[CT_TARGET + i] = id;
  m[CT_KIND + i] = kind;
  m[CT_X + i] = x;
  m[CT_Y + i] = y;
  m[CT_Z + i] = z;
  m[CT_T + i] = t;
  m[CT_HOSTILE + i] = 1;
}

function rememberPlayer(a: AgentState, m: Float64Array, id: number, name: string, t: number): void {
  const len = m[PLAYERS_LEN]!;
  let oldest = 0;
  for (let i = 0; i < len; i++) {
    if (m[PL_ID + i] === id) {
      if (t - m[PL_LAST + i]! >= MEETING_GAP_S) m[PL_MEETINGS + i] = m[PL_MEETINGS + i]! + 1;
      m[PL_LAST + i] = t;
      if (name !== '' && (a.memNames === null || a.memNames[i] !== name))
        (a.memNames ??= emptyStrings(MEMORY_CAPS.players))[i] = clip(name, MEMORY_CAPS.nameChars);
      return;
    }
    if (m[PL_LAST + i]! < m[PL_LAST + oldest]!) oldest = i;
  }
  let i = oldest;
  if (len < MEMORY_CAPS.players) {
    i = len;
    m[PLAYERS_LEN] = len + 1;
  }
  m[PL_ID + i] = id;
  m[PL_FIRST + i] = t;
  m[PL_LAST + i] = t;
  m[PL_MEETINGS + i] = 1;
  const n = clip(name, MEMORY_CAPS.nameChars);
  if (n !== '') (a.memNames ??= emptyStrings(MEMORY_CAPS.players))[i] = n;
  else if (a.memNames !== null) a.memNames[i] = '';
}

export interface MemorySummary {
  contacts: number;
  last_contact: { target: number; kind: string; at: { x: number; y: number; z: number }; t: number } | null;
  players_met: Array<{ id: number; name: string | null; meetings: number }>;
  heard: Array<{ from: number; text: string; at_s: number }>;
  recent_events: Array<{ kind: string; t: number }>;
}

/** A copy for persona(): newest first, safe to hand out. Ties keep slot order, as the object rings did. */
export function summarize(a: AgentState | null): MemorySummary {
  const m = a === null ? null : a.mem;
  if (a === null || m === null) return { contacts: 0, last_contact: null, players_met: [], heard: [], recent_events: [] };
  let last = -1;
  for (let i = 0; i < m[CONTACTS_LEN]!; i++) if (last < 0 || m[CT_T + i]! > m[CT_T + last]!) last = i;
  const players = [];
  for (let i = 0; i < m[PLAYERS_LEN]!; i++)
    players.push({ id: m[PL_ID + i]!, name: a.memNames?.[i] ?? '', last_s: m[PL_LAST + i]!, meetings: m[PL_MEETINGS + i]! });
  const heard = [];
  for (let i = 0; i < m[HEARD_LEN]!; i++) heard.push({ from: m[HD_FROM + i]!, text: a.memTexts?.[i] ?? '', at_s: m[HD_AT + i]! });
  const events = [];
  for (let i = 0; i < m[EVENTS_LEN]!; i++) events.push({ kind: EVENT_KINDS[m[EV_KIND + i]!]!, t: m[EV_T + i]! });
  return {
    contacts: m[CONTACTS_LEN]!,
    last_contact:
      last < 0
        ? null
        : {
            target: m[CT_TARGET + last]!,
            kind: CONTACT_KINDS[m[CT_KIND + last]!]!,
            at: { x: m[CT_X + last]!, y: m[CT_Y + last]!, z: m[CT_Z + last]! },
            t: m[CT_T + last]!,
          },
    players_met: players
      .sort((x, y) => y.last_s - x.last_s || x.id - y.id)
      .map((p) => ({ id: p.id, name: p.name === '' ? null : p.name, meetings: p.meetings })),
    heard: heard.sort((x, y) => y.at_s - x.at_s),
    recent_events: events.sort((x, y) => y.t - x.t),
  };
}
