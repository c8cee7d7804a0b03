import { away, goAway } from './away.js';
import type { Behaviour, Switches, TableSwitch } from './context.js';
import { dead } from './dead.js';
import { engage, engageReactive } from './engage.js';
import { flee, fleeReactive } from './flee.js';
import { flightGoesOnBehaviour } from './flight.js';
import { goalHuman, goalPlain, idle } from './goals.js';
import { investigate, investigateReactive } from './investigate.js';
import { logoff } from './logoff.js';
import { acknowledge, ambient, callout, combatEmote, fatigue, heedCallout, look, plainEmote, watchContact } from './overlays.js';
import { patrol, patrolGoals, patrolReactive, patrolReactiveGoals } from './patrol.js';
import {
  followLeaderHuman,
  followLeaderPlain,
  leaderWaitsHuman,
  leaderWaitsPlain,
  regroupGoals,
  regroupHuman,
  regroupHumanGoals,
  regroupPlain,
} from './squad.js';
import { windDown } from './wind-down.js';

/**
 * The decision, in priority order: the first behaviour that applies decides the tick. A
 * behaviour's `when` says which policy sets it belongs to; variants of one rule (the purely
 * reactive flight and the human one) sit side by side at the same rank.
 */
export const BEHAVIOURS: readonly Behaviour[] = [
  dead,
  logoff,
  away,
  fleeReactive,
  flee,
  engageReactive,
  engage,
  flightGoesOnBehaviour,
  investigateReactive,
  investigate,
  windDown,
  goAway,
  followLeaderHuman,
  followLeaderPlain,
  leaderWaitsHuman,
  leaderWaitsPlain,
  patrolReactive,
  patrolReactiveGoals,
  patrol,
  patrolGoals,
  regroupHumanGoals,
  regroupHuman,
  regroupGoals,
  regroupPlain,
  goalHuman,
  goalPlain,
  idle,
];

/** What runs on top of the decision, in order; every overlay that applies acts. */
export const OVERLAYS: readonly Behaviour[] = [callout, heedCallout, watchContact, look, acknowledge, ambient, combatEmote, plainEmote, fatigue];

const TABLE_SWITCHES: readonly TableSwitch[] = ['human', 'goals', 'emotes'];

export interface Table {
  readonly decide: readonly Behaviour[];
  readonly overlays: readonly Behaviour[];
  /** The same as indexes into BEHAVIOURS and OVERLAYS, for dispatch.ts. */
  readonly decideIds: Uint8Array;
  readonly overlayIds: Uint8Array;
}

function select(list: readonly Behaviour[], on: Readonly<Record<TableSwitch, boolean>>): Behaviour[] {
  return list.filter((b) => TABLE_SWITCHES.every((k) => b.when[k] === undefined || b.when[k] === on[k]));
}

function indexOf(human: boolean, goals: boolean, emotes: boolean): number {
  return (human ? 4 : 0) + (goals ? 2 : 0) + (emotes ? 1 : 0);
}

/** One table per combination of the table's switches, built once when the module loads. */
const TABLES: readonly Table[] = Array.from({ length: 8 }, (_, i) => {
  const on = { human: (i & 4) !== 0, goals: (i & 2) !== 0, emotes: (i & 1) !== 0 };
  const decide = select(BEHAVIOURS, on);
  const overlays = select(OVERLAYS, on);
  return {
    decide,
    overlays,
    decideIds: Uint8Array.from(decide, (b) => BEHAVIOURS.indexOf(b)),
    overlayIds: Uint8Array.from(overlays, (b) => OVERLAYS.indexOf(b)),
  };
});

/** The table for a bundle's switches. */
export function tableFor(sw: Switches): Table {
  return TABLES[indexOf(sw.human, sw.goals, sw.emotes)]!;
}
