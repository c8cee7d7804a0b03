/**
 * Game flags as the configuration page sees them, and their evaluation: a mirror of the
 * sidecar's (brain/flags.ts), so the page's preview shows what a mod will read. Free of UI
 * imports, so the bundle types can use it.
 */

export type FlagType = 'boolean' | 'string' | 'number' | 'object';
export const FLAG_TYPES: FlagType[] = ['boolean', 'string', 'number', 'object'];

export interface FlagDef {
  type: FlagType;
  value: unknown;
  description?: string;
  rules?: { if: Record<string, any>; value: unknown; variant?: string }[];
}
export type Flags = Record<string, FlagDef>;

export interface PreviewContext {
  server: string;
  map: string;
  players: number | null;
  /** Epoch ms. */
  at: number;
}

/** The sidecar's bucket of a targetingKey for a flag (see docs/flags.md): FNV-1a, modulo 10,000, over 100. */
export function bucketOf(flagKey: string, targetingKey: string): number {
  let h = 0x811c9dc5;
  const s = `${flagKey}/${targetingKey}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return ((h >>> 0) % 10_000) / 100;
}

export type Outcome = { value: unknown; variant: string; reason: string } | { error: string };

export function evaluate(key: string, flag: FlagDef, ctx: PreviewContext, targetingKey: string): Outcome {
  const rules = flag.rules ?? [];
  if (rules.length === 0) return { value: flag.value, variant: 'default', reason: 'STATIC' };
  for (let i = 0; i < rules.length; i++) {
    const c = rules[i]!.if ?? {};
    if (c.server && !(c.server as string[]).includes(ctx.server)) continue;
    if (c.map && !(c.map as string[]).includes(ctx.map)) continue;
    if (c.players) {
      if (ctx.players === null || (c.players.min !== undefined && ctx.players < c.players.min) || (c.players.max !== undefined && ctx.players > c.players.max))
        continue;
    }
    if (c.time) {
      if (c.time.from !== undefined && ctx.at < Date.parse(c.time.from)) continue;
      if (c.time.to !== undefined && ctx.at >= Date.parse(c.time.to)) continue;
    }
    if (c.percentage !== undefined) {
      if (!targetingKey) return { error: 'TARGETING_KEY_MISSING' };
      if (bucketOf(key, targetingKey) >= c.percentage) continue;
    }
    return { value: rules[i]!.value, variant: rules[i]!.variant ?? `rule-${i + 1}`, reason: c.percentage !== undefined ? 'SPLIT' : 'TARGETING_MATCH' };
  }
  return { value: flag.value, variant: 'default', reason: 'DEFAULT' };
}
