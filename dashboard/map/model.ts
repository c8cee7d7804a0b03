/**
 * What the map draws, shared by the simulator's replay page (`brainstem sim --html`) and the
 * dashboard's live map. These modules import nothing but each other (no preact, no fetch): the
 * replay page inlines their compiled text into one self-contained file.
 */

/** The reply's explanation (`?explain=1`, and every reply of the simulator's record). */
export interface Why {
  mode: string;
  goal: string;
  options: { name: string; score: number }[];
  rule: string;
}

/** A line from a character to what it aims at or flees from (another character's id). */
export interface Aim {
  kind: 'engage' | 'fire' | 'flee';
  target: number;
}

/** One character as the map draws it at one moment. */
export interface MapCharacter {
  id: number;
  name: string;
  x: number;
  z: number;
  /** What it is doing: the brain's mode (the roster's state, or `why.mode`), else the state its intents show. */
  mode: string;
  squad: string;
  /** Its intents in short ("Engage(3 fire) MoveTo(10,4 jog)"); empty when unknown (the live map). */
  intents: string;
  /** Degrees, 0 = +z (north), clockwise; null when unknown. */
  heading: number | null;
  posture: string;
  health: number | null;
  goal: string;
  aim: Aim | null;
  /** Where it is going (MoveTo or Investigate), for the selected and hovered characters. */
  dest: { x: number; z: number; investigate: boolean } | null;
  why: Why | null;
}

export interface Bounds {
  minX: number;
  minZ: number;
  maxX: number;
  maxZ: number;
}

/** The static part of a map: walls and cover, points of interest, patrol routes. */
export interface MapWorld {
  bounds: Bounds;
  obstacles: { min: { x: number; z: number }; max: { x: number; z: number }; passable?: boolean }[];
  poi: { id: string; kind: string; x: number; z: number }[];
  routes: [number, number][][];
}

/**
 * Colours by mode: the brain's modes (what the roster and `why.mode` say) and the states the
 * simulator reads off a reply's intents when no explanation was recorded.
 */
export const MODE_COLOURS: Readonly<Record<string, string>> = {
  firing: '#d62828',
  engaging: '#f77f00',
  fleeing: '#9b5de5',
  investigating: '#e0a800',
  regrouping: '#8d6e63',
  guarding: '#3a86ff',
  patrolling: '#2a9d8f',
  traveling: '#52b788',
  roaming: '#80b918',
  moving: '#2a9d8f',
  idle: '#6c757d',
  afk: '#adb5bd',
  break: '#adb5bd',
  on_break: '#adb5bd',
  logged_off: '#ced4da',
  dead: '#111111',
  scripted: '#1d3557',
};

export function modeColour(mode: string): string {
  return MODE_COLOURS[mode] ?? '#495057';
}

/** Runs of one mode along a timeline: [from, to) in the timeline's own unit (seconds). */
export interface ModeSegment {
  mode: string;
  from: number;
  to: number;
}

/** Consecutive samples of one mode merged into segments; the last one runs to `end`. */
export function modeSegments(samples: readonly { t: number; mode: string }[], end: number): ModeSegment[] {
  const out: ModeSegment[] = [];
  for (const s of samples) {
    const last = out[out.length - 1];
    if (last && last.mode === s.mode) continue;
    if (last) last.to = s.t;
    out.push({ mode: s.mode, from: s.t, to: end });
  }
  const last = out[out.length - 1];
  if (last) last.to = Math.max(last.from, end);
  return out;
}

/** Bounds around points, padded, never empty. */
export function boundsOf(points: Iterable<{ x: number; z: number }>, pad = 10): Bounds {
  let minX = Infinity;
  let minZ = Infinity;
  let maxX = -Infinity;
  let maxZ = -Infinity;
  for (const p of points) {
    if (p.x < minX) minX = p.x;
    if (p.x > maxX) maxX = p.x;
    if (p.z < minZ) minZ = p.z;
    if (p.z > maxZ) maxZ = p.z;
  }
  if (!Number.isFinite(minX)) return { minX: -50, minZ: -50, maxX: 50, maxZ: 50 };
  const p = Math.max(pad, 0.05 * Math.max(maxX - minX, maxZ - minZ));
  return { minX: minX - p, minZ: minZ - p, maxX: maxX + p, maxZ: maxZ + p };
}

/** One character in one frame (bench/sim/replay-page.ts records them). */
export type ReplayRow = [
  id: number,
  x: number,
  z: number,
  mode: number,
  intents: number,
  health: number,
  heading: number,
  posture: number,
  why: number,
  aimKind: number,
  aimTarget: number,
  destX: number | null,
  destZ: number | null,
  destInvestigate: number,
];

export interface ReplayData {
  name: string;
  description: string;
  tick_hz: number;
  world: MapWorld;
  /** Interned strings: modes, intents, postures. */
  strings: string[];
  whys: Why[];
  chars: Record<string, { name: string; kind: string; brain: boolean; squad: string }>;
  frames: { t: number; c: ReplayRow[] }[];
}
