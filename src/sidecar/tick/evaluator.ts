import { Brain } from '../../../brain/index.js';
import type { ConfigBundle, MapSurvivor, Survivor, TickRequest, TickResponse } from '../../../brain/index.js';
import { dialoguePersona, type DialoguePersona } from '../dialogue.js';

/** What the sidecar reports of its brains for telemetry: counters since the last drain, roster, agents held. */
export interface BrainTelemetry {
  events: Record<string, number>;
  roster: Survivor[];
  agents: number;
}

/**
 * Where ticks are evaluated: on the main thread, or in sharded worker pools. Both give the
 * same replies for the same tick sequence (per-agent state lives in exactly one Brain).
 */
export interface Evaluator {
  readonly mode: 'inline' | 'workers';
  readonly workers: number;
  /** Agents held right now when that is known without a round trip (inline); null with workers. */
  readonly liveAgents: number | null;
  /**
   * Inline evaluation answers synchronously, which spares the handler a promise per tick.
   * `wantPersona`: the dialogue tier may read this agent's persona after the tick (workers
   * then send it back with the reply; inline ignores it). `explain`: the response carries `why`
   * (Brain.tick's `explain`).
   */
  tick(request: TickRequest, wantPersona?: boolean, explain?: boolean): TickResponse | Promise<TickResponse>;
  /** The agent's persona for the dialogue tier: from the Brain inline, else the last one a worker sent. */
  persona(agent: number, time: number): DialoguePersona | null;
  /**
   * Every agent's state (Brain.exportState's `agents`) as JSON text in pieces: each piece is
   * one or more agent objects joined by commas. Inline, pieces are made a few hundred agents
   * at a time with a turn of the event loop between them, so ticks are not held up for the
   * whole export; workers make theirs on their own threads.
   */
  exportAgents(): AsyncGenerator<string>;
  /** Replaces all agent state (Brain.importState); an invalid document throws and changes nothing. Resolves with the agents held. */
  importState(state: unknown): Promise<number>;
  /** Resolves once every brain uses the bundle; ticks queued before the call still see the old one. */
  setBundle(bundle: ConfigBundle): Promise<void>;
  drain(): Promise<BrainTelemetry>;
  /** Every agent the brains hold with its position (Brain.mapRoster), ordered by agent id. */
  mapRoster(): Promise<MapSurvivor[]>;
  close(): Promise<void>;
}

/** Agents exported per turn of the event loop: about 10 ms of work. */
const EXPORT_BATCH = 250;

export interface EvaluatorOptions {
  /** Most agents kept per Brain (the engine evicts the least recently seen beyond it). */
  maxAgents?: number;
}

export class InlineEvaluator implements Evaluator {
  get liveAgents(): number {
    return this.brain.agentCount;
  }

  readonly mode = 'inline';
  readonly workers = 0;
  private readonly brain: Brain;

  constructor(bundle: ConfigBundle, options: EvaluatorOptions = {}) {
    this.brain = new Brain(bundle, options.maxAgents === undefined ? {} : { maxAgents: options.maxAgents });
  }

  tick(request: TickRequest, _wantPersona = false, explain = false): TickResponse {
    return this.brain.tick(request, explain);
  }

  persona(agent: number, time: number): DialoguePersona | null {
    const p = this.brain.persona(agent);
    return p === null ? null : dialoguePersona(p, time);
  }

  async *exportAgents(): AsyncGenerator<string> {
    for (const batch of this.brain.exportBatches(EXPORT_BATCH)) {
      yield batch.map((a) => JSON.stringify(a)).join(',');
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async importState(state: unknown): Promise<number> {
    this.brain.importState(state);
    return this.brain.agentCount;
  }

  async setBundle(bundle: ConfigBundle): Promise<void> {
    this.brain.setBundle(bundle);
  }

  async drain(): Promise<BrainTelemetry> {
    return { events: this.brain.drainEvents(), roster: this.brain.roster(), agents: this.brain.agentCount };
  }

  async mapRoster(): Promise<MapSurvivor[]> {
    return this.brain.mapRoster();
  }

  async close(): Promise<void> {}
}

/** Adds counters of b into a (telemetry merge across shards). */
export function mergeEvents(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  for (const key of Object.keys(b)) a[key] = (a[key] ?? 0) + (b[key] ?? 0);
  return a;
}
