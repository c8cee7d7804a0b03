import { isObj, type Obj } from '../../brain/json.js';
import type { Survivor } from '../../brain/types.js';
import { echoedKey, validationFailed, type ErrorDetail } from '../http/errors.js';
import { isRfc3339, typeOf, unstorableText } from '../http/validate.js';
import { DEFAULT_LIMITS } from '../http/limits.js';
import type { ControlPlaneStore } from './store.js';
import {
  DIALOGUE_SOURCES,
  type DialogueSource,
  type IngestOutcome,
  type MapEntry,
  type MapSample,
  type SignedRecord,
  type TelemetryRecord,
  type TelemetryReport,
} from './types.js';

export const TELEMETRY_LIMITS = { maxRoster: 1000, maxKind: 64, maxText: 200, maxReportId: 128, maxBody: 256 * 1024 } as const;

/**
 * The live map's sample (`map` on a report): at most `maxCharacters` characters, at most one
 * sample every `minIntervalMs` per server (by the reports' `ts`), and only a sample dated
 * within `maxSkewMs` of the control plane's clock (the signature window: a map is live or it
 * is worthless). More is a 422 naming `map`. Coordinates are metres within ±`maxCoordinate`.
 */
export const MAP_LIMITS = { maxCharacters: 500, minIntervalMs: 5_000, maxSkewMs: 300_000, maxCoordinate: 1e7 } as const;

const TOP = new Set([
  'serverId',
  'ts',
  'botCount',
  'playersOnline',
  'linesSpoken',
  'spendUsd',
  'events',
  'reportId',
  'llmTokens',
  'ttsCharacters',
  'cacheHits',
  'latency',
  'roster',
  'map',
  'economy',
  'dialogue',
]);
const ROSTER_KEYS = ['agent', 'name', 'alignment', 'goal', 'state'];
const MAP_KEYS = new Set([...ROSTER_KEYS, 'squad', 'x', 'z', 'health']);
const ROSTER_KEY_SET = new Set(ROSTER_KEYS);
const EVENT_KEYS = new Set(['kind', 'count']);
const LATENCY_KEYS = new Set(['p50', 'p99']);
const ECONOMY_KEYS = new Set(['ttsUsd', 'llmUsd', 'cacheHits']);
const DIALOGUE_KEYS = new Set(['source', 'model']);
const MAX_COUNT = 1e12;

/** Collects every problem of a report, then answers one 422 with all of them. */
class Check {
  readonly details: ErrorDetail[] = [];
  add(path: string, message: string): void {
    this.details.push({ path, message });
  }
  known(o: Obj, keys: ReadonlySet<string>, prefix: string): void {
    // for-in rather than Object.keys: the same own keys in the same order for a parsed JSON
    // object (nothing enumerable is inherited), without an array per object of every report.
    for (const k in o) if (!keys.has(k)) this.add(prefix + echoedKey(k), 'is not a known field');
  }
  int(o: Obj, key: string, path: string, required: boolean, max = MAX_COUNT): number | undefined {
    const v = o[key];
    if (v === undefined) return void (required && this.add(path, 'is required'));
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) return void this.add(path, `must be a non-negative integer, got ${show(v)}`);
    return v;
  }
  num(o: Obj, key: string, path: string, required: boolean): number | undefined {
    const v = o[key];
    if (v === undefined) return void (required && this.add(path, 'is required'));
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_COUNT) return void this.add(path, `must be a non-negative number, got ${show(v)}`);
    return v;
  }
  coordinate(o: Obj, key: string, path: string): number | undefined {
    const v = o[key];
    if (v === undefined) return void this.add(path, 'is required');
    if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > MAP_LIMITS.maxCoordinate)
      return void this.add(path, `must be a number of metres within ±${MAP_LIMITS.maxCoordinate}, got ${show(v)}`);
    return v;
  }
  str(o: Obj, key: string, path: string, required: boolean, max: number): string | undefined {
    const v = o[key];
    if (v === undefined) return void (required && this.add(path, 'is required'));
    if (typeof v !== 'string') return void this.add(path, `must be a string, got ${typeOf(v)}`);
    if (v.length === 0 || v.length > max) return void this.add(path, `must be 1 to ${max} characters, got ${v.length}`);
    const unstorable = unstorableText(v);
    if (unstorable !== null) return void this.add(path, unstorable);
    return v;
  }
}

/**
 * Every timestamp the control plane stores and returns is UTC (`…Z`): a `ts` already in UTC
 * keeps its digits (upper-cased), one with an offset is converted (to millisecond precision).
 */
export function utc(ts: string): string {
  const upper = ts.toUpperCase();
  return upper.endsWith('Z') ? upper : new Date(Date.parse(ts)).toISOString();
}

/** Whether every own key of `o` is in `keys` (what Check.known accepts without a detail). */
function onlyKeys(o: Obj, keys: ReadonlySet<string>): boolean {
  for (const k in o) if (!keys.has(k)) return false;
  return true;
}

/** What Check.int accepts with its default bound. */
function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_COUNT;
}

function show(v: unknown): string {
  return typeof v === 'number' ? String(v) : typeOf(v);
}

/**
 * Validates a telemetry body (spec 001 §2.2 plus the optional fields in docs/controlplane.md).
 * `maxEvents` bounds the event kinds one report may carry (the telemetryEventKinds limit).
 */
export function parseReport(value: unknown, maxEvents: number = DEFAULT_LIMITS.telemetryEventKinds): TelemetryReport {
  const c = new Check();
  if (!isObj(value)) throw validationFailed([{ path: '', message: `must be an object, got ${typeOf(value)}` }]);
  c.known(value, TOP, '');
  const serverId = c.str(value, 'serverId', 'serverId', true, 32);
  const ts = c.str(value, 'ts', 'ts', true, 64);
  const tsOk = ts !== undefined && isRfc3339(ts);
  if (ts !== undefined && !tsOk) c.add('ts', 'must be an RFC 3339 timestamp such as 2026-01-01T12:00:00Z');
  const report: TelemetryReport = {
    serverId: serverId!,
    ts: tsOk ? utc(ts) : ts!,
    botCount: c.int(value, 'botCount', 'botCount', true)!,
    playersOnline: c.int(value, 'playersOnline', 'playersOnline', true)!,
    linesSpoken: c.int(value, 'linesSpoken', 'linesSpoken', true)!,
    spendUsd: c.num(value, 'spendUsd', 'spendUsd', true)!,
    events: [],
  };
  const events = value.events;
  if (events === undefined) c.add('events', 'is required');
  else if (!Array.isArray(events)) c.add('events', `must be an array, got ${typeOf(events)}`);
  else if (events.length > maxEvents) c.add('events', `must have at most ${maxEvents} entries (event kinds), got ${events.length}`);
  else
    events.forEach((e, i) => {
      // An event valid as sent is taken without building the paths its errors would name
      // (three strings per event of every report); anything else goes the checked way below.
      if (isObj(e) && onlyKeys(e, EVENT_KEYS)) {
        const kind = e.kind;
        const count = e.count;
        if (typeof kind === 'string' && kind.length > 0 && kind.length <= TELEMETRY_LIMITS.maxKind && unstorableText(kind) === null && isCount(count)) {
          report.events.push({ kind, count });
          return;
        }
      }
      const p = `events[${i}]`;
      if (!isObj(e)) return c.add(p, `must be an object, got ${typeOf(e)}`);
      c.known(e, EVENT_KEYS, `${p}.`);
      const kind = c.str(e, 'kind', `${p}.kind`, true, TELEMETRY_LIMITS.maxKind);
      const count = c.int(e, 'count', `${p}.count`, true);
      if (kind !== undefined && count !== undefined) report.events.push({ kind, count });
    });

  const reportId = c.str(value, 'reportId', 'reportId', false, TELEMETRY_LIMITS.maxReportId);
  if (reportId !== undefined) report.reportId = reportId;
  for (const key of ['llmTokens', 'ttsCharacters', 'cacheHits'] as const) {
    const v = c.int(value, key, key, false);
    if (v !== undefined) report[key] = v;
  }
  if (value.latency !== undefined) {
    if (!isObj(value.latency)) c.add('latency', `must be an object {p50, p99}, got ${typeOf(value.latency)}`);
    else {
      c.known(value.latency, LATENCY_KEYS, 'latency.');
      const p50 = c.num(value.latency, 'p50', 'latency.p50', true);
      const p99 = c.num(value.latency, 'p99', 'latency.p99', true);
      if (p50 !== undefined && p99 !== undefined) report.latency = { p50, p99 };
    }
  }
  if (value.economy !== undefined) {
    if (!isObj(value.economy)) c.add('economy', `must be an object {ttsUsd, llmUsd, cacheHits?}, got ${typeOf(value.economy)}`);
    else {
      c.known(value.economy, ECONOMY_KEYS, 'economy.');
      const ttsUsd = c.num(value.economy, 'ttsUsd', 'economy.ttsUsd', true);
      const llmUsd = c.num(value.economy, 'llmUsd', 'economy.llmUsd', true);
      if (ttsUsd !== undefined && llmUsd !== undefined) report.economy = { ttsUsd, llmUsd };
      // The phrase cache's hits may come here instead of at the top level (the same number).
      const hits = c.int(value.economy, 'cacheHits', 'economy.cacheHits', false);
      if (hits !== undefined && report.cacheHits === undefined) report.cacheHits = hits;
      if (hits !== undefined && report.cacheHits !== undefined && hits !== report.cacheHits)
        c.add('economy.cacheHits', `must equal cacheHits (${report.cacheHits}) when both are sent, got ${hits}`);
    }
  }
  if (report.cacheHits !== undefined && report.linesSpoken !== undefined && report.cacheHits > report.linesSpoken) {
    c.add('cacheHits', `must not exceed linesSpoken (${report.linesSpoken}): cache hits are spoken lines served from the phrase cache`);
  }
  if (value.roster !== undefined) {
    const roster = value.roster;
    if (!Array.isArray(roster)) c.add('roster', `must be an array, got ${typeOf(roster)}`);
    else if (roster.length > TELEMETRY_LIMITS.maxRoster) c.add('roster', `must have at most ${TELEMETRY_LIMITS.maxRoster} entries, got ${roster.length}`);
    else {
      const list: Survivor[] = [];
      roster.forEach((s, i) => {
        const p = `roster[${i}]`;
        if (!isObj(s)) return c.add(p, `must be an object, got ${typeOf(s)}`);
        c.known(s, ROSTER_KEY_SET, `${p}.`);
        const agent = c.int(s, 'agent', `${p}.agent`, true, Number.MAX_SAFE_INTEGER);
        const name = c.str(s, 'name', `${p}.name`, true, TELEMETRY_LIMITS.maxText);
        const alignment = c.str(s, 'alignment', `${p}.alignment`, true, TELEMETRY_LIMITS.maxText);
        const goal = c.str(s, 'goal', `${p}.goal`, true, TELEMETRY_LIMITS.maxText);
        const state = c.str(s, 'state', `${p}.state`, true, TELEMETRY_LIMITS.maxText);
        if (agent !== undefined && name && alignment && goal && state) list.push({ agent, name, alignment, goal, state });
      });
      report.roster = list;
    }
  }
  if (value.map !== undefined) {
    const map = value.map;
    if (!Array.isArray(map)) c.add('map', `must be an array of characters with positions, got ${typeOf(map)}`);
    else if (map.length > MAP_LIMITS.maxCharacters)
      c.add('map', `must have at most ${MAP_LIMITS.maxCharacters} characters (a sample of the roster), got ${map.length}`);
    else {
      const list: MapEntry[] = [];
      map.forEach((s, i) => {
        const p = `map[${i}]`;
        if (!isObj(s)) return c.add(p, `must be an object, got ${typeOf(s)}`);
        c.known(s, MAP_KEYS, `${p}.`);
        const agent = c.int(s, 'agent', `${p}.agent`, true, Number.MAX_SAFE_INTEGER);
        const name = c.str(s, 'name', `${p}.name`, true, TELEMETRY_LIMITS.maxText);
        const alignment = c.str(s, 'alignment', `${p}.alignment`, true, TELEMETRY_LIMITS.maxText);
        const goal = c.str(s, 'goal', `${p}.goal`, true, TELEMETRY_LIMITS.maxText);
        const state = c.str(s, 'state', `${p}.state`, true, TELEMETRY_LIMITS.maxText);
        const squad = c.str(s, 'squad', `${p}.squad`, false, TELEMETRY_LIMITS.maxText);
        const x = c.coordinate(s, 'x', `${p}.x`);
        const z = c.coordinate(s, 'z', `${p}.z`);
        const health = c.num(s, 'health', `${p}.health`, false);
        if (health !== undefined && health > 100) c.add(`${p}.health`, `must be 0 to 100, got ${health}`);
        if (agent !== undefined && name && alignment && goal && state && x !== undefined && z !== undefined)
          list.push({ agent, name, alignment, goal, state, ...(squad ? { squad } : {}), x, z, ...(health !== undefined ? { health } : {}) });
      });
      report.map = list;
    }
  }
  if (value.dialogue !== undefined) {
    const d = value.dialogue;
    if (!isObj(d)) c.add('dialogue', `must be an object {source, model?}, got ${typeOf(d)}`);
    else {
      c.known(d, DIALOGUE_KEYS, 'dialogue.');
      const source = d.source;
      if (typeof source !== 'string' || !(DIALOGUE_SOURCES as readonly string[]).includes(source))
        c.add(
          'dialogue.source',
          `must be one of ${DIALOGUE_SOURCES.join(', ')}, got ${typeof source === 'string' ? JSON.stringify(source.slice(0, 40)) : typeOf(source)}`,
        );
      const model = c.str(d, 'model', 'dialogue.model', false, TELEMETRY_LIMITS.maxText);
      if (typeof source === 'string' && (DIALOGUE_SOURCES as readonly string[]).includes(source))
        report.dialogue = { source: source as DialogueSource['source'], ...(model !== undefined ? { model } : {}) };
    }
  }
  if (c.details.length > 0) throw validationFailed(c.details, 'The telemetry report failed validation.');
  return report;
}

/**
 * How a group commit gathers its batch: while the reports keep coming (the last turn of the
 * event loop brought more), it waits another turn, up to `maxTurns` turns after the first report
 * and while it holds fewer than `maxReports`. A commit costs about as much for one report as for dozens
 * (the transaction's lock, the WAL frames of the same few pages), so a busy server's batches
 * grow to take in the clients still sending; a lone report is written at the first turn.
 */
export const INGEST_GATHER = { maxTurns: 4, maxReports: 512 } as const;

/**
 * Group commit: reports that arrive while a batch gathers (INGEST_GATHER) are stored in one
 * transaction, and each request is answered only after its report is committed, so a 202
 * always means stored while ingest keeps pace with many small reports.
 */
export class IngestQueue {
  private pending: Pending<unknown>[] = [];
  /** Signed records among `pending` (pushSigned): a batch with any goes through the store's ingestSigned. */
  private signed = 0;
  private scheduled = false;
  /** One batch at a time: reports that arrive while one is written go in the next, so a store over the network commits a burst in a few transactions. */
  private running = false;
  /** While gathering: the reports pending at the last turn, and the turns waited. */
  private seen = 0;
  private turns = 0;

  constructor(private readonly store: ControlPlaneStore) {}

  /**
   * Queues a report; the promise settles once its batch is committed, with the outcome, or
   * with what `then` makes of it (run as the batch settles, so the answer costs no second
   * promise: every report of a busy server goes this way).
   */
  push(record: TelemetryRecord): Promise<IngestOutcome>;
  push<R>(record: TelemetryRecord, then: (outcome: IngestOutcome) => R | PromiseLike<R>): Promise<R>;
  push<R>(record: TelemetryRecord, then?: (outcome: IngestOutcome) => R | PromiseLike<R>): Promise<R | IngestOutcome> {
    return new Promise((resolve, reject) => {
      this.pending.push({ record, answer: then, resolve, reject } as Pending<unknown>);
      this.schedule();
    });
  }

  /**
   * Queues a report with its signature's entry in the shared replay record, both written by
   * the batch's one statement (the store must have ingestSigned); `then` gets null for a replay,
   * which stored nothing.
   */
  pushSigned<R>(record: SignedRecord, then: (outcome: IngestOutcome | null) => R | PromiseLike<R>): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ record, answer: then, resolve, reject } as Pending<unknown>);
      this.signed++;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    this.seen = this.pending.length;
    this.turns = 0;
    setImmediate(this.gather);
  }

  /** A turn of gathering: another while the last one brought reports (see INGEST_GATHER), else the batch is written. */
  private readonly gather = (): void => {
    const n = this.pending.length;
    if (n > this.seen && n < INGEST_GATHER.maxReports && ++this.turns < INGEST_GATHER.maxTurns) {
      this.seen = n;
      setImmediate(this.gather);
      return;
    }
    void this.flush();
  };

  private async flush(): Promise<void> {
    const batch = this.pending;
    const signed = this.signed;
    this.pending = [];
    this.signed = 0;
    this.scheduled = false;
    this.running = true;
    try {
      const records = batch.map((b) => b.record);
      const outcomes = signed > 0 ? await this.store.ingestSigned!(records) : await this.store.ingest(records);
      for (let i = 0; i < batch.length; i++) settle(batch[i]!, outcomes[i]!);
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      this.running = false;
      if (this.pending.length > 0) this.schedule();
    }
  }
}

interface Pending<R> {
  record: TelemetryRecord | SignedRecord;
  /** Not named `then`: the entry must never look like a promise. A plain record's outcome is never null. */
  answer: ((outcome: IngestOutcome | null) => R | PromiseLike<R>) | undefined;
  resolve(value: R | PromiseLike<R> | IngestOutcome | null): void;
  reject(e: unknown): void;
}

/** Settles one queued report: a throw out of its `then` rejects that report alone. */
function settle<R>(p: Pending<R>, outcome: IngestOutcome | null): void {
  if (p.answer === undefined) return p.resolve(outcome);
  try {
    p.resolve(p.answer(outcome));
  } catch (err) {
    p.reject(err);
  }
}

/**
 * The report's map sample as the server's next one, or a 422 naming `map` when it comes too
 * soon after the stored one (MAP_LIMITS.minIntervalMs, by the reports' `ts`) or is dated too
 * far from `now`. A repeat of the stored sample (a report sent again) is null: nothing to store.
 */
export function nextMapSample(report: TelemetryReport, stored: MapSample | null, now: number, receivedAt: number): MapSample | null {
  if (report.map === undefined) return null;
  const atMs = Date.parse(report.ts);
  if (Math.abs(now - atMs) > MAP_LIMITS.maxSkewMs)
    throw validationFailed(
      [
        {
          path: 'map',
          message: `a map sample must be dated within ${MAP_LIMITS.maxSkewMs / 1000} s of now (the report's ts is ${report.ts}); send a sample only with a fresh report`,
        },
      ],
      'The telemetry report failed validation.',
    );
  if (stored !== null && atMs === stored.atMs) return null;
  if (stored !== null && atMs < stored.atMs + MAP_LIMITS.minIntervalMs)
    throw validationFailed(
      [
        {
          path: 'map',
          message: `at most one map sample every ${MAP_LIMITS.minIntervalMs / 1000} s: the last one is dated ${stored.ts}, this one ${report.ts}`,
        },
      ],
      'The telemetry report failed validation.',
    );
  return { ts: report.ts, atMs, receivedAt, characters: report.map };
}
