import { LRUCache } from 'lru-cache';
import type { AgentState } from './state.js';

export const DEFAULT_MAX_AGENTS = 10_000;
/** Agents whose last tick is this many game seconds behind the newest tick seen are dropped. */
export const DEFAULT_STALE_AFTER_S = 3600;
/** The stale sweep runs once per this many ticks, so its cost is spread thin. */
const SWEEP_EVERY = 1024;

/**
 * Per-agent state, bounded two ways: an LRU of at most `max` agents (the least recently
 * ticked go first), and a sweep of agents not seen for `staleAfterS` of game time. There is
 * no TTL: lru-cache's TTL reads the wall clock, which the brain must not. `onDrop` runs for
 * every agent leaving the store (eviction, sweep, clear) so squads can forget it.
 */
export class AgentStore {
  private readonly cache: LRUCache<number, AgentState>;
  private newestT = -Infinity;
  private sinceSweep = 0;
  private readonly doomed: number[] = [];

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

  /** Without touching recency: persona and roster reads must not reorder eviction. */
  peek(id: number): AgentState | undefined {
    return this.cache.peek(id);
  }

  set(a: AgentState): void {
    this.cache.set(a.id, a);
  }

  clear(): void {
    this.cache.clear();
    this.newestT = -Infinity;
    this.sinceSweep = 0;
  }

  values(): IterableIterator<AgentState> {
    return this.cache.values();
  }

  /** Notes a tick's game time and now and then drops agents left far behind it. */
  touched(time: number): void {
    if (time > this.newestT) this.newestT = time;
    if (++this.sinceSweep < SWEEP_EVERY) return;
    this.sinceSweep = 0;
    this.sweep();
  }

  sweep(): void {
    const cutoff = this.newestT - this.staleAfterS;
    // Least recently used first; stop at the first fresh one, the rest were ticked later.
    for (const a of this.cache.rvalues()) {
      if (a === undefined) continue;
      if (a.lastT >= cutoff) break;
      this.doomed.push(a.id);
    }
    for (const id of this.doomed) this.cache.delete(id);
    this.doomed.length = 0;
  }
}
