import type { ControlPlaneStore } from './store.js';
import type { DailyUsage, ServerId, UsageTotals } from './types.js';
import { EMPTY_TOTALS } from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The last day dayOf formatted: every report of a day asks for the same one. */
let lastDay = { start: 0, end: 0, text: '' };

/** The UTC calendar day holding `ms`, as YYYY-MM-DD. */
export function dayOf(ms: number): string {
  if (ms >= lastDay.start && ms < lastDay.end) return lastDay.text;
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  const text = new Date(ms).toISOString().slice(0, 10);
  // Only days of the ordinary date range are kept; anything else (NaN, far years) is formatted each time.
  if (Number.isFinite(start)) lastDay = { start, end: start + DAY_MS, text };
  return text;
}

export interface Month {
  readonly start: number;
  readonly end: number;
  readonly firstDay: string;
  readonly lastDay: string;
}

/** The last month monthOf worked out: every report asks for the current one (the line quota's check). */
let lastMonth: Month = { start: 0, end: 0, firstDay: '', lastDay: '' };

/** The calendar month (UTC) holding `ms`: [start, end) in ms, and its first and last day. */
export function monthOf(ms: number): Month {
  if (ms >= lastMonth.start && ms < lastMonth.end) return lastMonth;
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const month = { start, end, firstDay: dayOf(start), lastDay: dayOf(end - DAY_MS) };
  if (Number.isFinite(start)) lastMonth = month;
  return month;
}

function sum(days: readonly DailyUsage[]): UsageTotals {
  const t = { ...EMPTY_TOTALS };
  for (const d of days) {
    t.reports += d.reports;
    t.linesSpoken += d.linesSpoken;
    t.llmTokens += d.llmTokens;
    t.ttsCharacters += d.ttsCharacters;
    t.spendUsd += d.spendUsd;
    t.cacheHits += d.cacheHits;
    t.ttsUsd += d.ttsUsd;
    t.llmUsd += d.llmUsd;
  }
  // Each day is a safe integer; their sum is saturated like them (64-bit safe, exact in JSON).
  for (const k of ['reports', 'linesSpoken', 'llmTokens', 'ttsCharacters', 'cacheHits'] as const) t[k] = Math.min(t[k], Number.MAX_SAFE_INTEGER);
  return t;
}

/** Money as the read models show it: rounded to a millionth of a dollar, so float sums stay tidy. */
const usd = (v: number): number => Math.round(v * 1e6) / 1e6;
const share = (part: number, whole: number): number => (whole > 0 ? Math.round((part / whole) * 1e4) / 1e4 : 0);

export interface UsageSummary {
  serverId: string;
  periodStart: string;
  periodEnd: string;
  linesSpoken: number;
  llmTokens: number;
  ttsCharacters: number;
  spendUsd: number;
}

/** Spec 001 §2.4, for the calendar month (UTC) holding `now`; periodEnd is exclusive. */
export async function usageSummary(store: ControlPlaneStore, serverId: ServerId, now: number): Promise<UsageSummary> {
  const m = monthOf(now);
  const t = sum(await store.dailyUsage(serverId, m.firstDay, m.lastDay));
  return {
    serverId: String(serverId),
    periodStart: new Date(m.start).toISOString(),
    periodEnd: new Date(m.end).toISOString(),
    linesSpoken: t.linesSpoken,
    llmTokens: t.llmTokens,
    ttsCharacters: t.ttsCharacters,
    spendUsd: usd(t.spendUsd),
  };
}

export interface OverviewKpis {
  serverId: string;
  /** AI characters in the latest report. */
  survivors: number;
  /** Players online in the latest report. */
  players: number;
  /** Lines spoken today (UTC). */
  lines: number;
  /** USD spent today (UTC). */
  spend: number;
  /** Share (0–1) of today's spoken lines served from the phrase cache. */
  cache: number;
  /** Median and 99th-percentile tick latency in ms, as last reported (see latencyAt); null when no recent report carried one. */
  p50: number | null;
  p99: number | null;
  /** When the report that carried p50 and p99 came in. */
  latencyAt: string | null;
  lastSeenAt: string | null;
  period: { start: string; end: string; reports: number; lines: number; spendUsd: number; llmTokens: number; ttsCharacters: number; cacheHits: number };
  /** The last 7 UTC days, oldest first, zero-filled. */
  series: { day: string; lines: number; spendUsd: number; cacheHits: number; reports: number }[];
}

export async function overview(store: ControlPlaneStore, serverId: ServerId, now: number): Promise<OverviewKpis> {
  const m = monthOf(now);
  const weekStart = dayOf(now - 6 * DAY_MS);
  const today = dayOf(now);
  const from = weekStart < m.firstDay ? weekStart : m.firstDay;
  const [days, latest] = await Promise.all([store.dailyUsage(serverId, from, m.lastDay), store.latestReport(serverId)]);
  const byDay = new Map(days.map((d) => [d.day, d]));
  const t = byDay.get(today);
  const month = sum(days.filter((d) => d.day >= m.firstDay));
  const series = [];
  for (let i = 6; i >= 0; i--) {
    const day = dayOf(now - i * DAY_MS);
    const d = byDay.get(day);
    series.push({ day, lines: d?.linesSpoken ?? 0, spendUsd: usd(d?.spendUsd ?? 0), cacheHits: d?.cacheHits ?? 0, reports: d?.reports ?? 0 });
  }
  return {
    serverId: String(serverId),
    survivors: latest?.botCount ?? 0,
    players: latest?.playersOnline ?? 0,
    lines: t?.linesSpoken ?? 0,
    spend: usd(t?.spendUsd ?? 0),
    cache: share(t?.cacheHits ?? 0, t?.linesSpoken ?? 0),
    p50: latest?.latencyP50 ?? null,
    p99: latest?.latencyP99 ?? null,
    latencyAt: latest?.latencyAt != null ? new Date(latest.latencyAt).toISOString() : null,
    lastSeenAt: latest ? new Date(latest.receivedAt).toISOString() : null,
    period: {
      start: new Date(m.start).toISOString(),
      end: new Date(m.end).toISOString(),
      reports: month.reports,
      lines: month.linesSpoken,
      spendUsd: usd(month.spendUsd),
      llmTokens: month.llmTokens,
      ttsCharacters: month.ttsCharacters,
      cacheHits: month.cacheHits,
    },
    series,
  };
}

export interface EconomyBreakdown {
  serverId: string;
  periodStart: string;
  periodEnd: string;
  totalUsd: number;
  tts: { characters: number; usd: number; share: number };
  llm: { tokens: number; usd: number; share: number };
  /** Spend the reports did not attribute to TTS or LLM (spendUsd − ttsUsd − llmUsd, never negative). */
  other: { usd: number; share: number };
  cache: { hits: number; lines: number; share: number };
}

/** The split of this month's spend between TTS and LLM, and the phrase cache's share of lines. */
export async function economy(store: ControlPlaneStore, serverId: ServerId, now: number): Promise<EconomyBreakdown> {
  const m = monthOf(now);
  const t = sum(await store.dailyUsage(serverId, m.firstDay, m.lastDay));
  const total = Math.max(t.spendUsd, t.ttsUsd + t.llmUsd);
  const other = Math.max(0, total - t.ttsUsd - t.llmUsd);
  return {
    serverId: String(serverId),
    periodStart: new Date(m.start).toISOString(),
    periodEnd: new Date(m.end).toISOString(),
    totalUsd: usd(total),
    tts: { characters: t.ttsCharacters, usd: usd(t.ttsUsd), share: share(t.ttsUsd, total) },
    llm: { tokens: t.llmTokens, usd: usd(t.llmUsd), share: share(t.llmUsd, total) },
    other: { usd: usd(other), share: share(other, total) },
    cache: { hits: t.cacheHits, lines: t.linesSpoken, share: share(t.cacheHits, t.linesSpoken) },
  };
}
