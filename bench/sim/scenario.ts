import type { Profile, TargetKind, Vec3 } from '../../brain/types.js';

/** A box on the ground plane that blocks line of sight and movement (x/z extents, metres). */
export interface Obstacle {
  min: { x: number; z: number };
  max: { x: number; z: number };
  /** Blocks sight but not movement (a hedge, tall grass, smoke). */
  passable?: boolean;
}

export interface CharacterSpec {
  id: number;
  /** Characters with a brain are driven by the sidecar; the others follow their path or stand. */
  brain: boolean;
  kind?: TargetKind;
  /** Characters of different teams are hostile to each other. */
  team?: string;
  name?: string;
  pos: Vec3;
  heading_deg?: number;
  health?: number;
  blood?: number;
  hunger?: number;
  thirst?: number;
  has_weapon?: boolean;
  ammo?: number;
  profile?: Profile;
  route?: Vec3[];
  squad?: string;
  /** Scripted waypoints for characters without a brain: reach `pos` by `at_s`, moving in a straight line. */
  path?: { at_s: number; pos: Vec3 }[];
}

export type ScriptEvent =
  | { at_s: number; do: 'damage'; target: number; amount: number }
  | { at_s: number; do: 'teleport'; id: number; pos: Vec3 }
  | { at_s: number; do: 'say'; from: number; text: string }
  | { at_s: number; do: 'remove'; id: number }
  | { at_s: number; do: 'spawn'; character: CharacterSpec }
  | { at_s: number; do: 'set'; id: number; field: 'health' | 'hunger' | 'thirst' | 'ammo' | 'blood'; value: number }
  | { at_s: number; do: 'set_weapon'; id: number; has_weapon: boolean };

export type Expectation =
  | { check: 'distance_gt' | 'distance_lt'; a: number; b: number | Vec3; value: number; at_s?: number }
  | { check: 'intent_seen' | 'intent_never'; agent?: number; kind: string; reason?: string; from_s?: number; to_s?: number }
  | { check: 'posture_seen'; agent: number; posture: 'standing' | 'crouched' | 'prone'; from_s?: number; to_s?: number }
  | { check: 'logoff_between'; agent: number; from_s: number; to_s: number }
  | { check: 'intent_count_gt' | 'intent_count_lt'; agent?: number; kind: string; value: number }
  | { check: 'waypoint_switches_gt'; agent: number; value: number }
  | { check: 'alive'; agent: number };

export interface Scenario {
  name: string;
  description?: string;
  duration_s: number;
  tick_hz: number;
  /** Partial ConfigBundle merged over the default bundle (objects deep-merged, arrays replaced). */
  bundle?: Record<string, unknown>;
  world?: { obstacles?: Obstacle[]; poi?: { id: string; kind: string; pos: Vec3 }[]; perception_m?: number; hunger_per_s?: number; thirst_per_s?: number };
  characters: CharacterSpec[];
  script?: ScriptEvent[];
  expect?: Expectation[];
}

type Issue = string;

const SCRIPT_VERBS: readonly ScriptEvent['do'][] = ['damage', 'teleport', 'say', 'remove', 'spawn', 'set', 'set_weapon'];
const CHECKS: readonly Expectation['check'][] = [
  'distance_gt',
  'distance_lt',
  'intent_seen',
  'intent_never',
  'posture_seen',
  'logoff_between',
  'intent_count_gt',
  'intent_count_lt',
  'waypoint_switches_gt',
  'alive',
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a scenario file's shape; returns every problem found. */
export function checkScenario(value: unknown): Issue[] {
  const issues: Issue[] = [];
  const s = value as Partial<Scenario>;
  if (typeof value !== 'object' || value === null) return ['scenario must be a JSON object'];
  if (typeof s.name !== 'string' || !s.name) issues.push('name: required string');
  if (typeof s.duration_s !== 'number' || !(s.duration_s > 0) || s.duration_s > 24 * 3600) issues.push('duration_s: number in (0, 86400]');
  if (typeof s.tick_hz !== 'number' || !(s.tick_hz > 0) || s.tick_hz > 60) issues.push('tick_hz: number in (0, 60]');
  if (!Array.isArray(s.characters) || s.characters.length === 0) issues.push('characters: non-empty array');
  else {
    const ids = new Set<number>();
    s.characters.forEach((c, i) => {
      if (!Number.isInteger(c?.id)) issues.push(`characters[${i}].id: integer`);
      else if (ids.has(c.id)) issues.push(`characters[${i}].id: duplicate ${c.id}`);
      else ids.add(c.id);
      if (typeof c?.brain !== 'boolean') issues.push(`characters[${i}].brain: boolean`);
      const p = c?.pos;
      if (!p || ![p.x, p.y, p.z].every((n) => typeof n === 'number' && Number.isFinite(n))) issues.push(`characters[${i}].pos: {x,y,z} numbers`);
    });
  }
  if (s.bundle !== undefined && !isObject(s.bundle)) issues.push('bundle: object (a partial bundle merged over the default)');
  if (s.script !== undefined) {
    if (!Array.isArray(s.script)) issues.push('script: array');
    else
      s.script.forEach((e: unknown, i) => {
        if (!isObject(e)) return void issues.push(`script[${i}]: object`);
        if (typeof e.at_s !== 'number' || !(e.at_s >= 0)) issues.push(`script[${i}].at_s: number >= 0`);
        if (!SCRIPT_VERBS.includes(e.do as ScriptEvent['do'])) issues.push(`script[${i}].do: one of ${SCRIPT_VERBS.join(', ')}`);
      });
  }
  if (s.expect !== undefined) {
    if (!Array.isArray(s.expect)) issues.push('expect: array');
    else
      s.expect.forEach((e: unknown, i) => {
        if (!isObject(e)) return void issues.push(`expect[${i}]: object`);
        if (!CHECKS.includes(e.check as Expectation['check'])) issues.push(`expect[${i}].check: one of ${CHECKS.join(', ')}`);
      });
  }
  return issues;
}
