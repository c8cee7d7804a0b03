import type { TickRequest } from '../../../brain/index.js';

/**
 * Ids seen lately: two sets rotate every window, so an id counts when it was added within the
 * last one to two windows. Adding is one Set.add and no clock read (the rotation runs on a
 * timer), so it can sit on the tick path.
 */
export class RecentIds {
  private current = new Set<number>();
  private previous = new Set<number>();
  private timer: NodeJS.Timeout | null = null;

  /** Window in ms (default 2 min). */
  constructor(private readonly windowMs = 120_000) {}

  start(): void {
    this.timer = setInterval(() => this.rotate(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  add(id: number): void {
    this.current.add(id);
  }

  rotate(): void {
    this.previous = this.current;
    this.current = new Set();
  }

  has(id: number): boolean {
    return this.current.has(id) || this.previous.has(id);
  }

  count(): number {
    let n = this.current.size;
    for (const id of this.previous) if (!this.current.has(id)) n++;
    return n;
  }
}

/**
 * Distinct players the characters have seen lately, for telemetry's `playersOnline`: a player
 * counts when some snapshot listed it (a target of kind `player`) within the last one to two
 * windows (default 2 min: a player out of every character's sight that long has likely left).
 */
export class PlayerTracker extends RecentIds {
  observe(request: TickRequest): void {
    const targets = request.snapshot.targets;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (t.kind === 'player') this.add(t.id);
    }
  }
}

/**
 * Characters ticked lately, for telemetry's roster: the brains keep a character's memory for
 * an hour of its own game time after its last tick, and a character the game no longer ticks
 * must not stay on the roster in its last state ("engaging" long after it left).
 */
export class RecentAgents extends RecentIds {}
