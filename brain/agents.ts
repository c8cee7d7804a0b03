import { LRUCache } from 'lru-cache';
import type { AgentState } from './state.js';

export const DEFAULT_MAX_AGENTS = 10_000;
/** An agent whose next tick comes more than this many game seconds after its last one starts afresh. */
export const DEFAULT_STALE_AFTER_S = 3600;
/**
 * A tick this many game seconds or more before the agent's last one is a new game clock (the
 * game server restarted while the sidecar kept its state, or an old state file was loaded):
 * the agent starts afresh, as after staleness, instead of waiting out the old clock's
 * deadlines for as long as that clock had run. Smaller steps back are ticks of one clock
 * delivered out of order by an asynchronous HTTP client, and are taken as they come.
 */
export const CLOCK_RESET_S = 60;

/**
 * Per-agent state, bounded by an LRU of at most `max` agents (the least recently ticked go
 * first) and forgotten by the agent's own clock: a tick more than `staleAfterS` game seconds
 * after the agent's last one, or CLOCK_RESET_S or more before it, finds no state (current()). Only the agent's own ticks decide
 * that, never other agents' times or how agents are spread over workers, so a reply does not
 * depend on who else is ticking. There is no TTL: lru-cache's TTL reads the wall clock, which
 * the brain must not. `onDrop` runs for every agent leaving the store (eviction, staleness,
 * clear) so squads can forget it and its memory block can be reused.
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

  /** The agent's state for a tick at game time `time`; dropped first when it went stale by its own clock, or that clock was reset. */
  current(id: number, time: number): AgentState | undefined {
    const a = this.cache.get(id);
    if (a === undefined) return a;
    const gap = time - a.lastT;
    if (!(gap > this.staleAfterS || gap <= -CLOCK_RESET_S)) return a;
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
