import { isObj, quotedText, quotedValue, type Obj } from './json.js';
import type { Problem } from './problem.js';

/**
 * Game flags: typed live settings of the game itself (double XP, zombie density, trader
 * prices) carried in a bundle's optional `flags`, evaluated locally by the sidecar against an
 * evaluation context (OpenFeature's: a `targetingKey` plus attributes) and served over OFREP.
 *
 *   "double_xp": { "type": "boolean", "value": false,
 *                  "rules": [{ "if": { "time": { "from": "2026-12-05T00:00:00Z", "to": "2026-12-07T00:00:00Z" } }, "value": true }] }
 *
 * The first rule whose every condition holds gives the value; none does, the flag's `value`.
 */

export const FLAG_TYPES = ['boolean', 'string', 'number', 'object'] as const;
export type FlagType = (typeof FLAG_TYPES)[number];
export type FlagValue = boolean | string | number | Obj;

/** Conditions of a rule on the evaluation context; all present must hold. */
export interface FlagCondition {
  /** The context's `server` (a server id) is one of these. */
  server?: string[];
  /** The context's `map` is one of these. */
  map?: string[];
  /** The context's `players` (a count) is within [min, max]; a bound left out is open. */
  players?: { min?: number; max?: number };
  /** Now (UTC) is in [from, to); RFC 3339 instants, either may be left out. */
  time?: { from?: string; to?: string };
  /** The targetingKey's bucket for this flag (see bucketOf, 0 to 100) is below this. */
  percentage?: number;
}

export interface FlagRule {
  if: FlagCondition;
  value: FlagValue;
  /** Shown as the OFREP variant; default `rule-N` (N from 1). */
  variant?: string;
}

export interface FlagDefinition {
  type: FlagType;
  /** The value when no rule matches. */
  value: FlagValue;
  description?: string;
  rules?: FlagRule[];
}

export type Flags = Record<string, FlagDefinition>;

const FLAG_LIMITS_DEPTH = 8;

export const FLAG_LIMITS = {
  /** Flags in one bundle. */
  maxFlags: 256,
  /** Characters of a flag key; keys are letters, digits, `_`, `-` and `.`. */
  maxKey: 64,
  /** Rules of one flag. */
  maxRules: 32,
  /** Entries of a `server` or `map` list. */
  maxListEntries: 64,
  /** Characters of a string value, list entry, variant or description. */
  maxString: 2000,
  /** Bytes of an object value as JSON. */
  maxObjectBytes: 8 * 1024,
  /** Nesting depth of an object value. */
  maxObjectDepth: FLAG_LIMITS_DEPTH,
  /** Bytes of the whole `flags` as JSON. */
  maxTotalBytes: 256 * 1024,
} as const;

const FLAG_KEYS = ['type', 'value', 'description', 'rules'] as const;
const RULE_KEYS = ['if', 'value', 'variant'] as const;
const COND_KEYS = ['server', 'map', 'players', 'time', 'percentage'] as const;
export const FLAG_KEY_PATTERN = /^[A-Za-z0-9_.-]+$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Whether `v` nests deeper than `limit` levels. The walk stops at the limit, so a hostile value
 * nested a million levels deep costs no more than one `limit` deep (and never the stack).
 */
function deeperThan(v: unknown, limit: number): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (limit === 0) return true;
  for (const x of Array.isArray(v) ? v : Object.values(v as Obj)) if (deeperThan(x, limit - 1)) return true;
  return false;
}

/** How deep `flags` may nest in all: flag, rules, rule, condition or value, then an object value's own levels. */
const MAX_FLAGS_DEPTH = 6 + FLAG_LIMITS_DEPTH;

function checkValue(type: FlagType, v: unknown, path: string, add: (path: string, message: string) => void): void {
  if (v === undefined) return add(path, 'is required');
  switch (type) {
    case 'boolean':
      if (typeof v !== 'boolean') add(path, `must be a boolean (the flag's type), got ${typeName(v)}`);
      return;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) add(path, `must be a finite number (the flag's type), got ${typeName(v)}`);
      return;
    case 'string':
      if (typeof v !== 'string') add(path, `must be a string (the flag's type), got ${typeName(v)}`);
      else if (v.length > FLAG_LIMITS.maxString) add(path, `must be at most ${FLAG_LIMITS.maxString} characters, got ${v.length}`);
      return;
    case 'object': {
      if (!isObj(v)) return add(path, `must be an object (the flag's type), got ${typeName(v)}`);
      if (deeperThan(v, FLAG_LIMITS.maxObjectDepth)) return add(path, `must be nested at most ${FLAG_LIMITS.maxObjectDepth} levels deep`);
      const bytes = Buffer.byteLength(JSON.stringify(v));
      if (bytes > FLAG_LIMITS.maxObjectBytes) add(path, `must be at most ${FLAG_LIMITS.maxObjectBytes} bytes as JSON, got ${bytes}`);
      return;
    }
  }
}

function checkList(v: unknown, path: string, add: (path: string, message: string) => void): void {
  if (!Array.isArray(v)) return add(path, `must be an array of strings, got ${typeName(v)}`);
  if (v.length === 0) return add(path, 'must not be empty (leave the condition out instead)');
  if (v.length > FLAG_LIMITS.maxListEntries) return add(path, `must have at most ${FLAG_LIMITS.maxListEntries} entries, got ${v.length}`);
  v.forEach((s, i) => {
    if (typeof s !== 'string') add(`${path}[${i}]`, `must be a string, got ${typeName(s)}`);
    else if (s.length === 0 || s.length > FLAG_LIMITS.maxString) add(`${path}[${i}]`, `must be 1 to ${FLAG_LIMITS.maxString} characters`);
  });
}

function unknownKeys(o: Obj, known: readonly string[], path: string, add: (path: string, message: string) => void): void {
  for (const key of Object.keys(o)) if (!known.includes(key)) add(`${path}.${quotedText(key)}`, `is not a known field (known: ${known.join(', ')})`);
}

function checkCondition(v: unknown, path: string, add: (path: string, message: string) => void): void {
  if (!isObj(v)) return add(path, `must be an object of conditions, got ${typeName(v)}`);
  unknownKeys(v, COND_KEYS, path, add);
  if (v.server !== undefined) checkList(v.server, `${path}.server`, add);
  if (v.map !== undefined) checkList(v.map, `${path}.map`, add);
  if (v.players !== undefined) {
    const p = v.players;
    if (!isObj(p)) add(`${path}.players`, `must be an object {min, max}, got ${typeName(p)}`);
    else {
      unknownKeys(p, ['min', 'max'], `${path}.players`, add);
      for (const k of ['min', 'max'] as const) {
        const n = p[k];
        if (n !== undefined && (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 1_000_000))
          add(`${path}.players.${k}`, `must be an integer from 0 to 1000000, got ${quotedValue(n)}`);
      }
      if (typeof p.min === 'number' && typeof p.max === 'number' && p.min > p.max) add(`${path}.players`, `min (${p.min}) must not exceed max (${p.max})`);
      if (p.min === undefined && p.max === undefined) add(`${path}.players`, 'needs min, max or both');
    }
  }
  if (v.time !== undefined) {
    const t = v.time;
    if (!isObj(t)) add(`${path}.time`, `must be an object {from, to} of RFC 3339 instants, got ${typeName(t)}`);
    else {
      unknownKeys(t, ['from', 'to'], `${path}.time`, add);
      const at: Record<string, number> = {};
      for (const k of ['from', 'to'] as const) {
        const s = t[k];
        if (s === undefined) continue;
        if (typeof s !== 'string' || !RFC3339.test(s) || Number.isNaN(Date.parse(s)))
          add(`${path}.time.${k}`, `must be an RFC 3339 instant such as 2026-12-05T18:00:00Z, got ${quotedValue(s)}`);
        else at[k] = Date.parse(s);
      }
      if (at.from !== undefined && at.to !== undefined && at.from >= at.to) add(`${path}.time`, 'from must be before to');
      if (t.from === undefined && t.to === undefined) add(`${path}.time`, 'needs from, to or both');
    }
  }
  if (v.percentage !== undefined) {
    const n = v.percentage;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 100) add(`${path}.percentage`, `must be a number from 0 to 100, got ${quotedValue(n)}`);
  }
}

/** Validates a bundle's `flags`, adding each problem with its path (`flags.double_xp.rules[0].value`). */
export function checkFlags(v: unknown, add: (path: string, message: string) => void): void {
  if (!isObj(v)) return add('flags', `must be an object of flags by key, got ${typeName(v)}`);
  // Before anything serialises it: a value nested past every limit is refused as such.
  if (deeperThan(v, MAX_FLAGS_DEPTH))
    return add('flags', `must not nest deeper than ${MAX_FLAGS_DEPTH} levels (an object value at most ${FLAG_LIMITS.maxObjectDepth})`);
  const keys = Object.keys(v);
  if (keys.length > FLAG_LIMITS.maxFlags) return add('flags', `must have at most ${FLAG_LIMITS.maxFlags} flags, got ${keys.length}`);
  const bytes = Buffer.byteLength(JSON.stringify(v));
  if (bytes > FLAG_LIMITS.maxTotalBytes) return add('flags', `must be at most ${FLAG_LIMITS.maxTotalBytes} bytes as JSON, got ${bytes}`);
  for (const key of keys) {
    const path = `flags.${key}`;
    if (key.length > FLAG_LIMITS.maxKey || !FLAG_KEY_PATTERN.test(key)) {
      add(path, `a flag key is 1 to ${FLAG_LIMITS.maxKey} letters, digits, "_", "-" or "."`);
      continue;
    }
    const flag = v[key];
    if (!isObj(flag)) {
      add(path, `must be an object {type, value, rules?}, got ${typeName(flag)}`);
      continue;
    }
    unknownKeys(flag, FLAG_KEYS, path, add);
    if (!FLAG_TYPES.includes(flag.type as FlagType)) {
      add(`${path}.type`, `must be one of ${FLAG_TYPES.join(', ')}, got ${quotedValue(flag.type)}`);
      continue;
    }
    const type = flag.type as FlagType;
    checkValue(type, flag.value, `${path}.value`, add);
    if (flag.description !== undefined && (typeof flag.description !== 'string' || flag.description.length > FLAG_LIMITS.maxString))
      add(`${path}.description`, `must be a string of at most ${FLAG_LIMITS.maxString} characters`);
    if (flag.rules === undefined) continue;
    if (!Array.isArray(flag.rules)) {
      add(`${path}.rules`, `must be an array of rules, got ${typeName(flag.rules)}`);
      continue;
    }
    if (flag.rules.length > FLAG_LIMITS.maxRules) {
      add(`${path}.rules`, `must have at most ${FLAG_LIMITS.maxRules} rules, got ${flag.rules.length}`);
      continue;
    }
    flag.rules.forEach((rule: unknown, i: number) => {
      const rp = `${path}.rules[${i}]`;
      if (!isObj(rule)) return add(rp, `must be an object {if, value}, got ${typeName(rule)}`);
      unknownKeys(rule, RULE_KEYS, rp, add);
      if (rule.if === undefined) add(`${rp}.if`, 'is required');
      else checkCondition(rule.if, `${rp}.if`, add);
      checkValue(type, rule.value, `${rp}.value`, add);
      if (rule.variant !== undefined && (typeof rule.variant !== 'string' || rule.variant.length === 0 || rule.variant.length > 64))
        add(`${rp}.variant`, 'must be a string of 1 to 64 characters');
    });
  }
}

/** What a flag is evaluated against: OpenFeature's evaluation context. */
export interface FlagContext {
  targetingKey?: string;
  server?: string;
  map?: string;
  players?: number;
}

export type FlagReason = 'STATIC' | 'DEFAULT' | 'TARGETING_MATCH' | 'SPLIT';

export type FlagResult =
  | { ok: true; value: FlagValue; variant: string; reason: FlagReason }
  /** A percentage rule was reached and the context has no targetingKey (OpenFeature's TARGETING_KEY_MISSING). */
  | { ok: false; errorCode: 'TARGETING_KEY_MISSING'; message: string };

/**
 * The bucket of a targetingKey for one flag, in [0, 100) by steps of 0.01: 32-bit FNV-1a over
 * the UTF-16 code units of `flagKey + "/" + targetingKey`, modulo 10,000, over 100. Stable across
 * processes and versions (a player keeps their side of a split), independent between flags, and
 * simple enough to compute the same way in a mod or the dashboard's preview.
 */
export function bucketOf(flagKey: string, targetingKey: string): number {
  let h = 0x811c9dc5;
  const s = `${flagKey}/${targetingKey}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return ((h >>> 0) % 10_000) / 100;
}

/** Evaluates one flag; `now` is epoch ms. Allocates nothing for a flag without rules. */
export function evaluateFlag(key: string, flag: FlagDefinition, ctx: FlagContext, now: number): FlagResult {
  const rules = flag.rules;
  if (rules === undefined || rules.length === 0) return { ok: true, value: flag.value, variant: 'default', reason: 'STATIC' };
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const c = rule.if;
    if (c.server !== undefined && (ctx.server === undefined || !c.server.includes(ctx.server))) continue;
    if (c.map !== undefined && (ctx.map === undefined || !c.map.includes(ctx.map))) continue;
    if (c.players !== undefined) {
      const n = ctx.players;
      if (n === undefined || (c.players.min !== undefined && n < c.players.min) || (c.players.max !== undefined && n > c.players.max)) continue;
    }
    if (c.time !== undefined) {
      if (c.time.from !== undefined && now < Date.parse(c.time.from)) continue;
      if (c.time.to !== undefined && now >= Date.parse(c.time.to)) continue;
    }
    if (c.percentage !== undefined) {
      if (ctx.targetingKey === undefined || ctx.targetingKey === '')
        return { ok: false, errorCode: 'TARGETING_KEY_MISSING', message: `flag ${key} splits by percentage and the context has no targetingKey` };
      if (bucketOf(key, ctx.targetingKey) >= c.percentage) continue;
    }
    return { ok: true, value: rule.value, variant: rule.variant ?? `rule-${i + 1}`, reason: c.percentage !== undefined ? 'SPLIT' : 'TARGETING_MATCH' };
  }
  return { ok: true, value: flag.value, variant: 'default', reason: 'DEFAULT' };
}

/** The flags of a bundle, or an empty set. */
export function flagsOf(bundle: { flags?: Flags }): Flags {
  return bundle.flags ?? {};
}

export type { Problem };
