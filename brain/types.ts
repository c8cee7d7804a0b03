/**
 * The brain's public types: the tick contract of spec 001 §2.6 with the shapes BRAIN.md
 * decides, and the configuration bundle of §2.1. Nothing here knows about HTTP or storage.
 */

declare const brand: unique symbol;
/** A character's id as the game mod numbers it. */
export type AgentId = number & { readonly [brand]: 'AgentId' };

export interface Vec3 {
  x: number;
  y: number;
  z: number;
}

/** What a target is. The order is part of the stored memory format (a contact's kind is its index). */
export const TARGET_KINDS = ['player', 'ai', 'zombie', 'animal'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export interface Target {
  id: number;
  kind: TargetKind;
  pos: Vec3;
  hostile: boolean;
  visible: boolean;
  name?: string;
  health?: number;
}

export interface SelfState {
  pos: Vec3;
  heading_deg: number;
  health: number;
  blood: number;
  hunger: number;
  thirst: number;
  has_weapon: boolean;
  ammo: number;
}

export interface PointOfInterest {
  id: string;
  kind: string;
  pos: Vec3;
}

export interface HeardSpeech {
  from: number;
  text: string;
  at_s: number;
}

export interface Snapshot {
  agent: AgentId;
  time_s: number;
  self_state: SelfState;
  targets: Target[];
  route?: Vec3[];
  poi?: PointOfInterest[];
  heard?: HeardSpeech[];
  squad?: string;
}

export const ROLES = ['survivor', 'bandit', 'guard', 'trader'] as const;
export type Role = (typeof ROLES)[number];

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
export type TraitName = (typeof TRAIT_NAMES)[number];
export type Traits = Record<TraitName, number>;

export interface Profile {
  name?: string;
  role?: Role;
  coward?: boolean;
  traits?: Partial<Traits>;
}

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

export type IntentKind = Intent['kind'];

export interface TickResponse {
  agent: number;
  posture: Posture;
  intents: Intent[];
}

// ---- configuration bundle (spec 001 §2.1) ----

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
}

/** A problem found in input, located by a dotted path such as `flavor.themes[2].weight`. */
export interface Problem {
  path: string;
  message: string;
}

/** One row of the roster read model (spec 001 §2.6 names these four fields). */
export interface Survivor {
  agent: number;
  name: string;
  alignment: string;
  goal: string;
  state: string;
}
