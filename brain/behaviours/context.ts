import type { Counters } from '../counters.js';
import type { Framing } from '../goals.js';
import type { Mode } from '../modes.js';
import { newPerception, type Perception } from '../reactive/perception.js';
import type { Squad, Squads } from '../squads.js';
import type { AgentState } from '../state.js';
import type { Intent, Posture, Profile, SelfState, Snapshot, Speed, Target } from '../types.js';
import type { WhyRecorder } from './why.js';

/** Policy keys read once per bundle so the tick tests booleans, not object lookups. */
export interface Switches {
  human: boolean;
  goals: boolean;
  knowledge: boolean;
  squads: boolean;
  memory: boolean;
  emotions: boolean;
  emotes: boolean;
  flavor: boolean;
  allowNames: boolean;
  framing: Framing;
}

/** The switches a behaviour table is chosen by: a behaviour's `when` names some of them. */
export type TableSwitch = 'human' | 'goals' | 'emotes';

/**
 * Everything one decision reads and writes. One instance per Brain, refilled by every tick
 * (tick is synchronous and nothing keeps a reference past it), so the table allocates nothing.
 * Fields referring to the request are valid only until the tick returns.
 */
export class TickCtx {
  // The brain's, set once.
  readonly squads: Squads;
  readonly counters: Counters;
  readonly p: Perception = newPerception();
  sw: Switches;
  // This tick's inputs.
  s: Snapshot = null as unknown as Snapshot;
  st: SelfState = null as unknown as SelfState;
  /**
   * The snapshot's targets, as perception loaded them. Snapshots come in several shapes (the
   * optional fields present or not), so a load from one is a polymorphic lookup; a load from
   * here is a field read. The character itself is not among them (withoutSelf).
   */
  targets: readonly Target[] = [];
  prof: Profile = {};
  a: AgentState = null as unknown as AgentState;
  sq: Squad | null = null;
  first = false;
  dt = 0;
  time = 0;
  wasMode: Mode = 'idle';
  // What the deciding behaviour sets beside its intents.
  posture: Posture = 'standing';
  speed: Speed | null = null;
  mode: Mode = 'idle';
  away = false;
  /** A speed a behaviour's `applies` worked out for its `act` (regroups). */
  plannedSpeed: Speed | 'stand' | null = null;
  /** Whether a calm character heard a known speaker this tick (set by the `look` overlay). */
  heard = false;
  /** Whether the character took up a squadmate's callout this tick (a contact new to it). */
  adopted = false;
  /** The explanation being recorded when the tick asked for one, else null: the few places that score test this and nothing else. */
  why: WhyRecorder | null = null;

  constructor(squads: Squads, counters: Counters, sw: Switches) {
    this.squads = squads;
    this.counters = counters;
    this.sw = sw;
  }
}

/**
 * One entry of the decision table: the first behaviour whose `applies` holds decides the tick
 * (its `act` pushes the intents and sets posture, speed and mode). `applies` may keep what it
 * worked out on the context for `act`, and may change the agent's state where the rule it
 * checks does (a break that a hit ends, a coin drawn for going away): it runs only when every
 * behaviour before it has declined, exactly as a branch of a priority chain would.
 */
export interface Behaviour {
  /** The rule's name, as an explanation reports it. */
  readonly name: string;
  /** The tables this behaviour is in: every named switch must have this value (absent: all tables). */
  readonly when: Readonly<Partial<Record<TableSwitch, boolean>>>;
  applies(c: TickCtx): boolean;
  act(c: TickCtx, out: Intent[]): void;
}
