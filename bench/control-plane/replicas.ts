import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ADMIN, BENCH_LIMITS, HERE, ROOT, benchReport, call, pinned, startChild, stop, writePool } from './run.js';
import { runWrk, type WrkResult } from './wrk.js';

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
  log: (line: string) => void;
}

export interface ConfigurationResult {
  name: string;
  replicas: number;
  signed304: { rps: number; errors: number; p50Ms: number; p99Ms: number; cpuMsPerRequest: number[] };
  telemetry: { rps: number; errors: number; acknowledged: number; stored: number; lost: number; cpuMsPerRequest: number[] };
}

export interface ReplicaBenchResult {
  settings: { durationS: number; connections: number; serverCpu: string | null; loadCpu: string | null };
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

async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function databaseUrl(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
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

export async function runReplicaBench(o: ReplicaBenchOptions): Promise<ReplicaBenchResult> {
  const helloWorld = await helloBaseline(o);
  const configurations = await acrossConfigurations(o.database, o.replicas, (name, n, url) => runConfiguration(o, name, n, url));
  return {
    settings: { durationS: o.durationS, connections: o.connections, serverCpu: o.serverCpu ?? null, loadCpu: o.loadCpu ?? null },
    helloWorld,
    configurations,
  };
}

/** The baseline of the run: the bare hello-world's rate and CPU per request, read like a replica's. */
async function helloBaseline(o: ReplicaBenchOptions): Promise<{ rps: number; cpuMsPerRequest: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-hello-'));
  const [cmd, args] = pinned(o.serverCpu, process.execPath, [join(ROOT, 'dist', 'bench', 'control-plane', 'hello.js'), '0']);
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
    const before = cpuMs(hello.child.pid!);
    const run = await runWrk({
      url: `http://127.0.0.1:${hello.port}`,
      threads: 1,
      connections: o.connections,
      durationS: o.durationS,
      cpu: o.loadCpu,
      script: join(HERE, 'pull.lua'),
      args: [file, '1', 'bsk_hello', '1', '0'],
    });
    return { rps: Math.round(run.rps), cpuMsPerRequest: Math.round(((cpuMs(hello.child.pid!) - before) / Math.max(1, run.requests)) * 1000) / 1000 };
  } finally {
    await stop(hello.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runConfiguration(o: ReplicaBenchOptions, name: string, replicas: number, url: string | null): Promise<ConfigurationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-replicas-'));
  const children: ChildProcess[] = [];
  try {
    const limits = join(dir, 'limits.json');
    writeFileSync(limits, JSON.stringify(BENCH_LIMITS));
    const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error' };
    const database = url ?? `sqlite:${join(dir, 'bench.db')}`;
    const ports: number[] = [];
    for (let i = 0; i < replicas; i++) {
      // Replicas start one after another: the first migrates, the others find the schema there.
      const [cmd, args] = pinned(o.serverCpu, process.execPath, [
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

    // Each replica's wrk signs its own range of nonces and report ids, so no signature or report repeats across replicas.
    const scenario = async (kind: 'pull' | 'telemetry'): Promise<{ runs: WrkResult[]; cpu: number[] }> => {
      const pools = await Promise.all(
        bases.map(async (_, r) => {
          const file = join(dir, `${kind}-${r}.pool`);
          const offset = r * (kind === 'pull' ? pullCount : pushCount);
          if (kind === 'pull')
            await writePool(
              file,
              key,
              pullCount,
              'GET',
              (i) => `/v1/config?server=${server.id}&n=${offset + i}`,
              () => undefined,
            );
          else
            await writePool(
              file,
              key,
              pushCount,
              'POST',
              () => '/v1/telemetry',
              (i) => benchReport(server.id, reportTs, offset + i),
            );
          return { file, offset };
        }),
      );
      const before = pids.map(cpuMs);
      const runs = await Promise.all(
        bases.map((base, r) =>
          runWrk({
            url: base,
            threads: 1,
            connections,
            durationS: o.durationS,
            cpu: o.loadCpu,
            script: join(HERE, kind === 'pull' ? 'pull.lua' : 'telemetry.lua'),
            args:
              kind === 'pull'
                ? [pools[r]!.file, '1', key, String(server.id), String(pools[r]!.offset)]
                : [pools[r]!.file, '1', key, String(server.id), reportTs, String(pools[r]!.offset)],
          }),
        ),
      );
      const cpu = pids.map((pid, r) => Math.round(((cpuMs(pid) - before[r]!) / Math.max(1, runs[r]!.requests)) * 1000) / 1000);
      return { runs, cpu };
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
    const acknowledged = pushes.runs.reduce((a, r) => a + r.requests - r.errors, 0);
    return {
      name,
      replicas,
      signed304: { rps: pull.rps, errors: pull.errors, p50Ms: pull.p50Ms, p99Ms: pull.p99Ms, cpuMsPerRequest: pulls.cpu },
      // wrk stops with requests in flight: stored may exceed acknowledged by a few; lost counts the opposite.
      telemetry: { rps: push.rps, errors: push.errors, acknowledged, stored, lost: Math.max(0, acknowledged - stored), cpuMsPerRequest: pushes.cpu },
    };
  } finally {
    for (const c of children) await stop(c);
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

export function replicaTable(r: ReplicaBenchResult): string {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const cpu = (list: number[]) => list.map((v) => v.toFixed(3)).join(' / ');
  // What one replica's core would answer, as a share of what the hello-world answers on it.
  const share = (list: number[]) => list.map((v) => `${Math.round((r.helloWorld.cpuMsPerRequest / Math.max(v, 1e-6)) * 100)}%`).join(' / ');
  return [
    `bare uWS hello-world (baseline, same core and wrk script): ${fmt(r.helloWorld.rps)} req/s, ${r.helloWorld.cpuMsPerRequest.toFixed(3)} ms CPU per request`,
    '',
    '| configuration | signed 304 pulls/s | pull errors | CPU ms per pull, per replica | pull vs hello-world by CPU, per replica | telemetry reports/s | stored / acknowledged (lost) | CPU ms per report, per replica |',
    '|---|---:|---:|---|---|---:|---|---|',
    ...r.configurations.map(
      (c) =>
        `| ${c.name} | ${fmt(c.signed304.rps)} | ${c.signed304.errors} | ${cpu(c.signed304.cpuMsPerRequest)} | ${share(c.signed304.cpuMsPerRequest)} | ${fmt(c.telemetry.rps)} | ${fmt(c.telemetry.stored)} / ${fmt(c.telemetry.acknowledged)} (${c.telemetry.lost}) | ${cpu(c.telemetry.cpuMsPerRequest)} |`,
    ),
  ].join('\n');
}
