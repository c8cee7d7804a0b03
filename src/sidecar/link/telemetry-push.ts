import { randomUUID } from 'node:crypto';
import type { MapSurvivor, Survivor } from '../../../brain/index.js';
import { silentLogger, type Logger } from '../../log.js';
import { errorCode, errorText, failureText, type ControlPlaneClient } from './control-plane-client.js';
import { countExchange, type Exchange, type ExchangeCounts, type ExchangeOutcome } from './control-plane-source.js';
import type { HistogramMark, LatencyHistogram } from '../tick/histogram.js';
import type { SidecarTelemetry } from '../service.js';
import type { BufferedReport, TelemetryBuffer } from './telemetry-buffer.js';

/** The control plane's limits on a report (docs/controlplane.md), kept here so a report is never refused for its shape. */
const LIMITS = { events: 100, kind: 64, roster: 1000, text: 200 } as const;

/**
 * The live map's sample (`map` on a report): at most `maxCharacters`, at most one every
 * `minIntervalMs` (the control plane refuses more with a 422 naming `map`), sent only with a
 * report made in the last `maxAgeMs` (the control plane keeps no older one: a map is live or
 * worthless). Names are cut shorter than elsewhere so a full sample stays far below the body limit.
 */
export const MAP_SAMPLE = { maxCharacters: 500, minIntervalMs: 5_000, maxAgeMs: 300_000, name: 64, maxBytes: 160 * 1024, maxCoordinate: 1e7 } as const;
/** The control plane's body limit on a report (TELEMETRY_LIMITS.maxBody): a report with its sample stays under it. */
const MAX_REPORT_BYTES = 256 * 1024;

/** A map entry as sent: the roster row's fields, the squad when there is one, the position and health. */
export type MapEntry = Survivor & { squad?: string; x: number; z: number; health: number };

export interface PushStatus {
  lastPush: Exchange | null;
  /** Why the last send failed (cleared by a 202), and since when (ISO 8601). */
  lastPushError: string | null;
  lastPushErrorSince: string | null;
  buffered: number;
  /** Reports dropped because the buffer was full (oldest first), over the state directory's life. */
  dropped: number;
  /** Reports the control plane refused as malformed (4xx other than auth) and that were discarded. */
  rejected: number;
}

export interface TelemetryPusherOptions {
  client: ControlPlaneClient;
  buffer: TelemetryBuffer;
  /** Counters since the last call (Sidecar.drainTelemetry). */
  collect: () => Promise<SidecarTelemetry>;
  /** The live map's sample of at most `max` characters (Sidecar.mapSample); without it reports carry no map. */
  sampleMap?: (max: number) => Promise<MapSurvivor[]>;
  /** The sidecar's tick latency histogram; each report carries the percentiles of its own interval. */
  latency: LatencyHistogram;
  /** Default 60 s. */
  intervalMs?: number;
  requestTimeoutMs?: number;
  /** First retry delay after a failed send (default 1 s), doubling up to maxBackoffMs. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  logger?: Logger;
  now?: () => number;
  random?: () => number;
  newId?: () => string;
}

/**
 * Telemetry push (spec 001 §2.2, §4.2). Every interval the sidecar's counters are drained
 * into a report, the report is appended to the on-disk buffer, and the buffer is sent oldest
 * first, one report at a time, each removed only after its 202. While the control plane is
 * unreachable or refuses the key (401/403: a suspended tenant, a revoked key), reports stay
 * buffered and sends back off exponentially with jitter, capped at maxBackoffMs; nothing stops
 * them for good.
 */
export class TelemetryPusher {
  private readonly o: Required<Omit<TelemetryPusherOptions, 'logger' | 'sampleMap'>> & { logger: Logger };
  private readonly sampleMap: ((max: number) => Promise<MapSurvivor[]>) | null;
  private timer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private collecting: Promise<void> = Promise.resolve();
  private lastPush: Exchange | null = null;
  private lastError: string | null = null;
  private lastErrorSince: string | null = null;
  private closed = false;
  private errors = 0;
  private notBefore = 0;
  private rejected = 0;
  /** Report sends since start by outcome. */
  readonly pushes: ExchangeCounts = { ok: 0, not_modified: 0, unauthorized: 0, error: 0 };
  private mark: HistogramMark;
  /** The newest map sample, waiting to ride on the report it was taken with; never buffered on disk. */
  private map: { reportId: string; at: number; json: string } | null = null;
  private lastSampleAt = -Infinity;

  constructor(options: TelemetryPusherOptions) {
    const { sampleMap, ...rest } = options;
    this.sampleMap = sampleMap ?? null;
    this.o = {
      intervalMs: 60_000,
      requestTimeoutMs: 10_000,
      minBackoffMs: 1_000,
      maxBackoffMs: 300_000,
      now: Date.now,
      random: Math.random,
      newId: randomUUID,
      ...rest,
      logger: options.logger ?? silentLogger,
    };
    this.mark = options.latency.mark();
  }

  /**
   * Reports once at once (after what a previous run left), then every interval: the first
   * report tells the control plane within seconds that this sidecar is up, rather than a
   * whole interval later. Two reports in a row stay within the per-server report quota
   * (2 a second); a backlog past it backs off and is resent.
   */
  start(): void {
    const report = (): void => {
      this.report().catch((err: unknown) =>
        this.o.logger.error('telemetry report could not be built', { error: err instanceof Error ? err.message : String(err) }),
      );
    };
    this.timer = setInterval(report, this.o.intervalMs);
    this.timer.unref();
    report();
  }

  status(): PushStatus {
    return {
      lastPush: this.lastPush,
      lastPushError: this.lastError,
      lastPushErrorSince: this.lastErrorSince,
      buffered: this.o.buffer.size,
      dropped: this.o.buffer.dropped,
      rejected: this.rejected,
    };
  }

  /** Drains the counters into one report and buffers it, then tries to send (unless backing off). */
  report(): Promise<void> {
    const run = this.collecting.then(async () => {
      const report = this.build(await this.o.collect());
      await this.takeMap(report.reportId);
      try {
        await this.o.buffer.append(report);
      } catch (err) {
        this.o.logger.error('telemetry report could not be buffered on disk', {
          error: err instanceof Error ? err.message : String(err),
          reportId: report.reportId,
        });
      }
    });
    this.collecting = run.catch(() => {});
    return run.then(() => {
      if (this.o.now() >= this.notBefore) void this.flush();
    });
  }

  /** Sends buffered reports in order until the buffer is empty or a send fails. */
  flush(): Promise<void> {
    return (this.flushing ??= this.sendAll().finally(() => (this.flushing = null)));
  }

  /**
   * Stops the interval, buffers a final report and tries to send everything within `graceMs`.
   * Whatever is not acknowledged by then stays on disk for the next start.
   */
  async close(graceMs = 2_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = this.retry = null;
    await this.report().catch(() => {});
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((r) => (timeout = setTimeout(r, graceMs)))]);
    clearTimeout(timeout);
  }

  build(t: SidecarTelemetry): BufferedReport {
    const h = this.o.latency;
    const since = this.mark;
    this.mark = h.mark();
    const ticks = this.mark.total - since.total;
    const events = Object.entries(t.events)
      .filter(([kind, count]) => kind.length > 0 && kind.length <= LIMITS.kind && Number.isInteger(count) && count > 0)
      .slice(0, LIMITS.events)
      .map(([kind, count]) => ({ kind, count }));
    const report: BufferedReport = {
      reportId: this.o.newId(),
      serverId: this.o.client.serverId,
      ts: new Date(this.o.now()).toISOString(),
      botCount: t.agents,
      playersOnline: t.playersOnline,
      linesSpoken: t.linesSpoken,
      spendUsd: nanoUsd(t.spendUsd),
      events,
      llmTokens: t.llmTokens,
      ttsCharacters: t.ttsCharacters,
      cacheHits: Math.min(t.cacheHits, t.linesSpoken),
      // The split the dialogue tier computed, so the control plane's /economy can show it.
      economy: { ttsUsd: nanoUsd(t.ttsUsd), llmUsd: nanoUsd(t.llmUsd), cacheHits: Math.min(t.cacheHits, t.linesSpoken) },
      roster: t.roster.slice(0, LIMITS.roster).flatMap(rosterEntry),
      dialogue: t.linesFrom,
    };
    if (ticks > 0) report.latency = { p50: h.percentileSince(since, 0.5) / 1000, p99: h.percentileSince(since, 0.99) / 1000 };
    return report;
  }

  /** Samples the map for the report just built, unless the last sample is under MAP_SAMPLE.minIntervalMs old. */
  private async takeMap(reportId: string): Promise<void> {
    const now = this.o.now();
    if (this.sampleMap === null || this.closed || now - this.lastSampleAt < MAP_SAMPLE.minIntervalMs) return;
    this.lastSampleAt = now;
    try {
      const rows = (await this.sampleMap(MAP_SAMPLE.maxCharacters)).slice(0, MAP_SAMPLE.maxCharacters).flatMap(mapEntry);
      const json = JSON.stringify(rows);
      this.map = Buffer.byteLength(json) <= MAP_SAMPLE.maxBytes ? { reportId, at: now, json } : null;
    } catch (err) {
      this.map = null;
      this.o.logger.warn('live map sample failed; the report goes without it', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** The line to send: the buffered report, with the map sample taken with it when there is one and it is still fresh. */
  private bodyFor(head: { id: string; line: string }): { body: string; withMap: boolean } {
    const m = this.map;
    if (m === null || m.reportId !== head.id) return { body: head.line, withMap: false };
    const line = head.line.trimEnd();
    if (this.o.now() - m.at > MAP_SAMPLE.maxAgeMs || !line.endsWith('}') || Buffer.byteLength(line) + Buffer.byteLength(m.json) + 8 > MAX_REPORT_BYTES) {
      this.map = null;
      return { body: head.line, withMap: false };
    }
    return { body: `${line.slice(0, -1)},"map":${m.json}}`, withMap: true };
  }

  private record(outcome: ExchangeOutcome): void {
    countExchange(this.pushes, outcome);
    this.lastPush = { at: new Date(this.o.now()).toISOString(), outcome };
  }

  private async sendAll(): Promise<void> {
    for (;;) {
      const head = this.o.buffer.headLine();
      if (!head) return;
      const { body, withMap } = this.bodyFor(head);
      let reply;
      try {
        reply = await this.o.client.request('POST', '/v1/telemetry', { body, timeoutMs: this.o.requestTimeoutMs });
      } catch (err) {
        return this.backOff(`unreachable (${failureText(err)})`);
      }
      if (withMap && reply.status !== 202 && onlyMapRefused(reply)) {
        // The sample alone was refused (another sidecar on this server sampled moments ago,
        // say): the report goes again at once without it, so no counter is lost for a map.
        this.map = null;
        this.o.logger.warn('the control plane refused the live map sample; the report is sent without it', { reason: errorText(reply) });
        continue;
      }
      if (withMap && reply.status !== 408 && reply.status !== 429 && reply.status < 500) this.map = null;
      if (reply.status === 202) {
        if (this.lastError !== null) this.o.logger.info('telemetry push works again', { failedSince: this.lastErrorSince, buffered: this.o.buffer.size });
        this.errors = 0;
        this.notBefore = 0;
        this.lastError = this.lastErrorSince = null;
        this.record('ok');
        await this.o.buffer.ack(head.id).catch((err: unknown) => {
          this.o.logger.error('telemetry cursor not saved; the report may be resent (the control plane dedupes it)', { error: String(err) });
        });
        continue;
      }
      // Over the server's report quota (more than 2 a second, as when a backlog drains):
      // the report is kept and sent again after the back-off.
      if (reply.status === 403 && errorCode(reply) === 'plan_limit') return this.backOff(errorText(reply));
      if (reply.status === 401 || reply.status === 403) return this.backOff(`the control plane refused the server key (${errorText(reply)})`, true);
      if (reply.status >= 400 && reply.status < 500 && reply.status !== 408 && reply.status !== 429) {
        // A report refused for its content would block every later one: it is discarded.
        this.rejected++;
        this.record(`error: ${errorText(reply)}`);
        this.o.logger.error('telemetry report refused by the control plane; discarded', { reportId: head.id, reason: errorText(reply) });
        await this.o.buffer.ack(head.id).catch(() => {});
        continue;
      }
      return this.backOff(errorText(reply));
    }
  }

  private backOff(reason: string, unauthorized = false): void {
    this.errors++;
    this.record(unauthorized ? 'unauthorized' : `error: ${reason}`);
    if (this.lastError !== reason) {
      const fields = { reason, buffered: this.o.buffer.size };
      if (unauthorized) this.o.logger.error('the control plane refused the server key; telemetry stays buffered on disk and is retried with back-off', fields);
      else this.o.logger.warn('telemetry push failed; reports stay buffered and are retried with back-off', fields);
    }
    this.lastError = reason;
    this.lastErrorSince ??= new Date(this.o.now()).toISOString();
    const base = Math.min(this.o.maxBackoffMs, this.o.minBackoffMs * 2 ** (this.errors - 1));
    const delay = base * (0.5 + 0.5 * this.o.random());
    this.notBefore = this.o.now() + delay;
    if (this.closed) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.flush();
    }, delay);
    this.retry.unref();
  }
}

/** Dollars rounded to nano-dollars: sums of per-line costs carry float noise. */
function nanoUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/** In a `u` regex a surrogate pair is one code point, so `\p{Cs}` matches only a lone surrogate. */
const UNSTORABLE = /[\0\p{Cs}]/gu;

/**
 * A string as the control plane stores it: at most `max` UTF-16 units, never cut inside a
 * surrogate pair, with a lone surrogate or a NUL (which it refuses, and with them the whole
 * report) as U+FFFD. A character's name comes from the game's tick, so it may hold either.
 */
function text(v: string, max: number = LIMITS.text): string {
  let cut = v.length > max ? v.slice(0, max) : v;
  const last = cut.charCodeAt(cut.length - 1);
  if (cut.length < v.length && last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(cut) ? cut.replace(UNSTORABLE, '\uFFFD') : cut;
}

/** A roster row as the control plane accepts it (strings 1–200 characters), or nothing. */
function rosterEntry(s: Survivor): Survivor[] {
  if (!Number.isInteger(s.agent) || s.agent < 0 || !s.name || !s.alignment || !s.goal || !s.state) return [];
  return [{ agent: s.agent, name: text(s.name), alignment: text(s.alignment), goal: text(s.goal), state: text(s.state) }];
}

/** A 422 every detail of which is about the `map` field. */
function onlyMapRefused(reply: { status: number; text: string }): boolean {
  if (reply.status !== 422) return false;
  try {
    const details = (JSON.parse(reply.text) as { error?: { details?: { path?: unknown }[] } }).error?.details;
    return (
      Array.isArray(details) &&
      details.length > 0 &&
      details.every((d) => typeof d.path === 'string' && (d.path === 'map' || d.path.startsWith('map[') || d.path.startsWith('map.')))
    );
  } catch {
    return false;
  }
}

/** A map entry as the control plane accepts it, or nothing (a row it would refuse). */
function mapEntry(s: MapSurvivor): MapEntry[] {
  if (!Number.isInteger(s.agent) || s.agent < 0 || !s.name || !s.alignment || !s.goal || !s.state) return [];
  // A character the control plane would refuse (off any map) is left out rather than cost the whole sample.
  if (!(Math.abs(s.x) <= MAP_SAMPLE.maxCoordinate) || !(Math.abs(s.z) <= MAP_SAMPLE.maxCoordinate) || !Number.isFinite(s.health)) return [];
  return [
    {
      agent: s.agent,
      name: text(s.name, MAP_SAMPLE.name),
      alignment: text(s.alignment),
      goal: text(s.goal),
      state: text(s.state),
      ...(s.squad ? { squad: text(s.squad) } : {}),
      x: s.x,
      z: s.z,
      health: Math.max(0, Math.min(100, Math.round(s.health))),
    },
  ];
}
