import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { signRequest } from '../../src/signing/request.js';
import { solidPng } from './png.js';
import { Worker } from 'node:worker_threads';
import { CALM, CALM_PULLS_PER_S, CALM_READS_PER_S, shoot, type Kind, type Outcome, type SoakContext } from './traffic.js';

const CLI = fileURLToPath(new URL('../../../bin/brainstem', import.meta.url));

export interface SoakOptions {
  /** Seconds of mixed traffic under load. */
  durationS: number;
  /** Seconds of the unloaded run of the well-behaved client alone, before the load. */
  baselineS: number;
  /** Concurrent flooding clients (each sends its next request when the last is answered). */
  floodWorkers: number;
  /** Requests per second of the well-behaved client. */
  calmRate: number;
  log(line: string): void;
}

/** The goals the soak checks (see bench/RESULTS.md). */
export const SOAK_GOALS = { maxRssGrowth: 0.1, maxCalmP99Ratio: 2, rssBaselineAfterS: 60 } as const;

export interface RouteStats {
  route: string;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers by status class ('2xx', '4xx', …; '0' = no answer). */
  statuses: Record<string, number>;
}

export interface SoakResult {
  durationS: number;
  baselineS: number;
  floodWorkers: number;
  calmRate: number;
  /** Set when the stack exited during the run (with its code). */
  crashed: string | null;
  routes: RouteStats[];
  calm: { route: string; unloadedP99Ms: number; loadedP99Ms: number; ratio: number }[];
  errors: { serverErrorsValid: number; serverErrorsMalformed: number; noAnswer: number };
  rss: { startMb: number; baselineMb: number; endMb: number; growthPct: number };
  /** Well-behaved requests refused with 429 (it paces itself within every limit: any is a fault of the harness or the limiter). */
  calmRateLimited: number;
  goals: { noCrash: boolean; no5xxForValid: boolean; rssGrowthUnder10Pct: boolean; calmP99Within2x: boolean; calmNeverLimited: boolean };
}

interface Stack {
  child: ChildProcess;
  api: string;
  sidecar: string;
  email: string;
  password: string;
  adminToken: string;
  serverId: number;
  exit: string | null;
}

async function startStack(dir: string): Promise<Stack> {
  const child = spawn(
    process.execPath,
    [CLI, 'up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--json', '--db', join(dir, 'soak.db'), '--data', join(dir, 'data')],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BRAINSTEM_LOG: process.env.BRAINSTEM_LOG ?? 'error', SERVICE_BRAIN_TOKEN: '', SERVICE_ADMIN_TOKEN: '', SERVICE_LLM_BASE_URL: '' },
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`brainstem up exited (${code}) before it was ready`)));
  });
  const up = JSON.parse(line) as { api: string; sidecar: string; email: string; password: string; adminToken: string; serverId: number };
  const stack: Stack = {
    child,
    api: up.api.replace(/\/v1$/, ''),
    sidecar: up.sidecar,
    email: up.email,
    password: up.password,
    adminToken: up.adminToken,
    serverId: up.serverId,
    exit: null,
  };
  child.on('exit', (code, signal) => (stack.exit = `exit ${code ?? signal}`));
  return stack;
}

async function json<T>(res: Promise<Response>, what: string): Promise<T> {
  const r = await res;
  const body = await r.text();
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${body.slice(0, 200)}`);
  return JSON.parse(body) as T;
}

function post(url: string, token: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Both tenants' credentials, made through the API as a user would. */
async function setUp(stack: Stack): Promise<SoakContext> {
  const api = stack.api;
  const login = (email: string, password: string) =>
    json<{ token: string }>(
      fetch(`${api}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) }),
      'login',
    );
  const a = (await login(stack.email, stack.password)).token;
  const aKey = await json<{ key: string }>(post(`${api}/v1/servers/${stack.serverId}/keys`, a, {}), 'server key');
  const apiKey = await json<{ key: string }>(post(`${api}/v1/api-keys`, a, { name: 'soak' }), 'API key');
  const widget = await json<{ id: string }>(post(`${api}/v1/widgets`, a, { name: 'soak' }), 'widget');
  const property = await json<{ id: number }>(
    post(`${api}/v1/properties`, apiKey.key, { title: 'Soak', address: '1 Soak Road', city: 'Lyon', price: 1, currency: 'EUR', bedrooms: 1 }),
    'property',
  );
  const tenant = await json<{ id: number }>(post(`${api}/v1/admin/tenants`, stack.adminToken, { name: 'Calm tenant', plan: 'agency' }), 'tenant');
  await json(post(`${api}/v1/admin/tenants/${tenant.id}/users`, stack.adminToken, { email: 'calm@soak.local', password: 'calm soak password' }), 'user');
  const b = (await login('calm@soak.local', 'calm soak password')).token;
  const bServer = await json<{ id: number }>(post(`${api}/v1/servers`, b, { name: 'calm' }), 'server');
  const bKey = await json<{ key: string }>(post(`${api}/v1/servers/${bServer.id}/keys`, b, {}), 'server key');
  // The calm tenant's sidecar pulls as a real one does: conditionally, on the ETag it has.
  const target = `/v1/config?server=${bServer.id}&nonce=setup`;
  const first = await fetch(api + target, { headers: signRequest(bKey.key, { method: 'GET', target }) });
  await first.arrayBuffer();
  return {
    api,
    sidecar: stack.sidecar,
    flood: {
      session: a,
      email: stack.email,
      serverId: stack.serverId,
      serverKey: aKey.key,
      apiKey: apiKey.key,
      widgetId: widget.id,
      propertyId: property.id,
      photos: 0,
    },
    calm: { session: b, serverId: bServer.id, serverKey: bKey.key, etag: first.headers.get('etag') },
    png: solidPng(64, 48, [40, 120, 200]),
    seq: 0,
  };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : NaN;
}

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
}

class Recorder {
  private readonly times = new Map<string, number[]>();
  private readonly statuses = new Map<string, Record<string, number>>();
  serverErrorsValid = 0;
  serverErrorsMalformed = 0;
  rateLimited = 0;
  noAnswer = 0;

  add(o: Outcome): void {
    let t = this.times.get(o.route);
    if (!t) this.times.set(o.route, (t = []));
    t.push(o.ms);
    let s = this.statuses.get(o.route);
    if (!s) this.statuses.set(o.route, (s = {}));
    const cls = o.status === 0 ? '0' : `${Math.floor(o.status / 100)}xx`;
    s[cls] = (s[cls] ?? 0) + 1;
    if (o.status === 429) this.rateLimited++;
    if (o.status === 0) this.noAnswer++;
    else if (o.status >= 500) {
      if (o.valid) this.serverErrorsValid++;
      else this.serverErrorsMalformed++;
    }
  }

  stats(): RouteStats[] {
    return [...this.times.entries()].map(([route, list]) => {
      const sorted = Float64Array.from(list).sort();
      return { route, requests: list.length, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), statuses: this.statuses.get(route)! };
    });
  }
}

/**
 * The well-behaved client: `rate` requests per second split evenly over its kinds, each kind
 * on its own timer and sent on time whatever the last one did, a kind with a `maxPerS` (the
 * pulls and dashboard reads, counted against rate limits) held to it.
 */
function calmClient(ctx: SoakContext, rate: number, rec: Recorder): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  const timers = CALM.map((kind) =>
    setInterval(
      () => {
        const p = shoot(kind, ctx).then((o) => rec.add(o));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      },
      1000 / calmPace(kind, rate),
    ),
  );
  return {
    async stop() {
      for (const t of timers) clearInterval(t);
      await Promise.all(inFlight);
    },
  };
}

/** Requests per second of one calm kind: its share of `rate`, capped at its maxPerS. */
export function calmPace(kind: Kind, rate: number): number {
  return Math.min(rate / CALM.length, kind.maxPerS ?? Infinity);
}

/** The flooding clients (flood-worker.ts), each sending the weighted mix as fast as it is answered, until `until`. */
function flood(ctx: SoakContext, clients: number, until: number, rec: Recorder): Promise<void> {
  const worker = new Worker(new URL('./flood-worker.js', import.meta.url), { workerData: { ctx, clients, until } });
  return new Promise((resolve, reject) => {
    worker.once('message', (outcomes: Outcome[]) => {
      for (const o of outcomes) rec.add(o);
      resolve();
    });
    worker.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `brainstem bench soak`: `brainstem up` in a child process, the well-behaved client alone for
 * the baseline, then the same client beside a flooding tenant's mixed traffic (ticks, pulls,
 * telemetry, uploads, events, logins with wrong passwords, malformed requests) for the run.
 */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-soak-'));
  const stack = await startStack(dir);
  try {
    const ctx = await setUp(stack);
    const pid = stack.child.pid!;
    const startMb = rssMb(pid);
    o.log(`stack up (pid ${pid}, ${startMb} MB); unloaded run of the well-behaved client for ${o.baselineS} s`);
    const unloaded = new Recorder();
    let calm = calmClient(ctx, o.calmRate, unloaded);
    await sleep(o.baselineS * 1000);
    await calm.stop();

    o.log(`loaded run: ${o.floodWorkers} flooding clients beside the well-behaved one for ${o.durationS} s`);
    const loaded = new Recorder();
    const calmLoaded = new Recorder();
    calm = calmClient(ctx, o.calmRate, calmLoaded);
    const started = Date.now();
    const until = started + o.durationS * 1000;
    const floods = flood(ctx, o.floodWorkers, until, loaded);
    // RSS growth is measured from the first minute on (or from the start of a shorter run): the
    // heap and caches fill in the first minute, which is not a leak.
    const baselineAt = started + Math.min(SOAK_GOALS.rssBaselineAfterS, o.durationS / 2) * 1000;
    let baselineMb = NaN;
    while (Date.now() < until && stack.exit === null) {
      await sleep(Math.min(5000, Math.max(0, until - Date.now())));
      if (stack.exit !== null) break;
      if (Number.isNaN(baselineMb) && Date.now() >= baselineAt) baselineMb = rssMb(pid);
      o.log(
        `${Math.round((Date.now() - started) / 1000)} s: rss ${rssMb(pid)} MB, ${calmLoaded.stats().reduce((a, r) => a + r.requests, 0)} well-behaved requests answered`,
      );
    }
    await floods;
    await calm.stop();
    const endMb = stack.exit === null ? rssMb(pid) : NaN;
    const alive =
      stack.exit === null &&
      (await fetch(`${stack.api}/health`).then(
        (r) => r.ok,
        () => false,
      )) &&
      (await fetch(`${stack.sidecar}/health`).then(
        (r) => r.ok,
        () => false,
      ));

    const unloadedStats = unloaded.stats();
    const calmStats = calmLoaded.stats();
    const calmRows = unloadedStats.map((u) => {
      const l = calmStats.find((c) => c.route === u.route);
      const loadedP99Ms = l?.p99Ms ?? NaN;
      return { route: u.route, unloadedP99Ms: u.p99Ms, loadedP99Ms, ratio: Math.round((loadedP99Ms / u.p99Ms) * 100) / 100 };
    });
    const growth = (endMb - baselineMb) / baselineMb;
    const serverErrorsValid = loaded.serverErrorsValid + calmLoaded.serverErrorsValid + unloaded.serverErrorsValid;
    return {
      durationS: o.durationS,
      baselineS: o.baselineS,
      floodWorkers: o.floodWorkers,
      calmRate: o.calmRate,
      crashed: alive ? null : (stack.exit ?? 'stopped answering /health'),
      routes: [...loaded.stats(), ...calmStats],
      calm: calmRows,
      errors: {
        serverErrorsValid,
        serverErrorsMalformed: loaded.serverErrorsMalformed,
        noAnswer: loaded.noAnswer + calmLoaded.noAnswer + unloaded.noAnswer,
      },
      rss: { startMb, baselineMb, endMb, growthPct: Math.round(growth * 1000) / 10 },
      calmRateLimited: unloaded.rateLimited + calmLoaded.rateLimited,
      goals: {
        calmNeverLimited: unloaded.rateLimited + calmLoaded.rateLimited === 0,
        noCrash: alive,
        no5xxForValid: serverErrorsValid === 0,
        rssGrowthUnder10Pct: growth < SOAK_GOALS.maxRssGrowth,
        calmP99Within2x: calmRows.every((r) => r.ratio <= SOAK_GOALS.maxCalmP99Ratio),
      },
    };
  } finally {
    if (stack.exit === null) {
      const exited = new Promise((r) => stack.child.once('exit', r));
      stack.child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export function soakTable(r: SoakResult): string {
  const lines = [
    `soak: ${r.durationS} s under load (${r.floodWorkers} flooding clients), well-behaved client at ${r.calmRate}/s (pulls at most ${CALM_PULLS_PER_S}/s, dashboard reads at most ${CALM_READS_PER_S}/s), unloaded baseline ${r.baselineS} s`,
    '',
    '| route | requests | p50 ms | p99 ms | answers |',
    '|---|--:|--:|--:|---|',
    ...r.routes.map(
      (s) =>
        `| ${s.route} | ${s.requests} | ${s.p50Ms} | ${s.p99Ms} | ${Object.entries(s.statuses)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} |`,
    ),
    '',
    '| well-behaved route | p99 unloaded ms | p99 loaded ms | ratio |',
    '|---|--:|--:|--:|',
    ...r.calm.map((c) => `| ${c.route} | ${c.unloadedP99Ms} | ${c.loadedP99Ms} | ${c.ratio} |`),
    '',
    `RSS: ${r.rss.startMb} MB at start, ${r.rss.baselineMb} MB after the first minute, ${r.rss.endMb} MB at the end (${r.rss.growthPct} %)`,
    `errors: ${r.errors.serverErrorsValid} 5xx for valid requests, ${r.errors.serverErrorsMalformed} 5xx for malformed ones, ${r.errors.noAnswer} without an answer`,
    `goals: no crash ${r.goals.noCrash ? 'met' : `MISSED (${r.crashed})`}; 0 5xx for valid requests ${r.goals.no5xxForValid ? 'met' : 'MISSED'}; RSS growth < 10 % ${r.goals.rssGrowthUnder10Pct ? 'met' : 'MISSED'}; well-behaved p99 within 2x ${r.goals.calmP99Within2x ? 'met' : 'MISSED'}; well-behaved client never rate-limited ${r.goals.calmNeverLimited ? 'met' : `MISSED (${r.calmRateLimited} 429s)`}`,
  ];
  return lines.join('\n');
}
