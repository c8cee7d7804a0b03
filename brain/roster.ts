import type { AgentState } from './state.js';
import type { MapSurvivor, Survivor } from './types.js';

export type Alignment = 'friendly' | 'neutral' | 'hostile';

/** A survivor who shot at a player this recently counts as hostile on the roster. */
const HOSTILE_MEMORY_S = 300;

/**
 * Alignment from role, then behaviour: bandits are hostile, guards and traders friendly, and
 * a survivor is neutral until it engages a player.
 */
export function alignmentOf(a: AgentState): Alignment {
  switch (a.role) {
    case 'bandit':
      return 'hostile';
    case 'guard':
    case 'trader':
      return 'friendly';
    default:
      return a.lastT - a.engagedPlayerT <= HOSTILE_MEMORY_S ? 'hostile' : 'neutral';
  }
}

export function survivorOf(a: AgentState): Survivor {
  return { agent: a.id, name: a.name, alignment: alignmentOf(a), goal: a.goal, state: a.mode };
}

/** Positions to the decimetre: a map needs no more, and the report stays small. */
const dm = (v: number): number => Math.round(v * 10) / 10;

export function mapSurvivorOf(a: AgentState): MapSurvivor {
  return { ...survivorOf(a), squad: a.squad, x: dm(a.x), z: dm(a.z), health: Math.round(a.health) };
}
