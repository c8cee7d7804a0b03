import type { ConfigBundle, Survivor, TickRequest, TickResponse } from './types.js';

export interface BrainOptions {
  /** Most agents whose state is kept; the least recently seen are evicted beyond it. */
  maxAgents?: number;
}

/**
 * The decision engine for one bundle: perception in, intents out. Pure and deterministic:
 * time comes only from the snapshot, randomness only from a PRNG seeded by the bundle and
 * the agent.
 */
export class Brain {
  private bundle: ConfigBundle;

  constructor(bundle: ConfigBundle, _options: BrainOptions = {}) {
    this.bundle = bundle;
  }

  get version(): number {
    return this.bundle.version;
  }

  setBundle(bundle: ConfigBundle): void {
    this.bundle = bundle;
  }

  tick(request: TickRequest): TickResponse {
    return { agent: request.snapshot.agent, posture: 'standing', intents: [{ kind: 'Idle', reason: 'none' }] };
  }

  /** Telemetry counters by kind since the last drain (spoke, snap, squad, heard, plan, afk, spawn, logoff, block, ...). */
  drainEvents(): Record<string, number> {
    return {};
  }

  roster(): Survivor[] {
    return [];
  }

  get agentCount(): number {
    return 0;
  }
}
