import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN, BENCH_LIMITS, ROOT, call, pinned, startChild, stop } from '../control-plane/run.js';
import { databaseUrl, withAdmin } from '../control-plane/replicas.js';
import { inBatches, percentile, PullConnection, raiseFdLimit, SimSidecar } from './run.js';

/**
 * The config push across replicas: N `serve` processes on one PostgreSQL database, simulated
 * sidecars of one game server holding their push streams spread over every replica (sidecar i
 * on replica i mod N, each with a server key of its own, as real sidecars have), and each
 * publish made through the first replica. Timed from the PUT to each stream's `version` event
 * (the push) and to the sidecar's signed pull answered with that version on its own replica
 * (applied); the streams on the publishing replica and on the others are reported apart.
 */
export interface PushReplicaOptions {
  database: string;
  replicas: number;
  sidecars: number;
  publishes: number;
  connectBatch: number;
  serverCpu: string | undefined;
  /** A stream that has not seen a publish after this long is counted missed (default PUBLISH_TIMEOUT_MS). */
  timeoutMs?: number;
  log: (line: string) => void;
}

export interface Latencies {
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

export interface PushReplicaResult {
  replicas: number;
  sidecars: number;
  publishes: number;
  load: { before: string; after: string };
  /** Streams on the replica the publish went through. */
  samePush: Latencies;
  sameApplied: Latencies;
  /** Streams on every other replica: the publish reached them through the database's LISTEN/NOTIFY. */
  otherPush: Latencies;
  otherApplied: Latencies;
  /** Streams that did not see a publish within the timeout. */
  missed: number;
  /** The push target: p99 publish to event on the other replicas (ms). */
  goalMs: number;
}

/** A publish not seen by a stream within this long is counted missed. */
const PUBLISH_TIMEOUT_MS = 30_000;
/** Keep-alive pull connections per replica the simulated sidecars share. */
const PULLS_PER_REPLICA = 32;

function summary(xs: number[]): Latencies {
  const s = [...xs].sort((a, b) => a - b);
  const r = (n: number) => Math.round(n * 10) / 10;
  return { p50: r(percentile(s, 50)), p99: r(percentile(s, 99)), max: r(s.at(-1) ?? NaN), samples: s.length };
}

export async function runPushReplicaBench(o: PushReplicaOptions): Promise<PushReplicaResult> {
  raiseFdLimit(Math.max(4096, o.sidecars * 2 + 1000), o.log);
  const name = `brainstem_bench_${process.pid}_push`;
  await withAdmin(o.database, (c) => c.query(`CREATE DATABASE ${name}`));
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-push-replicas-'));
  const children: ChildProcess[] = [];
  const sims: SimSidecar[] = [];
  const pools: PullConnection[] = [];
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  const before = load();
  try {
    const limits = join(dir, 'limits.json');
    // A key per simulated sidecar: the live-key limit of one server is lifted, nothing else.
    writeFileSync(limits, JSON.stringify({ ...BENCH_LIMITS, liveServerKeys: o.sidecars + 10 }));
    const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error' };
    const url = databaseUrl(o.database, name);
    const ports: number[] = [];
    for (let i = 0; i < o.replicas; i++) {
      // One after another: the first migrates, the others find the schema there.
      const [cmd, args] = pinned(o.serverCpu, process.execPath, [
        join(ROOT, 'bin', 'brainstem'),
        'serve',
        '--addr',
        '127.0.0.1:0',
        '--database',
        url,
        '--data',
        join(dir, 'data'),
        '--limits',
        limits,
      ]);
      const s = await startChild(cmd, args, env, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
      children.push(s.child);
      ports.push(s.port);
    }
    const base = `http://127.0.0.1:${ports[0]}`;
    o.log(`${o.replicas} replicas on PostgreSQL; ${o.sidecars} simulated sidecars, a server key each`);
    const tenant = await call(base, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(base, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password-1' });
    const { token } = await call(base, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password-1' });
    const srv = await call(base, 'POST', '/v1/servers', token, { name: 'bench' });
    const keys: string[] = [];
    for (let i = 0; i < o.sidecars; i++) keys.push((await call(base, 'POST', `/v1/servers/${srv.id}/keys`, token)).key);
    for (const port of ports) for (let c = 0; c < PULLS_PER_REPLICA; c++) pools.push(new PullConnection(port));
    await Promise.all(pools.map((c) => c.open()));
    for (let i = 0; i < o.sidecars; i++) {
      const r = i % o.replicas;
      sims.push(new SimSidecar(ports[r]!, keys[i]!, srv.id, i, pools[r * PULLS_PER_REPLICA + (Math.floor(i / o.replicas) % PULLS_PER_REPLICA)]!));
    }
    o.log(`opening ${o.sidecars} streams (${o.connectBatch} at a time)`);
    await inBatches(sims, o.connectBatch, (s) => s.openStream());
    let bundle = await call(base, 'GET', `/v1/servers/${srv.id}/config`, token);
    for (const s of sims) s.applied = bundle.version;
    const samePush: number[] = [];
    const sameApplied: number[] = [];
    const otherPush: number[] = [];
    const otherApplied: number[] = [];
    let missed = 0;
    for (let p = 0; p < o.publishes; p++) {
      const target = bundle.version + 1;
      let t0 = 0;
      let left = o.sidecars * 2;
      const all = new Promise<void>((resolve) => {
        sims.forEach((s, i) => {
          const same = i % o.replicas === 0;
          let pushed = false;
          s.onEvent = (v) => {
            if (v !== target || pushed) return;
            pushed = true;
            (same ? samePush : otherPush).push(performance.now() - t0);
            if (--left === 0) resolve();
          };
          s.onApplied = (v) => {
            if (v !== target) return;
            (same ? sameApplied : otherApplied).push(performance.now() - t0);
            if (--left === 0) resolve();
          };
        });
      });
      t0 = performance.now();
      bundle = await call(base, 'PUT', `/v1/servers/${srv.id}/config`, token, {
        ...bundle,
        speech: { ...bundle.speech, limits: { ...bundle.speech.limits, per_hour: 10 + p } },
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), o.timeoutMs ?? PUBLISH_TIMEOUT_MS)));
      if ((await Promise.race([all, timeout])) === 'timeout') missed += Math.ceil(left / 2);
      clearTimeout(timer);
      await new Promise((r) => setTimeout(r, 200));
    }
    const result: PushReplicaResult = {
      replicas: o.replicas,
      sidecars: o.sidecars,
      publishes: o.publishes,
      load: { before, after: load() },
      samePush: summary(samePush),
      sameApplied: summary(sameApplied),
      otherPush: summary(otherPush),
      otherApplied: summary(otherApplied),
      missed,
      goalMs: 1000,
    };
    o.log(`other replicas: push p50 ${result.otherPush.p50} ms, p99 ${result.otherPush.p99} ms; applied p99 ${result.otherApplied.p99} ms`);
    return result;
  } finally {
    for (const s of sims) s.close();
    for (const c of pools) c.close();
    for (const c of children) await stop(c);
    rmSync(dir, { recursive: true, force: true });
    await withAdmin(o.database, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

export function pushReplicaTable(r: PushReplicaResult): string {
  const row = (name: string, push: Latencies, applied: Latencies) =>
    `| ${name} | ${push.p50} ms | ${push.p99} ms | ${push.max} ms | ${applied.p50} ms | ${applied.p99} ms | ${push.samples} |`;
  return [
    `${r.replicas} replicas on PostgreSQL, ${r.sidecars} simulated sidecars spread over them, ${r.publishes} publishes through replica 1; load ${r.load.before} / ${r.load.after}`,
    '',
    '| streams held on | push p50 | push p99 | push max | applied p50 | applied p99 | samples |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('the publishing replica', r.samePush, r.sameApplied),
    row('the other replicas', r.otherPush, r.otherApplied),
    '',
    `missed: ${r.missed}; push target: p99 ≤ ${r.goalMs} ms on the other replicas (${r.otherPush.p99 <= r.goalMs && r.missed === 0 ? 'met' : 'missed'})`,
  ].join('\n');
}
