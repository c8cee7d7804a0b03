import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ADMIN, ROOT, call, startChild, stop } from '../control-plane/run.js';
import {
  acrossConfigurations,
  confined,
  countsDelta,
  cpuMs,
  machineTicks,
  postgresCpuMs,
  postmasterOf,
  probeArgs,
  probeCounts,
  quotaShares,
  quotasFor,
} from '../control-plane/replicas.js';
import type { CpuQuota, CpuQuotas } from '../cgroup.js';

/**
 * The webhook outbox on PostgreSQL with 1 and N `serve` replicas beside one process on SQLite,
 * in one run: events posted over HTTP spread over the replicas (as a load balancer would), each
 * delivered to a receiver in its own process, timed from the first post to the last delivery.
 * Every replica's CPU time comes from /proc, so the cost per delivery includes accepting the
 * event, claiming under a lease, sending and recording the result.
 */
export interface WebhookReplicaOptions {
  /** A PostgreSQL server URL whose role may create databases; each configuration gets a fresh one, dropped after. */
  database: string;
  replicas: number[];
  /** Deliveries per configuration (events × endpoints). */
  deliveries: number;
  endpoints: number;
  /**
   * Deliveries made, unmeasured, before the measured ones (rounded up to whole events): a fresh
   * process compiles its hot paths in its first seconds, and N replicas would each pay that over
   * a 1/N share of the deliveries. Every one of them must arrive too, and none twice.
   */
  warmupDeliveries: number;
  /** Each serve process in a CPU cgroup of its own with this share of a core; null for none. PostgreSQL, the posters and the receiver stay outside. */
  replicaCpu: number | null;
  log: (line: string) => void;
}

export interface WebhookConfigurationResult {
  name: string;
  replicas: number;
  deliveries: number;
  seconds: number;
  deliveriesPerSec: number;
  /** Deliveries the receiver got more than once (by delivery id) by the time every one had arrived. */
  twice: number;
  /** CPU ms each replica used per delivery of the whole run (its share of the work, whatever it was). */
  cpuMsPerDelivery: number[];
  /** All replicas' CPU ms over all deliveries: the cost of one delivery to the cluster. */
  totalCpuMsPerDelivery: number;
  /** PostgreSQL's own CPU ms per delivery (server and backends), or null on SQLite or when the server is not on this machine. */
  postgresCpuMsPerDelivery: number | null;
  /** Share of all cores' time spent busy during the run, 0–1 (the bench's posting clients and the receiver included). */
  machineBusy: number;
  /** Per replica, its CPU time as a share of its quota over the run (null without quotas): near 1, the quota bound it. */
  quotaUsed: number[] | null;
  /**
   * Per replica, the statements it sent to PostgreSQL and the notifications it received, per
   * delivery of the whole run (null on SQLite), and its statements by name or first words (the top few).
   */
  statementsPerDelivery: number[] | null;
  notificationsPerDelivery: number[] | null;
  statements: Record<string, number>[] | null;
}

/** One widget key posts far past its default rate here: the benchmark measures throughput. */
const LIMITS = { widgetKey: { limit: 1e9, windowSeconds: 60 } };
/** Clients posting events at once, over all replicas. */
const POSTERS = 16;

/** Requests the receiver answered, and how many distinct delivery ids they carried. */
type Received = { count: number; distinct: number };

async function receiver(): Promise<{ child: ChildProcess; url: string; count(): Promise<Received> }> {
  const child = fork(new URL('./receiver.js', import.meta.url), [], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  const count = () =>
    new Promise<Received>((resolve) => {
      child.once('message', (m: Received) => resolve(m));
      child.send('count');
    });
  return { child, url: `http://127.0.0.1:${String(first.value).trim()}/hook`, count };
}

export function runWebhookReplicaBench(o: WebhookReplicaOptions): Promise<WebhookConfigurationResult[]> {
  const quotas = quotasFor(o.replicaCpu, o.log);
  return acrossConfigurations(o.database, o.replicas, (name, n, url) => runConfiguration(o, quotas, name, n, url));
}

async function runConfiguration(
  o: WebhookReplicaOptions,
  quotas: CpuQuotas | null,
  name: string,
  replicas: number,
  url: string | null,
): Promise<WebhookConfigurationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-webhooks-'));
  const children: ChildProcess[] = [];
  const made: CpuQuota[] = [];
  const rx = await receiver();
  try {
    const limits = join(dir, 'limits.json');
    writeFileSync(limits, JSON.stringify(LIMITS));
    const probeDir = join(dir, 'probe');
    mkdirSync(probeDir);
    const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error', BRAINSTEM_BENCH_PROBE_DIR: probeDir };
    const database = url ?? `sqlite:${join(dir, 'bench.db')}`;
    const ports: number[] = [];
    for (let i = 0; i < replicas; i++) {
      const args = [
        ...(url === null ? [] : probeArgs()),
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
        '--allow-private-webhooks',
      ];
      const [cmd, argv] = confined(quotas, made, `serve-${replicas}-${i}`, undefined, process.execPath, args);
      const s = await startChild(cmd, argv, env, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
      children.push(s.child);
      ports.push(s.port);
    }
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);
    o.log(`${name}: ${replicas} serve process${replicas === 1 ? '' : 'es'} on ${url ? 'PostgreSQL' : 'SQLite'}`);
    const tenant = await call(bases[0]!, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(bases[0]!, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password' });
    const { token } = await call(bases[0]!, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
    const widget = await call(bases[0]!, 'POST', '/v1/widgets', token, { name: 'bench' });
    for (let i = 0; i < o.endpoints; i++)
      await call(bases[0]!, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: `${rx.url}?ep=${i}`, events: ['escalation.triggered'] });

    const events = Math.ceil(o.deliveries / o.endpoints);
    const total = events * o.endpoints;
    const warmEvents = Math.ceil(o.warmupDeliveries / o.endpoints);
    // Posts events first..last-1 spread round-robin over the replicas, then waits until the
    // receiver has every delivery made so far (by distinct delivery id).
    const deliver = async (first: number, last: number): Promise<Received> => {
      let next = first;
      await Promise.all(
        Array.from({ length: POSTERS }, async () => {
          while (next < last) {
            const i = next++;
            await call(bases[i % replicas]!, 'POST', `/v1/widgets/${widget.id}/events`, widget.key, {
              event: 'escalation.triggered',
              data: { conversation_id: `ses_${i}` },
            });
          }
        }),
      );
      let received = await rx.count();
      while (received.distinct < last * o.endpoints) {
        await new Promise((r) => setTimeout(r, 5));
        received = await rx.count();
      }
      return received;
    };
    if (warmEvents > 0) {
      o.log(`${name}: ${warmEvents * o.endpoints} deliveries to warm up`);
      await deliver(0, warmEvents);
    }
    const pids = children.map((c) => c.pid!);
    const postmaster = url === null ? null : await postmasterOf(url);
    const countsBefore = url === null ? null : await probeCounts(probeDir, pids);
    const cpuBefore = pids.map(cpuMs);
    const pgBefore = postmaster === null ? 0 : postgresCpuMs(postmaster);
    const machineBefore = machineTicks();
    const started = performance.now();
    const received = await deliver(warmEvents, warmEvents + events);
    const seconds = (performance.now() - started) / 1000;
    const cpu = pids.map((pid, i) => cpuMs(pid) - cpuBefore[i]!);
    const pgCpu = postmaster === null ? null : postgresCpuMs(postmaster) - pgBefore;
    const machine = machineTicks();
    const counts = countsBefore === null ? null : countsDelta(countsBefore, await probeCounts(probeDir, pids));
    const round = (x: number) => Math.round(x * 1000) / 1000;
    return {
      name,
      replicas,
      deliveries: total,
      seconds: round(seconds),
      deliveriesPerSec: Math.round(total / seconds),
      twice: received.count - received.distinct,
      cpuMsPerDelivery: cpu.map((c) => round(c / total)),
      totalCpuMsPerDelivery: round(cpu.reduce((a, b) => a + b, 0) / total),
      postgresCpuMsPerDelivery: pgCpu === null ? null : round(pgCpu / total),
      machineBusy: Math.round(((machine.busy - machineBefore.busy) / Math.max(1, machine.total - machineBefore.total)) * 100) / 100,
      quotaUsed: quotaShares(quotas, cpu, seconds * 1000),
      statementsPerDelivery: counts?.map((c) => round(c.statements / total)) ?? null,
      notificationsPerDelivery: counts?.map((c) => round(c.notifications / total)) ?? null,
      statements: counts?.map((c) => c.byStatement) ?? null,
    };
  } finally {
    for (const c of children) await stop(c);
    for (const q of made) q.remove();
    rx.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function replicaTable(results: WebhookConfigurationResult[]): string {
  const rows = [
    [
      'configuration',
      'deliveries',
      'received twice',
      'seconds',
      'deliveries/s',
      'CPU ms per delivery, per replica',
      'CPU ms per delivery, all replicas',
      'PostgreSQL CPU ms per delivery',
      'machine busy',
      'quota used, per replica',
      'PostgreSQL statements per delivery, per replica',
      'notifications received per delivery, per replica',
    ],
  ];
  for (const r of results)
    rows.push([
      r.name,
      String(r.deliveries),
      String(r.twice),
      r.seconds.toFixed(2),
      String(r.deliveriesPerSec),
      r.cpuMsPerDelivery.join(' / '),
      String(r.totalCpuMsPerDelivery),
      r.postgresCpuMsPerDelivery === null ? '—' : String(r.postgresCpuMsPerDelivery),
      `${Math.round(r.machineBusy * 100)}%`,
      r.quotaUsed === null ? '—' : r.quotaUsed.map((q) => `${Math.round(q * 100)}%`).join(' / '),
      r.statementsPerDelivery === null ? '—' : r.statementsPerDelivery.join(' / '),
      r.notificationsPerDelivery === null ? '—' : r.notificationsPerDelivery.join(' / '),
    ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const one = results.find((r) => r.name.startsWith('postgres') && r.replicas === 1);
  const sqlite = results.find((r) => r.name.startsWith('sqlite'));
  const factors = [
    ...results
      .filter((r) => one && r.name.startsWith('postgres') && r.replicas > 1)
      .map((r) => `${r.replicas} replicas ÷ 1 replica: ${(r.deliveriesPerSec / Math.max(1, one!.deliveriesPerSec)).toFixed(2)}× deliveries/s`),
    ...(one && sqlite ? [`1 PostgreSQL replica ÷ the SQLite process: ${(one.deliveriesPerSec / Math.max(1, sqlite.deliveriesPerSec)).toFixed(2)}`] : []),
  ];
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line), ...factors].join('\n');
}
