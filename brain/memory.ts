import { MEMORY_CAPS, type AgentState, type Memory } from './state.js';
import type { Snapshot, Target, TargetKind } from './types.js';

/**
 * Bounded per-agent memory: contacts (the threat of each sample), players met, speech heard, recent events. Every list is
 * a ring that grows to its cap once and is then overwritten in place, so memory costs a fixed
 * few kilobytes per agent (10,000 agents stay well under 150 MB) and a steady-state tick
 * allocates only when it stores a new string.
 */

export function newMemory(): Memory {
  return { contacts: [], contactsNext: 0, players: [], heard: [], heardNext: 0, heardLast_s: -1e9, events: [], eventsNext: 0 };
}

function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

/** Minimum gap between two sightings of a player for them to count as a new meeting. */
const MEETING_GAP_S = 60;
/** Targets are written to memory at most this often (game seconds). */
export const OBSERVE_EVERY_S = 2;

export function remember(a: AgentState, kind: string, t: number, ref: number): void {
  const m = a.mem;
  if (m === null) return;
  if (m.events.length < MEMORY_CAPS.events) {
    m.events.push({ kind, t, ref });
    return;
  }
  const e = m.events[m.eventsNext]!;
  e.kind = kind;
  e.t = t;
  e.ref = ref;
  m.eventsNext = (m.eventsNext + 1) % MEMORY_CAPS.events;
}

/**
 * Records what this snapshot shows; returns how many new lines were heard. Contacts are the
 * threats perception picked (`threat`), so the targets are not scanned twice for hostiles.
 */
export function observe(a: AgentState, s: Snapshot, threat: Target | null, allowNames: boolean): number {
  const time = s.time_s;
  // Who was around is sampled once per OBSERVE_EVERY_S of game time: memory is about
  // meetings, not frames, and a 10 Hz mod would otherwise pay ten times for the same
  // picture. The clock lives on the agent so a tick with nothing to note never touches memory.
  const sample = time - a.memT >= OBSERVE_EVERY_S || time < a.memT;
  const lines = s.heard;
  if (!sample && (lines === undefined || lines.length === 0)) return 0;
  let m = a.mem;
  if (m === null) m = a.mem = newMemory();
  if (sample) a.memT = time;
  const targets = s.targets;
  if (sample && threat !== null) rememberContact(m, threat.id, internKind(threat.kind), threat.pos.x, threat.pos.y, threat.pos.z, time);
  for (let i = 0; sample && i < targets.length; i++) {
    const t = targets[i]!;
    if (t.visible && t.kind === 'player') rememberPlayer(m, t.id, allowNames && t.name !== undefined ? t.name : '', time);
  }
  let heard = 0;
  if (lines !== undefined) {
    let newest = m.heardLast_s;
    for (let i = 0; i < lines.length; i++) {
      const h = lines[i]!;
      if (h.at_s <= m.heardLast_s) continue;
      heard++;
      if (h.at_s > newest) newest = h.at_s;
      const text = clip(h.text, MEMORY_CAPS.textChars);
      if (m.heard.length < MEMORY_CAPS.heard) m.heard.push({ from: h.from, text, at_s: h.at_s });
      else {
        const slot = m.heard[m.heardNext]!;
        slot.from = h.from;
        slot.text = text;
        slot.at_s = h.at_s;
        m.heardNext = (m.heardNext + 1) % MEMORY_CAPS.heard;
      }
    }
    m.heardLast_s = newest;
  }
  return heard;
}

/**
 * The module's own copy of a target kind. A string decoded from a request is a fresh young
 * object; keeping it in long-lived memory would make every scavenge copy and promote it.
 */
function internKind(kind: TargetKind): TargetKind {
  switch (kind) {
    case 'player':
      return 'player';
    case 'ai':
      return 'ai';
    case 'zombie':
      return 'zombie';
    case 'animal':
      return 'animal';
    default:
      return 'ai';
  }
}

function rememberContact(m: Memory, id: number, kind: string, x: number, y: number, z: number, t: number): void {
  let slot = null;
  for (let i = 0; i < m.contacts.length; i++) {
    if (m.contacts[i]!.target === id) {
      slot = m.contacts[i]!;
      break;
    }
  }
  if (slot === null) {
    if (m.contacts.length < MEMORY_CAPS.contacts) {
      m.contacts.push({ target: id, kind, x, y, z, t, hostile: true });
      return;
    }
    slot = m.contacts[m.contactsNext]!;
    m.contactsNext = (m.contactsNext + 1) % MEMORY_CAPS.contacts;
  }
  slot.target = id;
  slot.kind = kind;
  slot.x = x;
  slot.y = y;
  slot.z = z;
  slot.t = t;
  slot.hostile = true;
}

function rememberPlayer(m: Memory, id: number, name: string, t: number): void {
  let oldest = 0;
  for (let i = 0; i < m.players.length; i++) {
    const p = m.players[i]!;
    if (p.id === id) {
      if (t - p.last_s >= MEETING_GAP_S) p.meetings++;
      p.last_s = t;
      if (name !== '' && p.name !== name) p.name = clip(name, MEMORY_CAPS.nameChars);
      return;
    }
    if (p.last_s < m.players[oldest]!.last_s) oldest = i;
  }
  const n = clip(name, MEMORY_CAPS.nameChars);
  if (m.players.length < MEMORY_CAPS.players) {
    m.players.push({ id, name: n, first_s: t, last_s: t, meetings: 1 });
    return;
  }
  const p = m.players[oldest]!;
  p.id = id;
  p.name = n;
  p.first_s = t;
  p.last_s = t;
  p.meetings = 1;
}

export interface MemorySummary {
  contacts: number;
  last_contact: { target: number; kind: string; at: { x: number; y: number; z: number }; t: number } | null;
  players_met: Array<{ id: number; name: string | null; meetings: number }>;
  heard: Array<{ from: number; text: string; at_s: number }>;
  recent_events: Array<{ kind: string; t: number }>;
}

/** A copy for persona(): newest first, safe to hand out. */
export function summarize(m: Memory | null): MemorySummary {
  if (m === null) return { contacts: 0, last_contact: null, players_met: [], heard: [], recent_events: [] };
  let last = null;
  for (const c of m.contacts) if (last === null || c.t > last.t) last = c;
  return {
    contacts: m.contacts.length,
    last_contact: last && { target: last.target, kind: last.kind, at: { x: last.x, y: last.y, z: last.z }, t: last.t },
    players_met: [...m.players]
      .sort((x, y) => y.last_s - x.last_s || x.id - y.id)
      .map((p) => ({ id: p.id, name: p.name === '' ? null : p.name, meetings: p.meetings })),
    heard: [...m.heard].sort((x, y) => y.at_s - x.at_s).map((h) => ({ from: h.from, text: h.text, at_s: h.at_s })),
    recent_events: [...m.events].sort((x, y) => y.t - x.t).map((e) => ({ kind: e.kind, t: e.t })),
  };
}
