import { isObj } from './json.js';
import {
  ROLES,
  TARGET_KINDS,
  TRAIT_NAMES,
  type AgentId,
  type HeardSpeech,
  type PointOfInterest,
  type Problem,
  type Profile,
  type Role,
  type SelfState,
  type Snapshot,
  type Target,
  type TargetKind,
  type TickRequest,
  type Traits,
  type Vec3,
} from './types.js';

/**
 * The validator of a /tick request (BRAIN.md §Request). It sits on the hot path, so it is
 * written by hand: no schema walk, no closures, and path strings are built only when a
 * problem is found. The result is a fresh object holding only known fields, so nothing the
 * caller sent beyond the contract (`__proto__`, `constructor`, extra keys) reaches the brain.
 */

export const TICK_LIMITS = {
  maxTargets: 256,
  maxRoute: 64,
  maxPoi: 256,
  maxHeard: 32,
  maxName: 64,
  maxSquad: 64,
  maxPoiField: 64,
  maxHeardText: 500,
  /** A hostile body can be wrong everywhere; reporting the first few is enough to fix it. */
  maxProblems: 20,
} as const;

export type TickParse = { ok: true; request: TickRequest } | { ok: false; problems: Problem[] };

class Problems {
  readonly list: Problem[] = [];
  add(path: string, message: string): void {
    if (this.list.length < TICK_LIMITS.maxProblems) this.list.push({ path, message });
  }
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (ArrayBuffer.isView(v)) return 'binary data';
  if (typeof v === 'object' && !isObj(v)) return 'an extension value';
  return typeof v;
}

function join(base: string, field: string): string {
  return base ? `${base}.${field}` : field;
}

function item(base: string, index: number): string {
  return `${base}[${index}]`;
}

/** Null when v is a finite number within [min, max]; otherwise the reason. */
function numberIssue(v: unknown, min: number, max: number): string | null {
  if (typeof v !== 'number') return `must be a number, got ${typeName(v)}`;
  if (v !== v || v === Infinity || v === -Infinity) return `must be a finite number, got ${v}`;
  if (v < min || v > max) {
    if (max >= Number.MAX_SAFE_INTEGER) return `must be at least ${min}, got ${v}`;
    return `must be between ${min} and ${max}, got ${v}`;
  }
  return null;
}

function integerIssue(v: unknown, min: number, max: number): string | null {
  const issue = numberIssue(v, min, max);
  if (issue) return issue;
  return Number.isInteger(v) ? null : `must be an integer, got ${v as number}`;
}

const SAFE = Number.MAX_SAFE_INTEGER;

// The checkers take the value already loaded by the caller with a literal property name:
// loading o[key] here, for objects of many shapes, made every load megamorphic (slow) on the
// hot path.
function num(v: unknown, key: string, base: string, min: number, max: number, p: Problems): number {
  const issue = numberIssue(v, min, max);
  if (issue) p.add(join(base, key), v === undefined ? 'is required' : issue);
  return v as number;
}

function int(v: unknown, key: string, base: string, min: number, max: number, p: Problems): number {
  const issue = integerIssue(v, min, max);
  if (issue) p.add(join(base, key), v === undefined ? 'is required' : issue);
  return v as number;
}

function bool(v: unknown, key: string, base: string, p: Problems): boolean {
  if (typeof v !== 'boolean') p.add(join(base, key), v === undefined ? 'is required' : `must be a boolean, got ${typeName(v)}`);
  return v as boolean;
}

function str(v: unknown, key: string, base: string, maxLength: number, p: Problems): string {
  if (typeof v !== 'string') p.add(join(base, key), v === undefined ? 'is required' : `must be a string, got ${typeName(v)}`);
  else if (v.length > maxLength) p.add(join(base, key), `must be at most ${maxLength} characters, got ${v.length}`);
  return v as string;
}

function vec3(v: unknown, path: () => string, p: Problems): Vec3 {
  if (!isObj(v)) {
    p.add(path(), v === undefined ? 'is required' : `must be an object {x, y, z}, got ${typeName(v)}`);
    return v as unknown as Vec3;
  }
  const x = v.x;
  const y = v.y;
  const z = v.z;
  if (typeof x !== 'number' || typeof y !== 'number' || typeof z !== 'number' || !Number.isFinite(x + y + z)) {
    const base = path();
    num(v.x, 'x', base, -Infinity, Infinity, p);
    num(v.y, 'y', base, -Infinity, Infinity, p);
    num(v.z, 'z', base, -Infinity, Infinity, p);
  }
  return { x: x as number, y: y as number, z: z as number };
}

/** An array of at most max items, or null after reporting why not. */
function list(v: unknown, path: string, max: number, p: Problems): unknown[] | null {
  if (!Array.isArray(v)) {
    p.add(path, v === undefined ? 'is required' : `must be an array, got ${typeName(v)}`);
    return null;
  }
  if (v.length > max) {
    p.add(path, `must have at most ${max} items, got ${v.length}`);
    return null;
  }
  return v;
}

function selfState(v: unknown, p: Problems): SelfState {
  const base = 'snapshot.self_state';
  if (!isObj(v)) {
    p.add(base, v === undefined ? 'is required' : `must be an object, got ${typeName(v)}`);
    return v as unknown as SelfState;
  }
  return {
    pos: vec3(v.pos, () => `${base}.pos`, p),
    heading_deg: num(v.heading_deg, 'heading_deg', base, -Infinity, Infinity, p),
    health: num(v.health, 'health', base, 0, 100, p),
    blood: num(v.blood, 'blood', base, 0, 5000, p),
    hunger: num(v.hunger, 'hunger', base, 0, 100, p),
    thirst: num(v.thirst, 'thirst', base, 0, 100, p),
    has_weapon: bool(v.has_weapon, 'has_weapon', base, p),
    ammo: int(v.ammo, 'ammo', base, 0, SAFE, p),
  };
}

function target(v: unknown, i: number, p: Problems): Target {
  if (!isObj(v)) {
    p.add(item('snapshot.targets', i), `must be an object, got ${typeName(v)}`);
    return v as unknown as Target;
  }
  const base = item('snapshot.targets', i);
  const id = int(v.id, 'id', base, -SAFE, SAFE, p);
  const kind = v.kind;
  if (typeof kind !== 'string' || !(TARGET_KINDS as readonly string[]).includes(kind)) {
    p.add(`${base}.kind`, kind === undefined ? 'is required' : `must be one of ${TARGET_KINDS.join(', ')}`);
  }
  const t: Target = {
    id,
    kind: kind as TargetKind,
    pos: vec3(v.pos, () => `${base}.pos`, p),
    hostile: bool(v.hostile, 'hostile', base, p),
    visible: bool(v.visible, 'visible', base, p),
  };
  if (v.name !== undefined) t.name = str(v.name, 'name', base, TICK_LIMITS.maxName, p);
  if (v.health !== undefined) t.health = num(v.health, 'health', base, 0, 100, p);
  return t;
}

function poi(v: unknown, i: number, p: Problems): PointOfInterest {
  const base = item('snapshot.poi', i);
  if (!isObj(v)) {
    p.add(base, `must be an object, got ${typeName(v)}`);
    return v as unknown as PointOfInterest;
  }
  return {
    id: str(v.id, 'id', base, TICK_LIMITS.maxPoiField, p),
    kind: str(v.kind, 'kind', base, TICK_LIMITS.maxPoiField, p),
    pos: vec3(v.pos, () => `${base}.pos`, p),
  };
}

function heard(v: unknown, i: number, p: Problems): HeardSpeech {
  const base = item('snapshot.heard', i);
  if (!isObj(v)) {
    p.add(base, `must be an object, got ${typeName(v)}`);
    return v as unknown as HeardSpeech;
  }
  return {
    from: int(v.from, 'from', base, -SAFE, SAFE, p),
    text: str(v.text, 'text', base, TICK_LIMITS.maxHeardText, p),
    at_s: num(v.at_s, 'at_s', base, -Infinity, Infinity, p),
  };
}

function snapshot(v: unknown, p: Problems): Snapshot {
  if (!isObj(v)) {
    p.add('snapshot', v === undefined ? 'is required' : `must be an object, got ${typeName(v)}`);
    return v as unknown as Snapshot;
  }
  const base = 'snapshot';
  const agent = int(v.agent, 'agent', base, -SAFE, SAFE, p) as AgentId;
  const time_s = num(v.time_s, 'time_s', base, 0, Infinity, p);
  const self_state = selfState(v.self_state, p);
  const targets: Target[] = [];
  const rawTargets = list(v.targets, 'snapshot.targets', TICK_LIMITS.maxTargets, p);
  if (rawTargets) for (let i = 0; i < rawTargets.length; i++) targets.push(target(rawTargets[i], i, p));
  const s: Snapshot = { agent, time_s, self_state, targets };
  if (v.route !== undefined) {
    const raw = list(v.route, 'snapshot.route', TICK_LIMITS.maxRoute, p);
    if (raw) {
      const route: Vec3[] = [];
      for (let i = 0; i < raw.length; i++) route.push(vec3(raw[i], () => item('snapshot.route', i), p));
      s.route = route;
    }
  }
  if (v.poi !== undefined) {
    const raw = list(v.poi, 'snapshot.poi', TICK_LIMITS.maxPoi, p);
    if (raw) {
      const out: PointOfInterest[] = [];
      for (let i = 0; i < raw.length; i++) out.push(poi(raw[i], i, p));
      s.poi = out;
    }
  }
  if (v.heard !== undefined) {
    const raw = list(v.heard, 'snapshot.heard', TICK_LIMITS.maxHeard, p);
    if (raw) {
      const out: HeardSpeech[] = [];
      for (let i = 0; i < raw.length; i++) out.push(heard(raw[i], i, p));
      s.heard = out;
    }
  }
  if (v.squad !== undefined) s.squad = str(v.squad, 'squad', base, TICK_LIMITS.maxSquad, p);
  return s;
}

function traits(v: unknown, p: Problems): Partial<Traits> {
  if (!isObj(v)) {
    p.add('profile.traits', `must be an object, got ${typeName(v)}`);
    return {};
  }
  const out: Partial<Traits> = {};
  for (const name of TRAIT_NAMES) {
    if (v[name] !== undefined) out[name] = num(v[name], name, 'profile.traits', 0, 1, p);
  }
  return out;
}

function profile(v: unknown, p: Problems): Profile {
  // A missing profile is the empty one: traits then come from the bundle's population.
  if (v === undefined) return {};
  if (!isObj(v)) {
    p.add('profile', `must be an object, got ${typeName(v)}`);
    return {};
  }
  const out: Profile = {};
  if (v.name !== undefined) out.name = str(v.name, 'name', 'profile', TICK_LIMITS.maxName, p);
  if (v.role !== undefined) {
    if (typeof v.role !== 'string' || !(ROLES as readonly string[]).includes(v.role)) p.add('profile.role', `must be one of ${ROLES.join(', ')}`);
    out.role = v.role as Role;
  }
  if (v.coward !== undefined) out.coward = bool(v.coward, 'coward', 'profile', p);
  if (v.traits !== undefined) out.traits = traits(v.traits, p);
  return out;
}

/** Validates a decoded /tick body; every problem carries the dotted path of its field. */
export function parseTickRequest(value: unknown): TickParse {
  const p = new Problems();
  if (!isObj(value)) {
    p.add('', `the request must be an object {snapshot, profile}, got ${typeName(value)}`);
    return { ok: false, problems: p.list };
  }
  const request: TickRequest = { snapshot: snapshot(value.snapshot, p), profile: profile(value.profile, p) };
  return p.list.length === 0 ? { ok: true, request } : { ok: false, problems: p.list };
}
