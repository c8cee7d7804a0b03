import type { TickRequest } from '../../../brain/index.js';

/**
 * Distinct players the characters have seen lately, for telemetry's `playersOnline`. Two
 * sets rotate every window: a player counts when some snapshot listed it (a target of kind
 * `player`) within the last one to two windows. Costs one Set.add per player target per
 * tick and no clock read on the tick path (the rotation runs on a timer).
 */
export class PlayerTracker {
  private current = new Set<number>();
  private previous = new Set<number>();
  private timer: NodeJS.Timeout | null = null;

  /** Window in ms (default 2 min: a player out of every character's sight that long has likely left). */
  constructor(private readonly windowMs = 120_000) {}

  start(): void {
    this.timer = setInterval(() => this.rotate(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  observe(request: TickRequest): void {
    const targets = request.snapshot.targets;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (t.kind === 'player') this.current.add(t.id);
    }
  }

  rotate(): void {
    this.previous = this.current;
    this.current = new Set();
  }

  count(): number {
    let n = this.current.size;
    for (const id of this.previous) if (!this.current.has(id)) n++;
    return n;
  }
}
