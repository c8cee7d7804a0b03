import type { Flags } from './flags.js';
/**
 * The brain's public types: the tick request (derived from its schema, tick-schema.ts) and
 * reply, and the configuration bundle. Nothing here knows about HTTP or storage.
 */

import type {
  Field,
  Fields,
  HEARD_FIELDS,
  POI_FIELDS,
  PROFILE_FIELDS,
  SELF_STATE_FIELDS,
  SNAPSHOT_FIELDS,
  TARGET_FIELDS,
  TRAIT_NAMES,
  ValueSpec,
} from './tick-schema.js';
import type { TARGET_KINDS, ROLES } from './tick-schema.js';

export { ROLES, TARGET_KINDS, TRAIT_NAMES } from './tick-schema.js';

declare const brand: unique symbol;
/** A character's id as the game mod numbers it. */
export type AgentId = number & { readonly [brand]: 'AgentId' };

export interface Vec3 {
  x: number;
  y: number;
  z: number;
}

// The tick request's types, derived from its schema (tick-schema.ts): a field added there
// appears here by itself.

/** The TypeScript type of a value the schema describes. */
export type ValueOf<S extends ValueSpec> = S extends { kind: 'number' }
  ? number
  : S extends { kind: 'integer'; brand: 'AgentId' }
    ? AgentId
    : S extends { kind: 'integer' }
      ? number
      : S extends { kind: 'boolean' }
        ? boolean
        : S extends { kind: 'string' }
          ? string
          : S extends { kind: 'enum'; values: readonly (infer V)[] }
            ? V
            : S extends { kind: 'vec3' }
              ? Vec3
              : S extends { kind: 'object'; fields: infer F extends Fields }
                ? ObjectOf<F>
                : S extends { kind: 'list'; item: infer I extends ValueSpec }
                  ? ValueOf<I>[]
                  : never;

type RequiredKeys<F extends Fields> = { [K in keyof F]: F[K] extends { required: true } ? K : never }[keyof F];
type OptionalKeys<F extends Fields> = Exclude<keyof F, RequiredKeys<F>>;
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The object a table of fields describes: its required members, and its optional ones marked `?`. */
export type ObjectOf<F extends Fields> = Flat<
  { -readonly [K in RequiredKeys<F>]: F[K] extends Field<infer S> ? ValueOf<S> : never } & {
    -readonly [K in OptionalKeys<F>]?: F[K] extends Field<infer S> ? ValueOf<S> : never;
  }
>;

export type TargetKind = (typeof TARGET_KINDS)[number];
export type Target = ObjectOf<typeof TARGET_FIELDS>;
export type SelfState = ObjectOf<typeof SELF_STATE_FIELDS>;
export type PointOfInterest = ObjectOf<typeof POI_FIELDS>;
export type HeardSpeech = ObjectOf<typeof HEARD_FIELDS>;
export type Snapshot = ObjectOf<typeof SNAPSHOT_FIELDS>;

export type Role = (typeof ROLES)[number];
export type TraitName = (typeof TRAIT_NAMES)[number];
export type Traits = Record<TraitName, number>;

export type Profile = ObjectOf<typeof PROFILE_FIELDS>;

/** A validated request; a request without a profile gets the empty one. */
export interface TickRequest {
  snapshot: Snapshot;
  profile: Profile;
}

export type Posture = 'standing' | 'crouched' | 'prone';
export type Speed = 'walk' | 'jog' | 'sprint';

/** Every intent carries only JSON scalars and {x,y,z} objects, so a mod can read it without a schema. */
export type Intent =
  | { kind: 'MoveTo'; to: Vec3; speed: Speed }
  | { kind: 'Engage'; target: number; fire: boolean }
  | { kind: 'Say'; text: string; channel: 'proximity' | 'radio' | 'global'; line_id: string; audio_url?: string }
  | { kind: 'Face'; yaw_deg: number }
  | { kind: 'Flee'; from: number }
  | { kind: 'Investigate'; at: Vec3 }
  | { kind: 'Emote'; name: string }
  | { kind: 'Idle'; reason: string }
  | { kind: 'Logoff' };

export interface TickResponse {
  agent: number;
  posture: Posture;
  intents: Intent[];
  /** Only when the tick asked for it (Brain.tick's `explain`): why the character did this. */
  why?: Why;
}

/** One option the brain's utility scoring weighed this tick, with its score (higher wins). */
export interface WhyOption {
  name: string;
  score: number;
}

/**
 * Why a character did what it did on one tick, as the brain decided it (nothing recomputed):
 * its mode and goal after the decision, the top three options its scoring weighed this tick
 * (best first; empty when the deciding rule scored nothing), and the rule that decided: the
 * name of the table's behaviour, then ` + ` and the name of each overlay that added an intent.
 */
export interface Why {
  mode: string;
  goal: string;
  options: WhyOption[];
  rule: string;
}

// ---- configuration bundle ----

export const POLICY_KEYS = [
  'llm_dialogue',
  'voice_in',
  'voice_out',
  'emotes',
  'phrase_cache',
  'flavor',
  'human_factors',
  'emotional_events',
  'game_knowledge',
  'global_goals',
  'squads',
  'memory',
] as const;
export type PolicyKey = (typeof POLICY_KEYS)[number];
/** Any omitted key means on. */
export type Policy = Partial<Record<PolicyKey, boolean>>;

export interface GameFraming {
  name: string;
  premise: string;
  goal: string;
}

export interface FlavorTheme {
  text: string;
  weight: number;
}

export interface Flavor {
  enabled: boolean;
  global: string;
  themes: FlavorTheme[];
  themes_per_bot: number;
  seed: number;
}

export interface TraitRange {
  mean: number;
  spread: number;
}

export type Population = Record<TraitName, TraitRange> & { session_min: [number, number] };

/**
 * A heard line stamped more than this after its tick's `time_s` is ignored, by memory, by
 * the turn toward the speaker and by the sidecar's dialogue tier: lines are new when stamped after the newest one heard, so one
 * line on another clock (milliseconds, the wall clock) would otherwise deafen the character
 * until its clock caught up. The slack allows a mod that stamps chat a moment after it read
 * the tick's time.
 */
export const HEARD_AHEAD_S = 1;

/**
 * Whether a target of this id is in the snapshot. A heard line "from" the character's own id
 * is its own (a mod feeding its Say back through chat) unless a target of that id is there: a
 * game whose player ids and character ids overlap must not lose a player's words.
 */
export function hasTarget(targets: readonly Target[], id: number): boolean {
  for (let i = 0; i < targets.length; i++) if (targets[i]!.id === id) return true;
  return false;
}

export const ECONOMIES = ['Silent', 'Frugal', 'Normal', 'Chatty'] as const;
export type Economy = (typeof ECONOMIES)[number];

export interface SpeechLimits {
  per_5min: number;
  per_hour: number;
  per_day: number;
  economy: Economy;
}

export interface PhraseCacheConfig {
  variety_target: number;
  max_reuse: number;
  allow_player_names: boolean;
}

export interface ConfigBundle {
  version: number;
  policy: Policy;
  game: GameFraming | null;
  flavor: Flavor;
  population: Population;
  speech: { limits: SpeechLimits; phrase_cache: PhraseCacheConfig };
  /** Game flags (see flags.ts); optional, none when left out. */
  flags?: Flags;
}

export type { Problem } from './problem.js';

/** One row of the roster read model. */
export interface Survivor {
  agent: number;
  name: string;
  alignment: string;
  goal: string;
  state: string;
}

/** One character on the live map: its roster row, where it stands (metres), its squad ('' for none) and health. */
export interface MapSurvivor extends Survivor {
  squad: string;
  x: number;
  z: number;
  health: number;
}
