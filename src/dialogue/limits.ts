import type { SpeechLimits } from '../../brain/types.js';

const WINDOWS_S = [5 * 60, 60 * 60, 24 * 60 * 60] as const;

/**
 * One character's spoken-line times, with a start index per window. Game time only moves
 * forward per agent, so each index only advances: a check is a few comparisons, and the
 * array is compacted now and then rather than shifted on every expiry.
 */
export class SpeechWindows {
  times: number[] = [];
  starts = [0, 0, 0];

  reset(): void {
    this.times.length = 0;
    this.starts[0] = this.starts[1] = this.starts[2] = 0;
  }

  /** Advances the window starts to `t`; a clock that went backwards (a game restart) resets. */
  advance(t: number): void {
    const times = this.times;
    const last = times.length > 0 ? times[times.length - 1]! : -Infinity;
    if (t < last) {
      this.reset();
      return;
    }
    for (let w = 0; w < 3; w++) {
      const from = t - WINDOWS_S[w]!;
      let i = this.starts[w]!;
      while (i < times.length && times[i]! <= from) i++;
      this.starts[w] = i;
    }
    const dead = this.starts[2]!;
    if (dead > 32 && dead * 2 > times.length) {
      times.splice(0, dead);
      for (let w = 0; w < 3; w++) this.starts[w]! -= dead;
    }
  }

  count(w: 0 | 1 | 2): number {
    return this.times.length - this.starts[w]!;
  }
}

/**
 * Per-character speech limits of the bundle (`speech.limits`): at most per_5min lines in
 * any 5 minutes of game time, per_hour in any hour, per_day in any 24 hours. Windows slide
 * on the snapshot's `time_s`, never on the wall clock, so replays and tests are exact.
 */
export class SpeechLimiter {
  private readonly agents = new Map<number, SpeechWindows>();

  constructor(private limits: Pick<SpeechLimits, 'per_5min' | 'per_hour' | 'per_day'>) {}

  setLimits(limits: Pick<SpeechLimits, 'per_5min' | 'per_hour' | 'per_day'>): void {
    this.limits = limits;
  }

  /** Whether one more line at game time `t` stays within every window. */
  allows(agent: number, t: number): boolean {
    return this.allowsIn(this.agents.get(agent) ?? null, t);
  }

  record(agent: number, t: number): void {
    let w = this.agents.get(agent);
    if (!w) this.agents.set(agent, (w = new SpeechWindows()));
    this.recordIn(w, t);
  }

  /**
   * allows() for windows the caller keeps itself (null: nothing spoken yet), so a caller that
   * already holds a character's state needs no look-up here. Windows kept this way are not
   * in this limiter's own map: use either form for a character, not both.
   */
  allowsIn(w: SpeechWindows | null, t: number): boolean {
    const l = this.limits;
    if (l.per_5min <= 0 || l.per_hour <= 0 || l.per_day <= 0) return false;
    if (w === null) return true;
    w.advance(t);
    return w.count(0) < l.per_5min && w.count(1) < l.per_hour && w.count(2) < l.per_day;
  }

  /** record() into windows the caller keeps (see allowsIn). */
  recordIn(w: SpeechWindows, t: number): void {
    w.advance(t);
    w.times.push(t);
  }

  /** Lines counted in the 5-minute, hour and day windows ending at `t`. */
  counts(agent: number, t: number): [number, number, number] {
    const w = this.agents.get(agent);
    if (!w) return [0, 0, 0];
    w.advance(t);
    return [w.count(0), w.count(1), w.count(2)];
  }

  forget(agent: number): void {
    this.agents.delete(agent);
  }
}
