import type { TenantId } from '../identity/types.js';
import { EMPTY_TOTALS } from './store.js';
import type {
  ActivityEvent,
  CheckoutId,
  CheckoutRecord,
  CheckoutStatus,
  ConfigVersion,
  DialogueSource,
  LatestReport,
  MapEntry,
  MapSample,
  ServerId,
  ServerKeyId,
  ServerKeyRecord,
  ServerRecord,
  TelemetryEvent,
  TelemetryReport,
  UsageTotals,
} from './types.js';

/** Rows of the control-plane tables as both stores read them (the schemas match column for column). */
export interface ServerRow {
  id: number;
  tenant_id: number;
  name: string;
  created_at: string;
}
export interface KeyRow {
  id: number;
  server_id: number;
  preview: string;
  created_at: string;
  revoked_at: string | null;
}
export interface VersionRow {
  version: number;
  bundle?: string;
  published_at: string;
  published_by: string;
  note: string;
}
export interface UsageRow {
  day?: string;
  reports: number;
  lines_spoken: number;
  llm_tokens: number;
  tts_characters: number;
  spend_usd: number;
  cache_hits: number;
  tts_usd: number;
  llm_usd: number;
}
export interface CheckoutRow {
  id: number;
  tenant_id: number;
  provider: string;
  provider_ref: string;
  status: string;
  url: string;
  plan: string;
  tier: string | null;
  amount_usd: number;
  interval: string;
  created_at: string;
  completed_at: string | null;
}

/** The latest report with the last known tick latency, as both stores read it. */
export interface LatestRow {
  received_at: number;
  ts: string;
  bot_count: number;
  players_online: number;
  latency_p50: number | null;
  latency_p99: number | null;
  latency_at: number | null;
  dialogue: string | null;
}

export const latestOf = (r: LatestRow): LatestReport => ({
  receivedAt: Number(r.received_at),
  ts: r.ts,
  botCount: r.bot_count,
  playersOnline: r.players_online,
  latencyP50: r.latency_p50,
  latencyP99: r.latency_p99,
  latencyAt: r.latency_at === null ? null : Number(r.latency_at),
  dialogue: r.dialogue === null ? null : (JSON.parse(r.dialogue) as DialogueSource),
});

export interface MapSampleRow {
  at_ms: number | string;
  ts: string;
  received_at: number | string;
  characters: string;
}

/** BIGINT columns come back from PostgreSQL as strings. */
export const mapSampleOf = (r: MapSampleRow): MapSample => ({
  ts: r.ts,
  atMs: Number(r.at_ms),
  receivedAt: Number(r.received_at),
  characters: JSON.parse(r.characters) as MapEntry[],
});

export const serverOf = (r: ServerRow): ServerRecord => ({ id: r.id as ServerId, tenantId: r.tenant_id as TenantId, name: r.name, createdAt: r.created_at });
export const keyOf = (r: KeyRow): ServerKeyRecord => ({
  id: r.id as ServerKeyId,
  serverId: r.server_id as ServerId,
  preview: r.preview,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
export const entryOf = (r: VersionRow): ConfigVersion => ({ version: r.version, publishedAt: r.published_at, publishedBy: r.published_by, note: r.note });
/** A count as the read models show it: an integer, at most Number.MAX_SAFE_INTEGER. */
export const count = (v: number | null | undefined): number => Math.min(Math.round(v ?? 0), Number.MAX_SAFE_INTEGER);
export const totalsOf = (r: UsageRow): UsageTotals => ({
  reports: count(r.reports),
  linesSpoken: count(r.lines_spoken),
  llmTokens: count(r.llm_tokens),
  ttsCharacters: count(r.tts_characters),
  spendUsd: r.spend_usd ?? 0,
  cacheHits: count(r.cache_hits),
  ttsUsd: r.tts_usd ?? 0,
  llmUsd: r.llm_usd ?? 0,
});
export const checkoutOf = (r: CheckoutRow): CheckoutRecord => ({
  id: r.id as CheckoutId,
  tenantId: r.tenant_id as TenantId,
  provider: r.provider,
  providerRef: r.provider_ref,
  status: r.status as CheckoutStatus,
  url: r.url,
  plan: r.plan,
  tier: r.tier,
  amountUsd: r.amount_usd,
  interval: r.interval,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

/** Activity event ids are report row id × stride + the event's index in its report (at most 1000 events per report). */
export const ACTIVITY_ID_STRIDE = 1000;

export interface ActivityRow {
  id: number;
  ts: string;
  events: string;
}

/**
 * A report's events as stored: JSON.stringify's text to the byte, joined by hand when every kind
 * is printable ASCII with no quote or backslash (nothing to escape; counts are safe integers,
 * which String writes as JSON does), about a fifth of JSON.stringify's cost per report.
 */
export function eventsJson(events: readonly TelemetryEvent[]): string {
  let out = '[';
  for (let i = 0; i < events.length; i++) {
    const { kind, count } = events[i]!;
    if (!plainText(kind)) return JSON.stringify(events);
    out += `${i === 0 ? '' : ','}{"kind":"${kind}","count":${count}}`;
  }
  return `${out}]`;
}

/** Printable ASCII without `"` or `\`: JSON writes it as it is. */
function plainText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** The newest `limit` events of the newest reports (rows newest first), each report's events last first. */
export function activityOf(serverId: ServerId, rows: readonly ActivityRow[], limit: number): ActivityEvent[] {
  const out: ActivityEvent[] = [];
  for (const row of rows) {
    const events = JSON.parse(row.events) as { kind: string; count: number }[];
    for (let i = events.length - 1; i >= 0 && out.length < limit; i--) {
      out.push({ id: row.id * ACTIVITY_ID_STRIDE + i, serverId: String(serverId), kind: events[i]!.kind, count: events[i]!.count, ts: row.ts });
    }
    if (out.length >= limit) break;
  }
  return out;
}

const DAY_MS = 86_400_000;

/**
 * The accepted reports of one ingest batch folded per server and day (usage) and per server
 * (the newest roster), so a batch costs one upsert per server and day rather than one per report.
 */
export class UsageFold {
  private readonly days = new Map<string, [ServerId, string, UsageTotals]>();
  private readonly latestRosters = new Map<ServerId, [number, string]>();

  /** The UTC day of the last report added, and the milliseconds it spans: a batch's reports nearly all fall in one. */
  private day = '';
  private dayFrom = 0;
  private dayTo = -1;
  /** The totals of the last server and day added. */
  private last: [ServerId, string, UsageTotals] | undefined;

  add(serverId: ServerId, receivedAt: number, report: TelemetryReport): void {
    if (report.roster) this.latestRosters.set(serverId, [receivedAt, JSON.stringify(report.roster)]);
    if (!(receivedAt >= this.dayFrom && receivedAt <= this.dayTo)) {
      this.day = new Date(receivedAt).toISOString().slice(0, 10);
      this.dayFrom = receivedAt - (((receivedAt % DAY_MS) + DAY_MS) % DAY_MS);
      this.dayTo = this.dayFrom + DAY_MS - 1;
    }
    const day = this.day;
    let entry = this.last;
    if (entry === undefined || entry[0] !== serverId || entry[1] !== day) {
      const slot = `${serverId}/${day}`;
      entry = this.days.get(slot);
      if (!entry) this.days.set(slot, (entry = [serverId, day, { ...EMPTY_TOTALS }]));
      this.last = entry;
    }
    const t = entry[2];
    t.reports += 1;
    t.linesSpoken += report.linesSpoken;
    t.llmTokens += report.llmTokens ?? 0;
    t.ttsCharacters += report.ttsCharacters ?? 0;
    t.spendUsd += report.spendUsd;
    t.cacheHits += report.cacheHits ?? 0;
    t.ttsUsd += report.economy?.ttsUsd ?? 0;
    t.llmUsd += report.economy?.llmUsd ?? 0;
  }

  /** [serverId, day, totals], ordered by server then day (writers that lock rows take them in one order). */
  usage(): [ServerId, string, UsageTotals][] {
    return [...this.days.values()].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  }

  /** [serverId, receivedAt, roster JSON], ordered by server. */
  rosters(): [ServerId, number, string][] {
    return [...this.latestRosters].map(([id, [at, roster]]): [ServerId, number, string] => [id, at, roster]).sort((a, b) => a[0] - b[0]);
  }
}
