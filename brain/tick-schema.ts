/**
 * The /tick request as data: every field, its kind, range and cap, in one place. The tick
 * types (types.ts), the validator (tick-request.ts) and the sidecar's fast readers' key tables
 * are derived from these tables, so a field is spelled once.
 *
 * How to add a tick field:
 * 1. Add it here, in the object it belongs to (required or optional, its kind and limits).
 *    The type of the request and the validator follow by themselves.
 * 2. Teach the fast reader (src/sidecar/tick/tick-reader.ts) to read it: a `case` in the
 *    reader of its object, storing it as the validator does. Until then the guard test
 *    (test/sidecar/tick/tick-schema-guard.test.ts), which sends a tick holding every field
 *    of this schema, fails: the fast path would drop the field the exact path keeps.
 * 3. Use it in the brain, and document it in docs/sidecar.md.
 *
 * Key order matters: the validator and the readers build every object in the order of its
 * table, so both paths give the same object, key for key.
 */

const SAFE = Number.MAX_SAFE_INTEGER;

/** The caps of a tick request, each documented in docs/sidecar.md. */
export const TICK_LIMITS = {
  maxTargets: 256,
  maxRoute: 64,
  maxPoi: 256,
  maxHeard: 32,
  maxName: 64,
  maxSquad: 64,
  maxPoiField: 64,
  maxHeardText: 500,
  /**
   * Metres from the origin a coordinate may be (10,000 km, larger than any game world): past it
   * the distances the brain squares overflow to Infinity and a reply would carry null positions.
   */
  maxCoordinate: 1e7,
  /** A hostile body can be wrong everywhere; reporting the first few is enough to fix it. */
  maxProblems: 20,
} as const;

/** What a target is. The order is part of the stored memory format (a contact's kind is its index). */
export const TARGET_KINDS = ['player', 'ai', 'zombie', 'animal'] as const;

export const ROLES = ['survivor', 'bandit', 'guard', 'trader'] as const;

export const TRAIT_NAMES = [
  'openness',
  'conscientiousness',
  'extraversion',
  'agreeableness',
  'neuroticism',
  'afk_proneness',
  'break_proneness',
  'fatigue_rate',
] as const;

/** A finite number within [min, max]. */
export interface NumberSpec {
  readonly kind: 'number';
  readonly min: number;
  readonly max: number;
}
/** An integer within [min, max]; `brand` names the branded id type it stands for. */
export interface IntegerSpec {
  readonly kind: 'integer';
  readonly min: number;
  readonly max: number;
  readonly brand: 'AgentId' | null;
}
export interface BooleanSpec {
  readonly kind: 'boolean';
}
/** A string of at most maxLength UTF-16 code units. */
export interface StringSpec {
  readonly kind: 'string';
  readonly maxLength: number;
}
/** One of a fixed list of strings. */
export interface EnumSpec<V extends readonly string[] = readonly string[]> {
  readonly kind: 'enum';
  readonly values: V;
}
/** The members of a position, each a finite number. */
export const VEC3_KEYS = ['x', 'y', 'z'] as const;

/** A position {x, y, z} of finite numbers. */
export interface Vec3Spec {
  readonly kind: 'vec3';
}
export interface ObjectSpec<F extends Fields = Fields> {
  readonly kind: 'object';
  readonly fields: F;
}
/** A list of at most max items. */
export interface ListSpec<I extends ValueSpec = ValueSpec> {
  readonly kind: 'list';
  readonly max: number;
  readonly item: I;
}
export type ValueSpec = NumberSpec | IntegerSpec | BooleanSpec | StringSpec | EnumSpec | Vec3Spec | ObjectSpec | ListSpec;
export type FieldKind = ValueSpec['kind'];

/** A member of an object: its value, and whether it must be present. */
export type Field<S extends ValueSpec = ValueSpec> = S & { readonly required: boolean };
export interface Fields {
  readonly [name: string]: Field;
}

function required<S extends ValueSpec>(spec: S): S & { readonly required: true } {
  return { ...spec, required: true };
}
function optional<S extends ValueSpec>(spec: S): S & { readonly required: false } {
  return { ...spec, required: false };
}
function number(min: number, max: number): NumberSpec {
  return { kind: 'number', min, max };
}
function integer(min: number, max: number): IntegerSpec {
  return { kind: 'integer', min, max, brand: null };
}
/** A character's id: any safe integer, typed as the branded AgentId. */
function agentId(): IntegerSpec & { readonly brand: 'AgentId' } {
  return { kind: 'integer', min: -SAFE, max: SAFE, brand: 'AgentId' };
}
const boolean: BooleanSpec = { kind: 'boolean' };
function string(maxLength: number): StringSpec {
  return { kind: 'string', maxLength };
}
function enumOf<const V extends readonly string[]>(values: V): EnumSpec<V> {
  return { kind: 'enum', values };
}
const vec3: Vec3Spec = { kind: 'vec3' };
function object<const F extends Fields>(fields: F): ObjectSpec<F> {
  return { kind: 'object', fields };
}
function list<const I extends ValueSpec>(max: number, item: I): ListSpec<I> {
  return { kind: 'list', max, item };
}

export const SELF_STATE_FIELDS = {
  pos: required(vec3),
  heading_deg: required(number(-Infinity, Infinity)),
  health: required(number(0, 100)),
  blood: required(number(0, 5000)),
  hunger: required(number(0, 100)),
  thirst: required(number(0, 100)),
  has_weapon: required(boolean),
  ammo: required(integer(0, SAFE)),
} as const;

export const TARGET_FIELDS = {
  id: required(integer(-SAFE, SAFE)),
  kind: required(enumOf(TARGET_KINDS)),
  pos: required(vec3),
  hostile: required(boolean),
  visible: required(boolean),
  name: optional(string(TICK_LIMITS.maxName)),
  health: optional(number(0, 100)),
} as const;

export const POI_FIELDS = {
  id: required(string(TICK_LIMITS.maxPoiField)),
  kind: required(string(TICK_LIMITS.maxPoiField)),
  pos: required(vec3),
} as const;

export const HEARD_FIELDS = {
  from: required(integer(-SAFE, SAFE)),
  text: required(string(TICK_LIMITS.maxHeardText)),
  at_s: required(number(-Infinity, Infinity)),
} as const;

export const SNAPSHOT_FIELDS = {
  agent: required(agentId()),
  time_s: required(number(0, Infinity)),
  self_state: required(object(SELF_STATE_FIELDS)),
  targets: required(list(TICK_LIMITS.maxTargets, object(TARGET_FIELDS))),
  route: optional(list(TICK_LIMITS.maxRoute, vec3)),
  poi: optional(list(TICK_LIMITS.maxPoi, object(POI_FIELDS))),
  heard: optional(list(TICK_LIMITS.maxHeard, object(HEARD_FIELDS))),
  squad: optional(string(TICK_LIMITS.maxSquad)),
} as const;

type TraitName = (typeof TRAIT_NAMES)[number];

/** Every trait optional, each within [0, 1]. */
export const TRAIT_FIELDS = Object.fromEntries(TRAIT_NAMES.map((name) => [name, optional(number(0, 1))])) as {
  readonly [K in TraitName]: NumberSpec & { readonly required: false };
};

export const PROFILE_FIELDS = {
  name: optional(string(TICK_LIMITS.maxName)),
  role: optional(enumOf(ROLES)),
  coward: optional(boolean),
  traits: optional(object(TRAIT_FIELDS)),
} as const;

/** The request itself. A missing profile is the empty one: traits then come from the bundle's population. */
export const TICK_REQUEST_FIELDS = {
  snapshot: required(object(SNAPSHOT_FIELDS)),
  profile: optional(object(PROFILE_FIELDS)),
} as const;
