import { Brain } from '../../brain/index.js';
import type { BrainState, ConfigBundle, Survivor, TickRequest, TickResponse } from '../../brain/index.js';
import { dialoguePersona, type DialoguePersona } from './dialogue.js';

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
  /**
   * Inline evaluation answers synchronously, which spares the handler a promise per tick.
   * `wantPersona`: the dialogue tier may read this agent's persona after the tick (workers
   * then send it back with the reply; inline ignores it).
   */
  tick(request: TickRequest, wantPersona?: boolean): TickResponse | Promise<TickResponse>;
  /** The agent's persona for the dialogue tier: from the Brain inline, else the last one a worker sent. */
  persona(agent: number, time: number): DialoguePersona | null;
  /** Every agent's state, merged across shards (Brain.exportState). */
  exportState(): Promise<BrainState>;
  /** Replaces all agent state (Brain.importState); an invalid document throws and changes nothing. Resolves with the agents held. */
  importState(state: unknown): Promise<number>;
  /** Resolves once every brain uses the bundle; ticks queued before the call still see the old one. */
  setBundle(bundle: ConfigBundle): Promise<void>;
  drain(): Promise<BrainTelemetry>;
  close(): Promise<void>;
}

export interface EvaluatorOptions {
  /** Most agents kept per Brain (the engine evicts the least recently seen beyond it). */
  maxAgents?: number;
}

export class InlineEvaluator implements Evaluator {
  readonly mode = 'inline';
  readonly workers = 0;
  private readonly brain: Brain;

  constructor(bundle: ConfigBundle, options: EvaluatorOptions = {}) {
    this.brain = new Brain(bundle, options.maxAgents === undefined ? {} : { maxAgents: options.maxAgents });
  }

  tick(request: TickRequest): TickResponse {
    return this.brain.tick(request);
  }

  persona(agent: number, time: number): DialoguePersona | null {
    const p = this.brain.persona(agent);
    return p === null ? null : dialoguePersona(p, time);
  }

  async exportState(): Promise<BrainState> {
    return this.brain.exportState();
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

  async close(): Promise<void> {}
}

/** Adds counters of b into a (telemetry merge across shards). */
export function mergeEvents(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  for (const key of Object.keys(b)) a[key] = (a[key] ?? 0) + (b[key] ?? 0);
  return a;
}
