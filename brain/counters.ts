/**
 * Telemetry counters by kind. The set is fixed so the tick bumps a field of one monomorphic
 * object instead of hashing a string; `drain` builds the record only when the sidecar asks.
 */
export const COUNTER_KINDS = ['spawn', 'snap', 'squad', 'heard', 'plan', 'afk', 'logoff', 'block', 'emote'] as const;
export type CounterKind = (typeof COUNTER_KINDS)[number];

export class Counters {
  private readonly c: Record<CounterKind, number> = {
    spawn: 0,
    snap: 0,
    squad: 0,
    heard: 0,
    plan: 0,
    afk: 0,
    logoff: 0,
    block: 0,
    emote: 0,
  };

  bump(kind: CounterKind, n = 1): void {
    this.c[kind] += n;
  }

  /** The non-zero counters since the last drain, then zero. */
  drain(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const k of COUNTER_KINDS) {
      if (this.c[k] !== 0) out[k] = this.c[k];
      this.c[k] = 0;
    }
    return out;
  }
}
