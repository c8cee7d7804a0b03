import { LRUCache } from 'lru-cache';
import type { AgentState } from './state.js';

export const DEFAULT_MAX_AGENTS = 10_000;
/** An agent whose next tick comes more than this many game seconds after its last one starts afresh. */
export const DEFAULT_STALE_AFTER_S = 3600;

/**
 * Per-agent state, bounded by an LRU of at most `max` agents (the least recently ticked go
 * first) and forgotten by the agent's own clock: a tick more than `staleAfterS` game seconds
 * after the agent's last one finds no state (current()). Only the agent's own ticks decide
 * that, never other agents' times or how agents are spread over workers, so a reply does not
 * depend on who else is ticking. There is no TTL: lru-cache's TTL reads the wall clock, which
 * the brain must not. `onDrop` runs for every agent leaving the store (eviction, staleness,
 * clear) so squads can forget it.
 */
export class AgentStore {
  private readonly cache: LRUCache<number, AgentState>;

  constructor(
    readonly max: number,
    readonly staleAfterS: number,
    onDrop: (a: AgentState) => void,
  ) {
    this.cache = new LRUCache<number, AgentState>({ max, dispose: (a) => onDrop(a) });
  }

  get size(): number {
    return this.cache.size;
  }

  get(id: number): AgentState | undefined {
    return this.cache.get(id);
  }

  /** The agent's state for a tick at game time `time`; dropped first when it went stale by its own clock. */
  current(id: number, time: number): AgentState | undefined {
    const a = this.cache.get(id);
    if (a === undefined || !(time - a.lastT > this.staleAfterS)) return a;
    this.cache.delete(id);
    return undefined;
  }

  /** Without touching recency: persona and roster reads must not reorder eviction. */
  peek(id: number): AgentState | undefined {
    return this.cache.peek(id);
  }

  set(a: AgentState): void {
    this.cache.set(a.id, a);
  }

  clear(): void {
    this.cache.clear();
  }

  values(): IterableIterator<AgentState> {
    return this.cache.values();
  }
}
