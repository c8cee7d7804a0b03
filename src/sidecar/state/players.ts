import type { TickRequest } from '../../../brain/index.js';

/** Slots an IdTable starts with (a power of two). */
export const ID_TABLE_INITIAL_SLOTS = 1024;
/** An IdTable doubles once more than this share of its slots is in use. */
export const ID_TABLE_MAX_LOAD = 0.75;
/**
 * Most ids an IdTable keeps: beyond it a new id is not kept (a count of them saturates), so a
 * flood of made-up ids costs at most 2^21 slots (16 MB) per table instead of growing with it.
 * No game has a million players or characters in one window.
 */
export const ID_TABLE_MAX_IDS = 1 << 20;

/** 2^32, to fold the high part of an id beyond 32 bits into its hash. */
const TWO_POW_32 = 4294967296;

/**
 * A set of ids (the tick schema's ids: safe integers, negative ones and -0 included, -0 the
 * same id as 0; NaN is never an id and is not kept): open addressing with linear probing over
 * one Float64Array, NaN marking a free slot. Adding one is a hash and a probe or two, no
 * allocation and no builtin call; at 8 bytes a slot and up to 3/4 full, 10,000 ids take
 * 128 KB, so the probe's cache miss, most of the cost on the tick path, is as rare as it gets.
 */
export class IdTable {
  private slots: Float64Array;
  private used = 0;
  /** Right shift taking a 32-bit hash to a slot index (32 - log2 of the slot count). */
  private shift: number;

  /** A table sized for about `ids` ids, keeping at most `maxIds`. */
  constructor(
    ids = 0,
    private readonly maxIds = ID_TABLE_MAX_IDS,
  ) {
    let slots = ID_TABLE_INITIAL_SLOTS;
    while (Math.min(ids, maxIds) > slots * ID_TABLE_MAX_LOAD) slots *= 2;
    this.slots = new Float64Array(slots).fill(NaN);
    this.shift = 32 - Math.log2(slots);
  }

  /** Ids in the table. */
  get size(): number {
    return this.used;
  }

  add(id: number): void {
    if (id !== id) return;
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = slotOf(id, this.shift);
    for (let key = slots[i]!; key === key; key = slots[i]!) {
      if (key === id) return;
      i = (i + 1) & mask;
    }
    if (this.used >= this.maxIds) return;
    slots[i] = id;
    if (++this.used > slots.length * ID_TABLE_MAX_LOAD) this.grow();
  }

  has(id: number): boolean {
    const slots = this.slots;
    const mask = slots.length - 1;
    let i = slotOf(id, this.shift);
    for (let key = slots[i]!; key === key; key = slots[i]!) {
      if (key === id) return true;
      i = (i + 1) & mask;
    }
    return false;
  }

  /** Calls `each` with every id, in no particular order. */
  forEach(each: (id: number) => void): void {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i++) {
      const key = slots[i]!;
      if (key === key) each(key);
    }
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Float64Array(old.length * 2).fill(NaN);
    const shift = this.shift - 1;
    const mask = slots.length - 1;
    for (let k = 0; k < old.length; k++) {
      const key = old[k]!;
      if (key !== key) continue;
      let i = slotOf(key, shift);
      while (slots[i] === slots[i]) i = (i + 1) & mask;
      slots[i] = key;
    }
    this.slots = slots;
    this.shift = shift;
  }
}

/**
 * Ids seen lately: an id counts when it was added within the last one to two windows. Two
 * IdTables, this window's and the previous one's, rotate on a timer, so adding (on the tick
 * path) touches only this window's table and reads no clock. It replaced two rotating Sets,
 * whose Set.add was a builtin call and, in a Set of 10,000 ids, two cache misses per id.
 */
export class RecentIds {
  private current = new IdTable();
  private previous = new IdTable();
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

  /** Ends a window: the ids of the one ending become the previous window's, older ones are forgotten. */
  rotate(): void {
    this.previous = this.current;
    // Sized for as many ids as the window that ended: the next one likely sees the same.
    this.current = new IdTable(this.previous.size);
  }

  has(id: number): boolean {
    return this.current.has(id) || this.previous.has(id);
  }

  /** Distinct ids added within the last one to two windows (a walk of the previous window's table: not for the tick path). */
  count(): number {
    let n = this.current.size;
    const current = this.current;
    this.previous.forEach((id) => {
      if (!current.has(id)) n++;
    });
    return n;
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
