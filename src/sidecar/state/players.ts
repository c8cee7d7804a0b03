import type { TickRequest } from '../../../brain/index.js';

/** Slots a RecentIds table starts with (a power of two). */
export const RECENT_IDS_INITIAL_SLOTS = 1024;

/** What a slot of a RecentIds table holds: nothing, an id last added in the previous window, or one added in this window. */
const EMPTY = 0;
const PREVIOUS = 1;
const CURRENT = 2;

/** 2^32, to fold the high part of an id beyond 32 bits into its hash. */
const TWO_POW_32 = 4294967296;

/**
 * Ids seen lately: an id counts when it was added within the last one to two windows. The
 * ids (the tick schema's ids: safe integers, negative ones and -0 included, -0 the same id as
 * 0) sit in an open-addressing hash table over a Float64Array, each slot marked with the
 * window it was last added in; rotating (on a timer, every window) keeps only this window's
 * ids, as the previous ones. Adding is a hash and a probe or two in typed arrays, no
 * allocation and no clock read, so it can sit on the tick path: it replaced two rotating
 * Sets, whose Set.add was a builtin call per id. The table doubles when half full and is
 * rebuilt at its live size on rotation, so it holds at most two windows of distinct ids.
 */
export class RecentIds {
  /** Slot i is table[2i] (its id) and table[2i + 1] (its mark): a probe touches one cache line. */
  private table = new Float64Array(2 * RECENT_IDS_INITIAL_SLOTS);
  /** Slots in use: the distinct ids of the two windows. */
  private used = 0;
  /** Right shift taking a 32-bit hash to a slot index (32 - log2 of the slot count). */
  private shift = 32 - Math.log2(RECENT_IDS_INITIAL_SLOTS);
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
    const table = this.table;
    const mask = table.length - 2;
    let i = slotOf(id, this.shift) << 1;
    for (;;) {
      if (table[i + 1] === EMPTY) break;
      if (table[i] === id) {
        table[i + 1] = CURRENT;
        return;
      }
      i = (i + 2) & mask;
    }
    table[i] = id;
    table[i + 1] = CURRENT;
    if (++this.used > table.length >> 2) this.rebuild(table.length, false);
  }

  /** Ends a window: the ids of the one ending become the previous window's, older ones are forgotten. */
  rotate(): void {
    let live = 0;
    const table = this.table;
    for (let i = 1; i < table.length; i += 2) if (table[i] === CURRENT) live++;
    let slots = RECENT_IDS_INITIAL_SLOTS;
    while (live * 2 > slots) slots *= 2;
    this.rebuild(slots, true);
  }

  has(id: number): boolean {
    const table = this.table;
    const mask = table.length - 2;
    for (let i = slotOf(id, this.shift) << 1; table[i + 1] !== EMPTY; i = (i + 2) & mask) if (table[i] === id) return true;
    return false;
  }

  /** Distinct ids added within the last one to two windows. */
  count(): number {
    return this.used;
  }

  /**
   * The ids moved into a new table of `slots` slots: all of them as they are marked (growing),
   * or, `rotating`, only this window's, marked as the previous window's.
   */
  private rebuild(slots: number, rotating: boolean): void {
    const table = this.table;
    const next = new Float64Array(2 * slots);
    const shift = 32 - Math.log2(slots);
    const mask = next.length - 2;
    let used = 0;
    for (let k = 0; k < table.length; k += 2) {
      const mark = table[k + 1]!;
      if (mark === EMPTY || (rotating && mark !== CURRENT)) continue;
      let i = slotOf(table[k]!, shift) << 1;
      while (next[i + 1] !== EMPTY) i = (i + 2) & mask;
      next[i] = table[k]!;
      next[i + 1] = rotating ? PREVIOUS : mark;
      used++;
    }
    this.table = next;
    this.shift = shift;
    this.used = used;
  }
}

/**
 * The slot an id starts probing at: its low and high 32 bits folded (exact for every safe
 * integer, negative ones too; 0 and -0 fold alike), then Fibonacci hashing, whose top bits
 * spread consecutive ids over the table.
 */
function slotOf(id: number, shift: number): number {
  return Math.imul(id ^ ((id / TWO_POW_32) | 0), 0x9e3779b1) >>> shift;
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
