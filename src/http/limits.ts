import { readFileSync } from 'node:fs';
import { withoutBom } from './bom.js';
import type { Rate } from '../ratelimit/limiter.js';
import { DEFAULT_CONNECTIONS_PER_ADDRESS, DEFAULT_CONNECTIONS_TOTAL, MAX_CONNECTION_CAP } from './connections.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/**
 * Every rate limit and quota of the embedded server, with its default. An operator changes
 * them with a limits file (`--limits FILE`); a benchmark that needs more raises them there,
 * never by changing these defaults.
 */
export const DEFAULT_LIMITS = {
  /** Failed logins per e-mail address; the next attempt inside the window is refused unhashed. */
  loginFailuresPerEmail: { limit: 10, windowMs: 15 * MINUTE },
  /** Login attempts (failed or not) per client address. */
  loginAttemptsPerAddress: { limit: 60, windowMs: MINUTE },
  /** Requests per user session. */
  session: { limit: 600, windowMs: MINUTE },
  /** Signed requests (config pulls, telemetry) per server key. */
  serverKey: { limit: 120, windowMs: MINUTE },
  /** Event posts per widget key. */
  widgetKey: { limit: 600, windowMs: MINUTE },
  /** Chat-widget visitor calls per visitor id (new conversations, messages, lead, end). */
  widgetVisitor: { limit: 60, windowMs: MINUTE },
  /** Visitor messages per conversation. */
  widgetConversationMessages: { limit: 20, windowMs: MINUTE },
  /** Chat-widget visitor calls per client address (all widgets, all visitors behind it). */
  widgetAddress: { limit: 300, windowMs: MINUTE },
  /** New chat-widget conversations per widget, from any visitors and addresses. */
  widgetConversationsPerWidget: { limit: 300, windowMs: MINUTE },
  /** Chat-widget visitor messages per widget (each one an agent reply), across its conversations. */
  widgetMessagesPerWidget: { limit: 1200, windowMs: MINUTE },
  /** Live chat-widget streams (event and reply streams) one client address holds at once; past it 429. */
  widgetStreamsPerAddress: 100,
  /** Live chat-widget streams one tenant's widgets hold at once, from any addresses; past it 503. */
  widgetStreamsPerTenant: 5000,
  /** Live chat-widget streams in all (at most half of connectionsTotal counts); past it 503. */
  widgetStreamsTotal: 10_000,
  /** Property-video API requests per API key. */
  apiKey: { limit: 100, windowMs: MINUTE },
  /** Property-video API requests per tenant, across all its API keys (so minting keys buys nothing). */
  tenantApiKeys: { limit: 300, windowMs: MINUTE },
  /** Telemetry reports per server (a quota: refused with 403 plan_limit). */
  telemetryReports: { limit: 2, windowMs: SECOND },
  /** Password hashes (scrypt) computed at once; the rest wait in the queue below. */
  passwordHashConcurrency: 2,
  /** Password hashes waiting for a slot; past this a login or user creation is refused with 429. */
  passwordHashQueue: 32,
  /** Webhook endpoints per widget. */
  endpointsPerWidget: 20,
  /** Live (unrevoked) property-video API keys per tenant. */
  liveApiKeys: 20,
  /** Live (unrevoked) keys per game server. */
  liveServerKeys: 20,
  /** Live (unrevoked) keys per chat widget. */
  liveWidgetKeys: 20,
  /** Videos queued or rendering per tenant. */
  queuedVideosPerTenant: 10,
  /** Entries (event kinds) in one telemetry report; more is a 422. */
  telemetryEventKinds: 100,
  /** Days a raw telemetry report is kept; daily rollups are kept forever. */
  telemetryRetentionDays: 30,
  /** Connections holding a request open at once from one client address; past it 429 and the connection closed. */
  connectionsPerAddress: DEFAULT_CONNECTIONS_PER_ADDRESS,
  /** Connections holding a request open at once, in all; past it 503 and the connection closed. */
  connectionsTotal: DEFAULT_CONNECTIONS_TOTAL,
} as const satisfies Record<string, Rate | number>;

type Widen<T> = { -readonly [K in keyof T]: T[K] extends Rate ? Rate : number };
export type Limits = Widen<typeof DEFAULT_LIMITS>;
export type LimitName = keyof Limits;
export type RateName = { [K in LimitName]: Limits[K] extends Rate ? K : never }[LimitName];

/** The largest value any limit may be set to (keeps every count and window a safe integer). */
const MAX_VALUE = 1e9;
/** The longest window of a rate, in seconds (one week). */
const MAX_WINDOW_S = 7 * 24 * 3600;

/** Tighter bounds for a few: activity event ids set aside 1000 places per report. */
const MAX_OF: Partial<Record<LimitName, number>> = {
  telemetryEventKinds: 1000,
  connectionsPerAddress: MAX_CONNECTION_CAP,
  connectionsTotal: MAX_CONNECTION_CAP,
};

const isRateName = (name: LimitName): name is RateName => typeof DEFAULT_LIMITS[name] === 'object';

/** The defaults with `overrides` applied (a partial set, as tests and benchmarks pass it). */
export function limitsWith(overrides: Partial<Limits> = {}): Limits {
  const out = structuredClone(DEFAULT_LIMITS) as unknown as Limits;
  return Object.assign(out, overrides);
}

/**
 * Reads a limits file: a JSON object naming some of the limits. A rate is either a number
 * (the count, keeping the default window) or `{"limit": N, "windowSeconds": S}`; a quota is
 * a number. Anything else, an unknown name included, throws with a message naming the fix.
 */
export function parseLimits(value: unknown, source = 'the limits file'): Limits {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${source} must hold a JSON object of limits, such as {"session": 1200}`);
  const limits = limitsWith();
  const names = Object.keys(DEFAULT_LIMITS) as LimitName[];
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!(names as string[]).includes(name)) {
      const near = closest(name, names);
      throw new Error(`${source}: unknown limit "${name}"${near ? `; did you mean "${near}"?` : ''} (known: ${names.join(', ')})`);
    }
    const key = name as LimitName;
    if (isRateName(key)) (limits as Record<RateName, Rate>)[key] = parseRate(raw, `${source}: ${key}`, DEFAULT_LIMITS[key].windowMs);
    else (limits as unknown as Record<string, number>)[key] = count(raw, `${source}: ${key}`, key === 'passwordHashQueue' ? 0 : 1, MAX_OF[key]);
  }
  if (limits.connectionsPerAddress > limits.connectionsTotal)
    throw new Error(`${source}: connectionsPerAddress (${limits.connectionsPerAddress}) must not exceed connectionsTotal (${limits.connectionsTotal})`);
  return limits;
}

/** parseLimits of a JSON file on disk. */
export function readLimitsFile(file: string): Limits {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the limits file ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text));
  } catch (err) {
    throw new Error(`the limits file ${file} is not JSON: ${(err as Error).message}`);
  }
  return parseLimits(value, `the limits file ${file}`);
}

function parseRate(raw: unknown, where: string, defaultWindowMs: number): Rate {
  if (typeof raw === 'number') return { limit: count(raw, where, 1), windowMs: defaultWindowMs };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${where} must be a number or {"limit": N, "windowSeconds": S}`);
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'limit' && k !== 'windowSeconds') throw new Error(`${where}: unknown field "${k}" (a rate has limit and windowSeconds)`);
  const limit = count(o.limit, `${where}.limit`, 1);
  if (o.windowSeconds === undefined) return { limit, windowMs: defaultWindowMs };
  const s = o.windowSeconds;
  if (typeof s !== 'number' || !Number.isFinite(s) || s < 0.001 || s > MAX_WINDOW_S)
    throw new Error(`${where}.windowSeconds must be a number from 0.001 to ${MAX_WINDOW_S}, got ${JSON.stringify(s)}`);
  return { limit, windowMs: Math.round(s * 1000) };
}

function count(raw: unknown, where: string, min: number, max = MAX_VALUE): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max)
    throw new Error(`${where} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return raw;
}

/** The known name nearest to a misspelt one (edit distance at most 3), for the error message. */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 4;
  for (const n of names) {
    const d = distance(name.toLowerCase(), n.toLowerCase());
    if (d < bestD) [best, bestD] = [n, d];
  }
  return best;
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
