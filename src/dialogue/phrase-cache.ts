import { LRUCache } from 'lru-cache';
import type { PhraseCacheConfig } from '../../brain/types.js';
import type { Emotion, SituationKind } from './context.js';

/** The word a player's name becomes in a cached line (unless allow_player_names). */
export const NEUTRAL_NAME = 'friend';

interface CachedLine {
  text: string;
  /** Times served from the cache (the first, live use is not counted). */
  uses: number;
}

interface Bucket {
  lines: CachedLine[];
}

const BUCKETS = ['low', 'mid', 'high'] as const;

/** The intensity bucket of an emotion: 0 low, 1 mid, 2 high; -1 for none. */
export function emotionLevel(e: Emotion | null): number {
  if (!e) return -1;
  return e.intensity < 0.34 ? 0 : e.intensity < 0.67 ? 1 : 2;
}

function emotionBucket(e: Emotion | null): string {
  if (!e) return 'none';
  return `${e.name}:${BUCKETS[emotionLevel(e)]}`;
}

/**
 * The situation signature lines are cached under: like situations (same role, goal,
 * situation kind, event kind and emotion bucket) may share lines.
 */
export function situationSignature(role: string, goal: string, kind: SituationKind, eventKind: string, emotion: Emotion | null): string {
  return `${role}|${goal}|${kind}|${eventKind}|${emotionBucket(emotion)}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * Replaces each name, as a whole word and in any case, with the neutral word. Compiling the
 * Unicode-aware pattern costs far more than the rest of storing a line, and most lines name
 * none of the players around: when the line and the name are both ASCII, a name that does
 * not occur in the lower-cased line cannot match (Unicode case folding adds matches only for
 * non-ASCII characters), so it is skipped uncompiled.
 */
export function stripNames(text: string, names: readonly string[]): string {
  let out = text;
  let lower: string | null = null;
  for (const name of names) {
    const n = name.trim();
    if (n.length < 2) continue;
    if (ASCII.test(n) && ASCII.test(out)) {
      lower ??= out.toLowerCase();
      if (!lower.includes(n.toLowerCase())) continue;
    }
    out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(n)}(?![\\p{L}\\p{N}_])`, 'giu'), NEUTRAL_NAME);
    lower = null;
  }
  return out;
}

/**
 * Lines reused across like situations (`speech.phrase_cache`). The cache holds at most
 * `variety_target` distinct lines in all (least recently used signatures go first); a line
 * is served at most `max_reuse` times, then retired to make room for a fresh one.
 */
export class PhraseCache {
  private cache: LRUCache<string, Bucket> | null;
  private size = 0;
  /**
   * Bumped on every change of what the cache could serve, so a caller that found nothing
   * usable for a signature can skip asking again until something changed.
   */
  changes = 0;

  constructor(
    private config: PhraseCacheConfig,
    private readonly random: () => number,
  ) {
    this.cache = this.build();
  }

  private build(): LRUCache<string, Bucket> | null {
    this.size = 0;
    this.changes++;
    if (this.config.variety_target < 1) return null;
    return new LRUCache<string, Bucket>({
      maxSize: this.config.variety_target,
      sizeCalculation: (b) => Math.max(1, b.lines.length),
      dispose: (b) => {
        this.changes++;
        this.size -= b.lines.length;
      },
    });
  }

  configure(config: PhraseCacheConfig): void {
    const same =
      config.variety_target === this.config.variety_target &&
      config.max_reuse === this.config.max_reuse &&
      config.allow_player_names === this.config.allow_player_names;
    this.config = config;
    this.changes++;
    if (!same) this.cache = this.build();
  }

  /** Distinct lines held. */
  get lines(): number {
    return this.size;
  }

  /**
   * Whether to serve this situation from the cache rather than ask the model: only when a
   * line is available, with probability `preference`, lowered while the cache is still short
   * of its variety target (fresh lines are worth more then). Always when the model is down.
   */
  prefers(signature: string, preference: number, modelAvailable: boolean): boolean {
    if (!this.usable(signature)) return false;
    if (!modelAvailable) return true;
    const fill = Math.min(1, this.size / Math.max(1, this.config.variety_target));
    return this.random() < preference * (0.5 + 0.5 * fill);
  }

  private usable(signature: string): boolean {
    const b = this.cache?.peek(signature);
    if (!b) return false;
    for (const l of b.lines) if (l.uses < this.config.max_reuse) return true;
    return false;
  }

  /** Serves the least used line for the signature (not `avoid` when another exists); null when none is left. */
  take(signature: string, avoid: string): string | null {
    const cache = this.cache;
    const b = cache?.get(signature);
    if (!cache || !b) return null;
    let best: CachedLine | null = null;
    for (const l of b.lines) {
      if (l.uses >= this.config.max_reuse) continue;
      if (best === null || (best.text === avoid && l.text !== avoid) || (l.uses < best.uses && !(l.text === avoid && best.text !== avoid))) best = l;
    }
    if (!best) return null;
    this.changes++;
    best.uses++;
    if (best.uses >= this.config.max_reuse) {
      b.lines.splice(b.lines.indexOf(best), 1);
      this.size--;
      if (b.lines.length === 0) cache.delete(signature);
      else cache.set(signature, b);
    }
    return best.text;
  }

  /** Keeps a fresh line for later, player names stripped unless allowed. */
  add(signature: string, text: string, playerNames: readonly string[]): void {
    const cache = this.cache;
    if (!cache || this.config.max_reuse <= 0) return;
    const line = this.config.allow_player_names ? text : stripNames(text, playerNames);
    const b = cache.get(signature) ?? { lines: [] };
    if (b.lines.some((l) => l.text === line)) return;
    // Replacing a bucket disposes the old value (same object): take it out first so the size stays right.
    if (cache.has(signature)) cache.delete(signature);
    // One signature may hold the whole target but no more (a bigger entry would not be stored): the oldest line yields.
    if (b.lines.length >= this.config.variety_target) b.lines.shift();
    b.lines.push({ text: line, uses: 0 });
    this.changes++;
    this.size += b.lines.length;
    cache.set(signature, b);
  }
}
