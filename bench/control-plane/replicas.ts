import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ADMIN, BENCH_LIMITS, HERE, ROOT, benchReport, call, pinned, startChild, stop, writePool } from './run.js';
import { runWrk, type WrkResult } from './wrk.js';
import { cpuQuotas, type CpuQuota, type CpuQuotas } from '../cgroup.js';

/**
 * The control plane on PostgreSQL with 1 and N replicas beside a single process on SQLite, in
 * one run: signed config pulls answered 304 and telemetry ingest, each replica driven by its
 * own wrk (a load balancer spreads clients the same way), and each replica's CPU time per
 * request read from /proc.
 */
export interface ReplicaBenchOptions {
  /** A PostgreSQL server URL whose role may create databases; each configuration gets a fresh one, dropped after. */
  database: string;
  replicas: number[];
  durationS: number;
  connections: number;
  serverCpu: string | undefined;
  loadCpu: string | undefined;
  poolRate: number;
  /**
   * Seconds of the same load each server gets, unmeasured, before each measured scenario: a
   * fresh process spends its first seconds compiling its hot paths, and N replicas would each
   * pay that over a 1/N share of the requests. Its reports count in the lost check too.
   */
  warmupS: number;
  /** A directory where each serve process writes a V8 CPU profile, with the scenarios' windows in phases.json; null for none. */
  cpuProfDir: string | null;
  /**
   * Each serve process, and the hello-world baseline, in a CPU cgroup of its own with this
   * share of one core (a replica on a core of its own, at a smaller size); null to run them
   * unconfined. PostgreSQL and wrk stay outside the quotas.
   */
  replicaCpu: number | null;
  log: (line: string) => void;
}

export interface ConfigurationResult {
  name: string;
  replicas: number;
  /**
   * When each measured scenario ran, on the monotonic clock (µs) that V8's CPU profiles and
   * `perf record -k CLOCK_MONOTONIC` stamp their samples with, to cut a profile to it.
   */
  windowsUs: { pull: [number, number]; telemetry: [number, number] };
  /** With a profile directory: each serve process's profile file in it. */
  profiles?: string[];
  signed304: { rps: number; errors: number; p50Ms: number; p99Ms: number; cpuMsPerRequest: number[]; work: RunWork };
  telemetry: { rps: number; errors: number; acknowledged: number; stored: number; lost: number; cpuMsPerRequest: number[]; work: RunWork };
}

/**
 * What the rest of the machine did while a scenario ran: PostgreSQL's own CPU per request
 * (its server process and every backend; null when the server is not on this machine or its
 * data directory cannot be read) and how busy both cores were, so a replica count that finds
 * the machine full is told apart from one that finds its quota full.
 */
export interface RunWork {
  postgresCpuMsPerRequest: number | null;
  /** Share of all cores' time spent busy during the scenario, 0–1. */
  machineBusy: number;
  /**
   * Per serve process, the CPU time it used as a share of its quota over the scenario (0–1;
   * null without quotas). Near 1 the quota bound it (its own core was full); well below while
   * the machine is full, it waited for a core or for PostgreSQL, and the scenario measured the
   * machine rather than the replica.
   */
  quotaUsed: number[] | null;
}

export interface ReplicaBenchResult {
  settings: {
    durationS: number;
    warmupS: number;
    connections: number;
    serverCpu: string | null;
    loadCpu: string | null;
    /** The quota each process ran under (cores), or null with the reason there was none. */
    replicaCpu: number | null;
    quotaUnavailable: string | null;
  };
  /** A bare uWebSockets.js hello-world on the servers' core, driven by the same pull script and connections. */
  helloWorld: { rps: number; cpuMsPerRequest: number };
  configurations: ConfigurationResult[];
}

const TICKS_PER_S = 100;

/** CPU time (ms) a process has used, user and system, from /proc/PID/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/** Busy and total CPU time of the whole machine (jiffies), from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/**
 * CPU time (ms) of a PostgreSQL server: its postmaster's own and its exited children's (from
 * the same /proc stat line), plus every live child's (the backends of the pools).
 */
export function postgresCpuMs(postmaster: number): number {
  const stat = readFileSync(`/proc/${postmaster}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const s = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const g = s.slice(s.lastIndexOf(')') + 2).split(' ');
      if (Number(g[1]) === postmaster) ticks += Number(g[11]) + Number(g[12]);
    } catch {
      // A backend that exited between the listing and the read: its time is in the postmaster's children's now.
    }
  }
  return (ticks * 1000) / TICKS_PER_S;
}

/** The postmaster's pid when the server at `url` runs on this machine and its data directory is readable; else null. */
export async function postmasterOf(url: string): Promise<number | null> {
  try {
    const dir = await withAdmin(url, async (c) => (await c.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory);
    const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
    return Number.isInteger(pid) && pid > 0 && readFileSync(`/proc/${pid}/stat`, 'utf8').length > 0 ? pid : null;
  } catch {
    return null;
  }
}

export async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export function databaseUrl(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Each process's CPU time (ms) over `wallMs` as a share of its quota; null when there were no quotas. */
export function quotaShares(quotas: CpuQuotas | null, usedMs: number[], wallMs: number): number[] | null {
  if (!quotas?.available) return null;
  return usedMs.map((ms) => Math.round((ms / Math.max(1, wallMs * quotas.fraction)) * 100) / 100);
}

/** Sums the wrk runs of one scenario (one per replica, run at once). */
function combine(runs: WrkResult[]): { rps: number; errors: number; requests: number; p50Ms: number; p99Ms: number } {
  return {
    rps: Math.round(runs.reduce((a, r) => a + r.rps, 0)),
    errors: runs.reduce((a, r) => a + r.errors + r.socketErrors, 0),
    requests: runs.reduce((a, r) => a + r.requests, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
  };
}

/**
 * Runs one configuration on SQLite (one process, `url` null), then one per replica count on a
 * fresh database of the PostgreSQL server at `base` (dropped after); the results in that order.
 */
export async function acrossConfigurations<T>(
  base: string,
  replicas: number[],
  run: (name: string, replicas: number, url: string | null) => Promise<T>,
): Promise<T[]> {
  const out = [await run('sqlite, 1 process', 1, null)];
  for (const n of replicas) {
    const name = `brainstem_bench_${process.pid}_${n}`;
    await withAdmin(base, (c) => c.query(`CREATE DATABASE ${name}`));
    try {
      out.push(await run(`postgres, ${n} replica${n === 1 ? '' : 's'}`, n, databaseUrl(base, name)));
    } finally {
      await withAdmin(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  }
  return out;
}

/** The quotas of a run, when asked for; the reason goes to the log when they cannot be made. */
export function quotasFor(replicaCpu: number | null, log: (line: string) => void): CpuQuotas | null {
  if (replicaCpu === null) return null;
  const q = cpuQuotas(replicaCpu, 'brainstem-bench');
  if (q.available) log(`each server process runs in a CPU cgroup of its own, quota ${replicaCpu} of a core`);
  else log(`CPU quotas unavailable (${q.reason}): measuring without them`);
  return q;
}

/** Starts `cmd args` in a fresh quota when there are quotas (unpinned: the quota is the core), else pinned as `serverCpu` says. */
export function confined(
  quotas: CpuQuotas | null,
  made: CpuQuota[],
  name: string,
  serverCpu: string | undefined,
  cmd: string,
  args: string[],
): [string, string[]] {
  if (quotas?.available) {
    const quota = quotas.create(name);
    made.push(quota);
    return quota.wrap(cmd, args);
  }
  return pinned(serverCpu, cmd, args);
}

export async function runReplicaBench(o: ReplicaBenchOptions): Promise<ReplicaBenchResult> {
  const quotas = quotasFor(o.replicaCpu, o.log);
  if (o.cpuProfDir !== null) mkdirSync(o.cpuProfDir, { recursive: true });
  const helloWorld = await helloBaseline(o, quotas);
  const configurations = await acrossConfigurations(o.database, o.replicas, (name, n, url) => runConfiguration(o, quotas, name, n, url));
  if (o.cpuProfDir !== null)
    writeFileSync(
      join(o.cpuProfDir, 'phases.json'),
      JSON.stringify(
        configurations.map(({ name, profiles, windowsUs }) => ({ name, profiles, windowsUs })),
        null,
        2,
      ),
    );
  return {
    settings: {
      durationS: o.durationS,
      warmupS: o.warmupS,
      connections: o.connections,
      serverCpu: quotas?.available ? null : (o.serverCpu ?? null),
      loadCpu: o.loadCpu ?? null,
      replicaCpu: quotas?.available ? quotas.fraction : null,
      quotaUnavailable: quotas && !quotas.available ? quotas.reason : null,
    },
    helloWorld,
    configurations,
  };
}

/** The baseline of the run: the bare hello-world's rate and CPU per request, read like a replica's. */
async function helloBaseline(o: ReplicaBenchOptions, quotas: CpuQuotas | null): Promise<{ rps: number; cpuMsPerRequest: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-hello-'));
  const made: CpuQuota[] = [];
  const [cmd, args] = confined(quotas, made, 'hello', o.serverCpu, process.execPath, [join(ROOT, 'dist', 'bench', 'control-plane', 'hello.js'), '0']);
  const hello = await startChild(cmd, args, process.env, /listening (\d+)/);
  try {
    o.log('hello-world baseline');
    const file = join(dir, 'hello.pool');
    // The same requests as the pulls (the hello-world ignores what they say).
    await writePool(
      file,
      'bsk_hello',
      Math.ceil(o.poolRate * o.durationS * 1.2),
      'GET',
      (i) => `/v1/config?server=1&n=${i}`,
      () => undefined,
    );
    const load = (durationS: number) =>
      runWrk({
        url: `http://127.0.0.1:${hello.port}`,
        threads: 1,
        connections: o.connections,
        durationS,
        cpu: o.loadCpu,
        script: join(HERE, 'pull.lua'),
        args: [file, '1', 'bsk_hello', '1', '0'],
      });
    if (o.warmupS > 0) await load(o.warmupS);
    const before = cpuMs(hello.child.pid!);
    const run = await load(o.durationS);
    return { rps: Math.round(run.rps), cpuMsPerRequest: Math.round(((cpuMs(hello.child.pid!) - before) / Math.max(1, run.requests)) * 1000) / 1000 };
  } finally {
    await stop(hello.child);
    for (const q of made) q.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runConfiguration(
  o: ReplicaBenchOptions,
  quotas: CpuQuotas | null,
  name: string,
  replicas: number,
  url: string | null,
): Promise<ConfigurationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-replicas-'));
  const children: ChildProcess[] = [];
  const made: CpuQuota[] = [];
  try {
    const limits = join(dir, 'limits.json');
    writeFileSync(limits, JSON.stringify(BENCH_LIMITS));
    const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error' };
    const database = url ?? `sqlite:${join(dir, 'bench.db')}`;
    const ports: number[] = [];
    for (let i = 0; i < replicas; i++) {
      // Replicas start one after another: the first migrates, the others find the schema there.
      const profile = o.cpuProfDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=${profileName(name, i)}`];
      const [cmd, args] = confined(quotas, made, `serve-${replicas}-${i}`, o.serverCpu, process.execPath, [
        ...profile,
        join(ROOT, 'bin', 'brainstem'),
        'serve',
        '--addr',
        '127.0.0.1:0',
        '--database',
        database,
        '--data',
        join(dir, 'data'),
        '--limits',
        limits,
      ]);
      const s = await startChild(cmd, args, env, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
      children.push(s.child);
      ports.push(s.port);
    }
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);
    o.log(`${name}: ${replicas} serve process${replicas === 1 ? '' : 'es'} on ${url ? 'PostgreSQL' : 'SQLite'}`);
    const tenant = await call(bases[0]!, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(bases[0]!, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password' });
    const { token } = await call(bases[0]!, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
    const server = await call(bases[0]!, 'POST', '/v1/servers', token, { name: 'bench' });
    const { key } = await call(bases[0]!, 'POST', `/v1/servers/${server.id}/keys`, token);

    const connections = Math.max(1, Math.floor(o.connections / replicas));
    const pullCount = Math.ceil((o.poolRate / replicas) * o.durationS * 1.2);
    const pushCount = Math.ceil((Math.max(20_000, o.poolRate / 3) / replicas) * o.durationS * 1.2);
    const reportTs = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const pids = children.map((c) => c.pid!);

    // Each replica's wrk signs its own range of nonces and report ids, so no signature or report
    // repeats across replicas; the warm-up's ranges come after the measured runs'.
    const postmaster = url === null ? null : await postmasterOf(url);
    // The signed requests of one phase, written before it starts; the phase then runs every replica's wrk at once.
    const prepare = async (kind: 'pull' | 'telemetry', durationS: number, phase: 'warm' | 'measured'): Promise<() => Promise<WrkResult[]>> => {
      const perReplica = Math.ceil(((kind === 'pull' ? pullCount : pushCount) * durationS) / o.durationS);
      const base = phase === 'measured' ? 0 : replicas * (kind === 'pull' ? pullCount : pushCount);
      const pools = await Promise.all(
        bases.map(async (_, r) => {
          const file = join(dir, `${kind}-${phase}-${r}.pool`);
          const offset = base + r * perReplica;
          if (kind === 'pull')
            await writePool(
              file,
              key,
              perReplica,
              'GET',
              (i) => `/v1/config?server=${server.id}&n=${offset + i}`,
              () => undefined,
            );
          else
            await writePool(
              file,
              key,
              perReplica,
              'POST',
              () => '/v1/telemetry',
              (i) => benchReport(server.id, reportTs, offset + i),
            );
          return { file, offset };
        }),
      );
      return () =>
        Promise.all(
          bases.map((base, r) =>
            runWrk({
              url: base,
              threads: 1,
              connections,
              durationS,
              cpu: o.loadCpu,
              script: join(HERE, kind === 'pull' ? 'pull.lua' : 'telemetry.lua'),
              args:
                kind === 'pull'
                  ? [pools[r]!.file, '1', key, String(server.id), String(pools[r]!.offset)]
                  : [pools[r]!.file, '1', key, String(server.id), reportTs, String(pools[r]!.offset)],
            }),
          ),
        );
    };
    const windows: Partial<Record<'pull' | 'telemetry', [number, number]>> = {};
    const scenario = async (kind: 'pull' | 'telemetry'): Promise<{ runs: WrkResult[]; warm: WrkResult[]; cpu: number[]; work: RunWork }> => {
      const warm = o.warmupS > 0 ? await (await prepare(kind, o.warmupS, 'warm'))() : [];
      const measured = await prepare(kind, o.durationS, 'measured');
      const before = pids.map(cpuMs);
      const pgBefore = postmaster === null ? 0 : postgresCpuMs(postmaster);
      const machineBefore = machineTicks();
      const from = monotonicUs();
      const runs = await measured();
      windows[kind] = [from, monotonicUs()];
      const wallMs = (windows[kind][1] - from) / 1000;
      const machine = machineTicks();
      const requests = Math.max(
        1,
        runs.reduce((a, r) => a + r.requests, 0),
      );
      const used = pids.map((pid, r) => cpuMs(pid) - before[r]!);
      const cpu = used.map((ms, r) => Math.round((ms / Math.max(1, runs[r]!.requests)) * 1000) / 1000);
      const work: RunWork = {
        quotaUsed: quotaShares(quotas, used, wallMs),
        postgresCpuMsPerRequest: postmaster === null ? null : Math.round(((postgresCpuMs(postmaster) - pgBefore) / requests) * 1000) / 1000,
        machineBusy: Math.round(((machine.busy - machineBefore.busy) / Math.max(1, machine.total - machineBefore.total)) * 100) / 100,
      };
      return { runs, warm, cpu, work };
    };

    o.log(`${name}: signed config pulls (304)`);
    const pulls = await scenario('pull');
    o.log(`${name}: telemetry ingest`);
    const pushes = await scenario('telemetry');
    for (const c of children) await stop(c);
    children.length = 0;
    const stored = await countReports(url, join(dir, 'bench.db'), server.id);
    const pull = combine(pulls.runs);
    const push = combine(pushes.runs);
    // The warm-up's reports were acknowledged too: every one must be stored.
    const acknowledged = [...pushes.runs, ...pushes.warm].reduce((a, r) => a + r.requests - r.errors, 0);
    return {
      name,
      replicas,
      windowsUs: { pull: windows.pull!, telemetry: windows.telemetry! },
      ...(o.cpuProfDir === null ? {} : { profiles: pids.map((_, i) => profileName(name, i)) }),
      signed304: { rps: pull.rps, errors: pull.errors, p50Ms: pull.p50Ms, p99Ms: pull.p99Ms, cpuMsPerRequest: pulls.cpu, work: pulls.work },
      // wrk stops with requests in flight: stored may exceed acknowledged by a few; lost counts the opposite.
      telemetry: {
        rps: push.rps,
        errors: push.errors,
        acknowledged,
        stored,
        lost: Math.max(0, acknowledged - stored),
        cpuMsPerRequest: pushes.cpu,
        work: pushes.work,
      },
    };
  } finally {
    for (const c of children) await stop(c);
    for (const q of made) q.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function countReports(url: string | null, file: string, serverId: number): Promise<number> {
  if (url === null) {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM cp_reports WHERE server_id = ?').get(serverId) as { n: number }).n;
    } finally {
      db.close();
    }
  }
  return withAdmin(url, async (c) => Number((await c.query('SELECT COUNT(*) AS n FROM cp_reports WHERE server_id = $1', [serverId])).rows[0].n));
}

/** The profile file of serve process `i` of a configuration: one name per process of a run. */
function profileName(configuration: string, i: number): string {
  return `${configuration.replace(/[^a-z0-9]+/gi, '-')}-${i}.cpuprofile`;
}

/** Now on the monotonic clock that V8's CPU profiles use, in microseconds. */
function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export function replicaTable(r: ReplicaBenchResult): string {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const cpu = (list: number[]) => list.map((v) => v.toFixed(3)).join(' / ');
  // What one replica's core would answer, as a share of what the hello-world answers on it.
  const share = (list: number[]) => list.map((v) => `${Math.round((r.helloWorld.cpuMsPerRequest / Math.max(v, 1e-6)) * 100)}%`).join(' / ');
  const pgCpu = (w: RunWork) => (w.postgresCpuMsPerRequest === null ? '—' : w.postgresCpuMsPerRequest.toFixed(3));
  const busy = (w: RunWork) => `${Math.round(w.machineBusy * 100)}%`;
  const quota = (w: RunWork) => (w.quotaUsed === null ? '—' : w.quotaUsed.map((q) => `${Math.round(q * 100)}%`).join(' / '));
  const where = r.settings.replicaCpu !== null ? `under the same quota, ${r.settings.replicaCpu} of a core` : 'same core';
  const one = r.configurations.find((c) => c.name.startsWith('postgres') && c.replicas === 1);
  const scaling = r.configurations
    .filter((c) => one && c.name.startsWith('postgres') && c.replicas > 1)
    .map(
      (c) =>
        `${c.replicas} replicas ÷ 1 replica: signed 304s ${(c.signed304.rps / Math.max(1, one!.signed304.rps)).toFixed(2)}×, telemetry ${(c.telemetry.rps / Math.max(1, one!.telemetry.rps)).toFixed(2)}×`,
    );
  const sqlite = r.configurations.find((c) => c.name.startsWith('sqlite'));
  const vsSqlite =
    one && sqlite
      ? [
          `1 PostgreSQL replica ÷ the SQLite process: signed 304s ${(one.signed304.rps / Math.max(1, sqlite.signed304.rps)).toFixed(2)}, telemetry ${(one.telemetry.rps / Math.max(1, sqlite.telemetry.rps)).toFixed(2)}`,
        ]
      : [];
  return [
    r.settings.quotaUnavailable ? `no CPU quotas: ${r.settings.quotaUnavailable}` : '',
    `each process measured for ${r.settings.durationS} s per scenario after ${r.settings.warmupS} s of the same load unmeasured`,
    `bare uWS hello-world (baseline, ${where}, same wrk script): ${fmt(r.helloWorld.rps)} req/s, ${r.helloWorld.cpuMsPerRequest.toFixed(3)} ms CPU per request`,
    ...scaling,
    ...vsSqlite,
    '',
    '| configuration | signed 304 pulls/s | pull errors | CPU ms per pull, per replica | pull vs hello-world by CPU, per replica | PostgreSQL CPU ms per pull | machine busy (pulls) | quota used (pulls) | telemetry reports/s | stored / acknowledged (lost) | CPU ms per report, per replica | PostgreSQL CPU ms per report | machine busy (reports) | quota used (reports) |',
    '|---|---:|---:|---|---|---:|---:|---|---:|---|---|---:|---:|---|',
    ...r.configurations.map(
      (c) =>
        `| ${c.name} | ${fmt(c.signed304.rps)} | ${c.signed304.errors} | ${cpu(c.signed304.cpuMsPerRequest)} | ${share(c.signed304.cpuMsPerRequest)} | ${pgCpu(c.signed304.work)} | ${busy(c.signed304.work)} | ${quota(c.signed304.work)} | ${fmt(c.telemetry.rps)} | ${fmt(c.telemetry.stored)} / ${fmt(c.telemetry.acknowledged)} (${c.telemetry.lost}) | ${cpu(c.telemetry.cpuMsPerRequest)} | ${pgCpu(c.telemetry.work)} | ${busy(c.telemetry.work)} | ${quota(c.telemetry.work)} |`,
    ),
  ].join('\n');
}
