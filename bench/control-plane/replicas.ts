import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ADMIN, BENCH_LIMITS, HERE, ROOT, TICKS_PER_S, benchReport, call, cpuMs, pinned, startChild, stop, writePool } from './run.js';
import { runWrk, type WrkResult } from './wrk.js';
import { cpuQuotas, type CpuQuota, type CpuQuotas } from '../cgroup.js';
import type { ProbeCounts } from './pg-probe.js';

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
  /**
   * Control rows, for each replica count N above 1: one replica given the connections each of
   * the N replicas holds (o.connections / N), alone and beside N − 1 busy loops each under the
   * same quota (the CPU the other replicas would take from the machine). Set beside the N
   * replicas' row they tell apart what a replica's CPU per request owes to its share of the
   * clients, to the busier machine and to the other replicas themselves.
   */
  controls: boolean;
  /**
   * Each replica gets `connections` of its own (the load grows with the replicas, as a load
   * balancer's clients do when sidecars are added) instead of a 1/N share of them: what N
   * replicas do when each is as busy as the one, so that the replicas' effect on one another
   * is not mixed with the smaller batches of a smaller share of the clients. Needs the machine
   * to have room for N times the load generators.
   */
  connectionsEach: boolean;
  /**
   * Times the whole sequence (hello-world, SQLite, each replica count) is run, fresh processes
   * each time; the factors are reported per round and as the median of the rounds' factors. A
   * configuration measured a minute after another may find the host faster or slower (the same
   * SQLite process's CPU per pull has moved by a third between runs a minute apart), and one
   * round's factor carries that drift whole.
   */
  rounds: number;
  log: (line: string) => void;
}

/** The load of one configuration: connections per replica, and busy loops beside it (each in a quota of its own). */
interface Shape {
  connections: number;
  busy: number;
}

export interface ConfigurationResult {
  name: string;
  /** The round it was measured in, from 1 (controls: the last round). */
  round: number;
  replicas: number;
  /** wrk connections each replica served. */
  connectionsPerReplica: number;
  /** Busy loops that ran beside the configuration, each under the same quota as a replica (controls only). */
  busyQuotas: number;
  /**
   * When each measured scenario ran, on the monotonic clock (µs) that V8's CPU profiles and
   * `perf record -k CLOCK_MONOTONIC` stamp their samples with, to cut a profile to it.
   */
  windowsUs: { pull: [number, number]; telemetry: [number, number] };
  /** With a profile directory: each serve process's profile file in it. */
  profiles?: string[];
  /** `requests`: what each replica answered in the measured window (its share of the load). */
  signed304: { rps: number; errors: number; p50Ms: number; p99Ms: number; requests: number[]; cpuMsPerRequest: number[]; work: RunWork };
  telemetry: { rps: number; errors: number; acknowledged: number; stored: number; lost: number; requests: number[]; cpuMsPerRequest: number[]; work: RunWork };
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
  /**
   * Per serve process, statements it sent to PostgreSQL per request it answered (replay
   * flushes, ingest batches, rate-limit syncs, everything), and notifications (LISTEN/NOTIFY)
   * it received per request; null on SQLite. Counted in the process by the benchmark's probe.
   */
  statementsPerRequest: number[] | null;
  notificationsPerRequest: number[] | null;
  /** Per serve process, its statements in the scenario by name or first words, most first (the top few). */
  statements: Record<string, number>[] | null;
}

export interface ReplicaBenchResult {
  settings: {
    durationS: number;
    warmupS: number;
    connections: number;
    /** Whether each replica had `connections` of its own rather than a share. */
    connectionsEach: boolean;
    rounds: number;
    serverCpu: string | null;
    loadCpu: string | null;
    /** The quota each process ran under (cores), or null with the reason there was none. */
    replicaCpu: number | null;
    quotaUnavailable: string | null;
  };
  /** A bare uWebSockets.js hello-world on the servers' core, driven by the same pull script and connections (the first round's). */
  helloWorld: { rps: number; cpuMsPerRequest: number };
  /** The hello-world of each round, in order. */
  helloWorldByRound: { rps: number; cpuMsPerRequest: number }[];
  /** Every round's configurations, in the order measured. */
  configurations: ConfigurationResult[];
}

export { cpuMs };

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
  for (const n of replicas) out.push(await onFreshDatabase(base, String(n), (url) => run(`postgres, ${n} replica${n === 1 ? '' : 's'}`, n, url)));
  return out;
}

/** Runs `fn` on a database of its own on the server at `base`, created for it and dropped after. */
async function onFreshDatabase<T>(base: string, tag: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `brainstem_bench_${process.pid}_${tag}`;
  await withAdmin(base, (c) => c.query(`CREATE DATABASE ${name}`));
  try {
    return await fn(databaseUrl(base, name));
  } finally {
    await withAdmin(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
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

/**
 * The warm-up's default: 2 s of CPU under the quota (2 ÷ the share of a core, 8 s at 0.25; 2 s
 * without quotas). V8 needs about that much CPU on a replica's pull path before it runs the
 * optimised code a long-running replica runs: a quarter-core replica measured after 2 s of wall
 * time spent its first measured seconds at two to three times its steady CPU per pull.
 */
export function defaultWarmupS(replicaCpu: number | null): number {
  return Math.ceil(2 / Math.min(1, replicaCpu ?? 1));
}

export async function runReplicaBench(o: ReplicaBenchOptions): Promise<ReplicaBenchResult> {
  const quotas = quotasFor(o.replicaCpu, o.log);
  if (o.cpuProfDir !== null) mkdirSync(o.cpuProfDir, { recursive: true });
  const helloWorldByRound: ReplicaBenchResult['helloWorld'][] = [];
  const configurations: ConfigurationResult[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    if (o.rounds > 1) o.log(`round ${round} of ${o.rounds}`);
    helloWorldByRound.push(await helloBaseline(o, quotas));
    for (const c of await acrossConfigurations(o.database, o.replicas, (name, n, url) => runConfiguration(o, quotas, name, n, url, null)))
      configurations.push({ ...c, round });
  }
  const helloWorld = helloWorldByRound[0]!;
  if (o.controls)
    for (const n of o.connectionsEach ? [] : o.replicas.filter((r) => r > 1)) {
      const connections = Math.max(1, Math.floor(o.connections / n));
      const busyLoops = quotas?.available ? [0, n - 1] : [0];
      if (!quotas?.available) o.log('controls: no busy loops without CPU quotas (they would take a core each)');
      for (const busy of busyLoops) {
        const name = `postgres, 1 replica, ${connections} connections${busy > 0 ? `, ${busy} busy quotas` : ''}`;
        configurations.push({
          ...(await onFreshDatabase(o.database, `c${n}_${busy}`, (url) => runConfiguration(o, quotas, name, 1, url, { connections, busy }))),
          round: o.rounds,
        });
      }
    }
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
      connectionsEach: o.connectionsEach,
      rounds: o.rounds,
      serverCpu: quotas?.available ? null : (o.serverCpu ?? null),
      loadCpu: o.loadCpu ?? null,
      replicaCpu: quotas?.available ? quotas.fraction : null,
      quotaUnavailable: quotas && !quotas.available ? quotas.reason : null,
    },
    helloWorld,
    helloWorldByRound,
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
  shape: Shape | null,
): Promise<Omit<ConfigurationResult, 'round'>> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-replicas-'));
  const children: ChildProcess[] = [];
  const made: CpuQuota[] = [];
  try {
    const limits = join(dir, 'limits.json');
    writeFileSync(limits, JSON.stringify(BENCH_LIMITS));
    const probeDir = join(dir, 'probe');
    mkdirSync(probeDir);
    const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error', BRAINSTEM_BENCH_PROBE_DIR: probeDir };
    const database = url ?? `sqlite:${join(dir, 'bench.db')}`;
    for (let i = 0; i < (shape?.busy ?? 0); i++) {
      const [cmd, args] = confined(quotas, made, `busy-${i}`, o.serverCpu, process.execPath, ['-e', 'for (;;);']);
      children.push(spawn(cmd, args, { stdio: 'ignore' }));
    }
    const ports: number[] = [];
    const pids: number[] = [];
    for (let i = 0; i < replicas; i++) {
      // Replicas start one after another: the first migrates, the others find the schema there.
      const profile = o.cpuProfDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=${profileName(name, i)}`];
      const probe = url === null ? [] : probeArgs();
      const [cmd, args] = confined(quotas, made, `serve-${replicas}-${i}`, o.serverCpu, process.execPath, [
        ...profile,
        ...probe,
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
      pids.push(s.child.pid!);
    }
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);
    o.log(`${name}: ${replicas} serve process${replicas === 1 ? '' : 'es'} on ${url ? 'PostgreSQL' : 'SQLite'}`);
    const tenant = await call(bases[0]!, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(bases[0]!, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password' });
    const { token } = await call(bases[0]!, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
    const server = await call(bases[0]!, 'POST', '/v1/servers', token, { name: 'bench' });
    const { key } = await call(bases[0]!, 'POST', `/v1/servers/${server.id}/keys`, token);

    const connections = shape?.connections ?? (o.connectionsEach ? o.connections : Math.max(1, Math.floor(o.connections / replicas)));
    // Signed requests each replica's wrk may send: its share of the pool rate, or the whole rate when each has the full load.
    const share = o.connectionsEach ? 1 : replicas;
    const pullCount = Math.ceil((o.poolRate / share) * o.durationS * 1.2);
    const pushCount = Math.ceil((Math.max(20_000, o.poolRate / 3) / share) * o.durationS * 1.2);
    const reportTs = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

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
      const countsBefore = url === null ? null : await probeCounts(probeDir, pids);
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
      const counts = countsBefore === null ? null : countsDelta(countsBefore, await probeCounts(probeDir, pids));
      const perRequest = (n: number, r: number) => Math.round((n / Math.max(1, runs[r]!.requests)) * 10_000) / 10_000;
      const work: RunWork = {
        statementsPerRequest: counts?.map((c, r) => perRequest(c.statements, r)) ?? null,
        notificationsPerRequest: counts?.map((c, r) => perRequest(c.notifications, r)) ?? null,
        statements: counts?.map((c) => c.byStatement) ?? null,
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
      connectionsPerReplica: connections,
      busyQuotas: shape?.busy ?? 0,
      windowsUs: { pull: windows.pull!, telemetry: windows.telemetry! },
      ...(o.cpuProfDir === null ? {} : { profiles: pids.map((_, i) => profileName(name, i)) }),
      signed304: {
        rps: pull.rps,
        errors: pull.errors,
        p50Ms: pull.p50Ms,
        p99Ms: pull.p99Ms,
        requests: pulls.runs.map((r) => r.requests),
        cpuMsPerRequest: pulls.cpu,
        work: pulls.work,
      },
      // wrk stops with requests in flight: stored may exceed acknowledged by a few; lost counts the opposite.
      telemetry: {
        rps: push.rps,
        errors: push.errors,
        acknowledged,
        stored,
        lost: Math.max(0, acknowledged - stored),
        requests: pushes.runs.map((r) => r.requests),
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

/** Node's arguments that load the statement probe into a serve process (it reads BRAINSTEM_BENCH_PROBE_DIR). */
export function probeArgs(): string[] {
  return ['--import', pathToFileURL(join(ROOT, 'dist', 'bench', 'control-plane', 'pg-probe.js')).href];
}

/** How long the benchmark waits for a serve process to write its counts (it may sit out its quota's period first). */
const PROBE_WAIT_MS = 5000;

/** Each serve process's counts now: asks with SIGUSR2 and waits for the file it writes. */
export async function probeCounts(dir: string, pids: number[]): Promise<ProbeCounts[]> {
  return Promise.all(
    pids.map(async (pid) => {
      const file = join(dir, `${pid}.json`);
      if (existsSync(file)) unlinkSync(file);
      process.kill(pid, 'SIGUSR2');
      for (const until = Date.now() + PROBE_WAIT_MS; Date.now() < until;) {
        // Written with one synchronous write: once it parses, it is whole.
        try {
          return JSON.parse(readFileSync(file, 'utf8')) as ProbeCounts;
        } catch {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
      throw new Error(`serve process ${pid} did not write its statement counts (was it started with the probe?)`);
    }),
  );
}

/** What each process counted between two snapshots; by statement, the top few. */
export function countsDelta(before: ProbeCounts[], after: ProbeCounts[]): ProbeCounts[] {
  return after.map((a, i) => {
    const b = before[i]!;
    const byStatement = Object.entries(a.byStatement)
      .map(([k, n]) => [k, n - (b.byStatement[k] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 6);
    return { statements: a.statements - b.statements, notifications: a.notifications - b.notifications, byStatement: Object.fromEntries(byStatement) };
  });
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
  const helloOf = (round: number) => r.helloWorldByRound[round - 1] ?? r.helloWorld;
  // What one replica's core would answer, as a share of what the hello-world of its round answers on it.
  const share = (list: number[], round: number) => list.map((v) => `${Math.round((helloOf(round).cpuMsPerRequest / Math.max(v, 1e-6)) * 100)}%`).join(' / ');
  const pgCpu = (w: RunWork) => (w.postgresCpuMsPerRequest === null ? '—' : w.postgresCpuMsPerRequest.toFixed(3));
  const busy = (w: RunWork) => `${Math.round(w.machineBusy * 100)}%`;
  const quota = (w: RunWork) => (w.quotaUsed === null ? '—' : w.quotaUsed.map((q) => `${Math.round(q * 100)}%`).join(' / '));
  const statements = (w: RunWork) =>
    w.statementsPerRequest === null
      ? '—'
      : `${w.statementsPerRequest.map((v) => v.toFixed(3)).join(' / ')} (${w.notificationsPerRequest!.reduce((a, b) => a + b, 0) > 0 ? `notifications ${w.notificationsPerRequest!.map((v) => v.toFixed(3)).join(' / ')}` : 'no notifications'})`;
  const where = r.settings.replicaCpu !== null ? `under the same quota, ${r.settings.replicaCpu} of a core` : 'same core';
  const split = r.settings.connectionsEach
    ? `each replica with ${r.settings.connections} connections of its own`
    : `${r.settings.connections} connections split among the replicas`;
  const ratio = (a: number, b: number) => a / Math.max(1, b);
  // The goal's factors, within each round (one replica, the SQLite process and the hello-world of the same round).
  const rounds = [...new Set(r.configurations.map((c) => c.round))].sort((a, b) => a - b);
  const factors = rounds.map((round) => {
    const inRound = r.configurations.filter((c) => c.round === round);
    const one = inRound.find(
      (c) => c.name.startsWith('postgres') && c.replicas === 1 && c.busyQuotas === 0 && c.connectionsPerReplica === r.settings.connections,
    );
    const sqlite = inRound.find((c) => c.name.startsWith('sqlite'));
    const many = inRound.filter((c) => one && c.name.startsWith('postgres') && c.replicas > 1);
    return {
      round,
      scaling: many.map((c) => ({ n: c.replicas, pulls: ratio(c.signed304.rps, one!.signed304.rps), reports: ratio(c.telemetry.rps, one!.telemetry.rps) })),
      vsSqlite: one && sqlite ? { pulls: ratio(one.signed304.rps, sqlite.signed304.rps), reports: ratio(one.telemetry.rps, sqlite.telemetry.rps) } : null,
      vsHello: one ? ratio(one.signed304.rps, helloOf(round).rps) : null,
    };
  });
  const describe = (f: (typeof factors)[number]) =>
    [
      ...f.scaling.map((x) => `${x.n} replicas ÷ 1 replica: signed 304s ${x.pulls.toFixed(2)}×, telemetry ${x.reports.toFixed(2)}×`),
      ...(f.vsSqlite
        ? [`1 PostgreSQL replica ÷ the SQLite process: signed 304s ${f.vsSqlite.pulls.toFixed(2)}, telemetry ${f.vsSqlite.reports.toFixed(2)}`]
        : []),
      ...(f.vsHello === null ? [] : [`a replica's signed 304s ÷ the hello-world's rate: ${Math.round(f.vsHello * 100)}%`]),
    ].join('; ');
  const med = (xs: number[]) => {
    const t = [...xs].sort((a, b) => a - b);
    return t.length % 2 === 1 ? t[(t.length - 1) / 2]! : (t[t.length / 2 - 1]! + t[t.length / 2]!) / 2;
  };
  const medians =
    factors.length > 1
      ? [
          `median of the ${factors.length} rounds' factors: ${describe({
            round: 0,
            scaling: factors[0]!.scaling.map((x, i) => ({
              n: x.n,
              pulls: med(factors.map((f) => f.scaling[i]?.pulls ?? 0)),
              reports: med(factors.map((f) => f.scaling[i]?.reports ?? 0)),
            })),
            vsSqlite: factors.every((f) => f.vsSqlite)
              ? { pulls: med(factors.map((f) => f.vsSqlite!.pulls)), reports: med(factors.map((f) => f.vsSqlite!.reports)) }
              : null,
            vsHello: factors.every((f) => f.vsHello !== null) ? med(factors.map((f) => f.vsHello!)) : null,
          })}`,
        ]
      : [];
  const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / Math.max(1, list.length);
  // Each of N replicas against one replica holding the same connections, alone and beside busy loops: the controls.
  const controls = r.configurations
    .filter((c) => c.replicas > 1 && c.round === r.settings.rounds)
    .flatMap((c) =>
      r.configurations
        .filter((k) => k.replicas === 1 && k.connectionsPerReplica === c.connectionsPerReplica && k.connectionsPerReplica !== r.settings.connections)
        .map(
          (k) =>
            `CPU per request of each of ${c.replicas} replicas ÷ ${k.name}: pulls ${(mean(c.signed304.cpuMsPerRequest) / Math.max(1e-6, mean(k.signed304.cpuMsPerRequest))).toFixed(2)}, reports ${(mean(c.telemetry.cpuMsPerRequest) / Math.max(1e-6, mean(k.telemetry.cpuMsPerRequest))).toFixed(2)}`,
        ),
    );
  return [
    r.settings.quotaUnavailable ? `no CPU quotas: ${r.settings.quotaUnavailable}` : '',
    `each process measured for ${r.settings.durationS} s per scenario after ${r.settings.warmupS} s of the same load unmeasured; ${split}`,
    ...r.helloWorldByRound.map(
      (h, i) =>
        `bare uWS hello-world (baseline${r.helloWorldByRound.length > 1 ? `, round ${i + 1}` : ''}, ${where}, same wrk script): ${fmt(h.rps)} req/s, ${h.cpuMsPerRequest.toFixed(3)} ms CPU per request`,
    ),
    ...factors.map((f) => `${factors.length > 1 ? `round ${f.round}: ` : ''}${describe(f)}`),
    ...medians,
    ...controls,
    '',
    '| round | configuration | connections per replica | signed 304 pulls/s | pull errors | CPU ms per pull, per replica | pull vs hello-world by CPU, per replica | PostgreSQL statements per pull, per replica | PostgreSQL CPU ms per pull | machine busy (pulls) | quota used (pulls) | telemetry reports/s | stored / acknowledged (lost) | CPU ms per report, per replica | PostgreSQL statements per report, per replica | PostgreSQL CPU ms per report | machine busy (reports) | quota used (reports) |',
    '|---:|---|---:|---:|---:|---|---|---|---:|---:|---|---:|---|---|---|---:|---:|---|',
    ...r.configurations.map(
      (c) =>
        `| ${c.round} | ${c.name} | ${c.connectionsPerReplica} | ${fmt(c.signed304.rps)} | ${c.signed304.errors} | ${cpu(c.signed304.cpuMsPerRequest)} | ${share(c.signed304.cpuMsPerRequest, c.round)} | ${statements(c.signed304.work)} | ${pgCpu(c.signed304.work)} | ${busy(c.signed304.work)} | ${quota(c.signed304.work)} | ${fmt(c.telemetry.rps)} | ${fmt(c.telemetry.stored)} / ${fmt(c.telemetry.acknowledged)} (${c.telemetry.lost}) | ${cpu(c.telemetry.cpuMsPerRequest)} | ${statements(c.telemetry.work)} | ${pgCpu(c.telemetry.work)} | ${busy(c.telemetry.work)} | ${quota(c.telemetry.work)} |`,
    ),
  ].join('\n');
}

/** What PostgreSQL spent on one statement over a measured window (pg_stat_statements). */
export interface StatementTime {
  /** The statement's normalised text, cut to its first words. */
  statement: string;
  calls: number;
  /** Execution time in the server (wall time of the backend, waits included). */
  execMs: number;
  rows: number;
  walBytes: number;
  /** Shared buffers read or written by it: its page traffic. */
  blocks: number;
}

type StatementSnapshot = Map<string, Omit<StatementTime, 'statement'> & { text: string }>;

/**
 * pg_stat_statements of the database at `url`, when the server preloads the extension (an
 * operator's diagnostic setting: `shared_preload_libraries = pg_stat_statements`); null when it
 * does not, and the benchmark then goes without this column.
 */
export async function statementSnapshot(url: string): Promise<StatementSnapshot | null> {
  try {
    return await withAdmin(url, async (c) => {
      await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      const { rows } = await c.query<{ id: string; query: string; calls: string; exec: number; rows: string; wal: string; blocks: string }>(
        `SELECT queryid::text AS id, query, calls, total_exec_time AS exec, rows, wal_bytes::text AS wal,
           (shared_blks_hit + shared_blks_read + shared_blks_dirtied + shared_blks_written)::text AS blocks
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      return new Map(
        rows.map((r) => [
          r.id,
          { text: r.query, calls: Number(r.calls), execMs: r.exec, rows: Number(r.rows), walBytes: Number(r.wal), blocks: Number(r.blocks) },
        ]),
      );
    });
  } catch {
    return null;
  }
}

/** The statements of the window between two snapshots, most time first (the top `top`). */
export function statementTimes(before: StatementSnapshot | null, after: StatementSnapshot | null, top = 8): StatementTime[] | null {
  if (before === null || after === null) return null;
  const out: StatementTime[] = [];
  for (const [id, a] of after) {
    const b = before.get(id);
    const calls = a.calls - (b?.calls ?? 0);
    if (calls <= 0) continue;
    out.push({
      statement: a.text.replace(/\s+/g, ' ').slice(0, 60),
      calls,
      execMs: Math.round((a.execMs - (b?.execMs ?? 0)) * 10) / 10,
      rows: a.rows - (b?.rows ?? 0),
      walBytes: a.walBytes - (b?.walBytes ?? 0),
      blocks: a.blocks - (b?.blocks ?? 0),
    });
  }
  return out.sort((x, y) => y.execMs - x.execMs).slice(0, top);
}

/**
 * How often a process woke and how many system calls it made, from /proc (cumulative): voluntary
 * context switches (each one a sleep in epoll or a lock, so a wake-up after) and the read- and
 * write-like system calls /proc/PID/io counts. Per request they tell how much work each wake-up
 * found, which the machine's load changes less than CPU time.
 */
export function wakeCounts(pid: number): { wakes: number; syscalls: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { wakes: field(status, 'voluntary_ctxt_switches'), syscalls: field(io, 'syscr') + field(io, 'syscw') };
}
