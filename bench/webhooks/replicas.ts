import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
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
  statementSnapshot,
  statementTimes,
  type StatementTime,
  wakeCounts,
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
   * Deliveries made, unmeasured, before the measured ones, per serve process (N replicas make N
   * times as many, rounded up to whole events): a fresh process compiles its hot paths while it
   * serves, and a warm-up shared among N replicas would leave each of them colder than the one
   * replica, so that its compiling would be paid over a 1/N share of the measured deliveries.
   * Every one of them must arrive too, and none twice.
   */
  warmupDeliveries: number;
  /** Each serve process in a CPU cgroup of its own with this share of a core; null for none. PostgreSQL, the posters and the receiver stay outside. */
  replicaCpu: number | null;
  /** Times the whole sequence (SQLite, each replica count) is run, fresh processes each time; the factors are given per round and as the medians of the rounds'. */
  rounds: number;
  log: (line: string) => void;
}

export interface WebhookConfigurationResult {
  name: string;
  /** The round it was measured in, from 1. */
  round: number;
  replicas: number;
  deliveries: number;
  seconds: number;
  deliveriesPerSec: number;
  /** Deliveries the receiver got more than once (by delivery id) by the time every one had arrived. */
  twice: number;
  /**
   * Attempts that failed in all the configuration's serve processes, warm-up included (from
   * each one's /metrics): a failed attempt whose request reached the receiver (a 2xx that came
   * back later than the 10 s delivery timeout, a connection lost after the request was read) is
   * sent again and received twice.
   */
  failedAttempts: number;
  /** CPU ms each replica used per delivery of the whole run (its share of the work, whatever it was). */
  cpuMsPerDelivery: number[];
  /** All replicas' CPU ms over all deliveries: the cost of one delivery to the cluster. */
  totalCpuMsPerDelivery: number;
  /** PostgreSQL's own CPU ms per delivery (server and backends), or null on SQLite or when the server is not on this machine. */
  postgresCpuMsPerDelivery: number | null;
  /**
   * CPU ms per delivery of the receiver and of this benchmark's own process (its posting clients
   * and the polls of the receiver's count): with PostgreSQL's, what the deliveries cost outside
   * the quotas, which the machine's other cores must have room for.
   */
  receiverCpuMsPerDelivery: number;
  postersCpuMsPerDelivery: number;
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
  /** Per replica, its wake-ups (voluntary context switches) and read/write-like system calls per delivery it made (its share). */
  wakesPerDelivery: number[];
  syscallsPerDelivery: number[];
  /** PostgreSQL's time by statement over the run, when the server loads pg_stat_statements; else null. */
  postgresStatements: StatementTime[] | null;
}

/** One widget key posts far past its default rate here: the benchmark measures throughput. */
const LIMITS = { widgetKey: { limit: 1e9, windowSeconds: 60 } };
/**
 * Clients posting events at once, per serve process (16 for one, 48 for three, spread round-robin
 * over them). Each waits for its 202, which waits for its intake batch to reach the disk, so a
 * fixed number of clients caps the events per second at clients ÷ that wait however many
 * replicas serve them: with 16 in all, three replicas used about half their quotas while one
 * used all of its (hooks11, RESULTS). A load that grows with the replicas measures what they
 * can deliver.
 */
const POSTERS_PER_PROCESS = 16;

/**
 * Posts events with a widget key over keep-alive node:http connections: `fetch` spent about
 * 0.7–1 ms of this process's CPU per event (0.09–0.13 ms per delivery of 8 endpoints), CPU the
 * machine needs for PostgreSQL and the replicas while three of them run.
 */
function poster(bases: string[], key: string): { post(i: number, path: string, body: string): Promise<void>; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: POSTERS_PER_PROCESS });
  const targets = bases.map((b) => new URL(b));
  return {
    post: (i, path, body) =>
      new Promise<void>((resolve, reject) => {
        const t = targets[i % targets.length]!;
        const req = http.request(
          {
            agent,
            host: t.hostname,
            port: t.port,
            method: 'POST',
            path,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              res.statusCode === 202 ? resolve() : reject(new Error(`POST ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8')}`)),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}

/** Characters of each serve process's stderr kept for a failed configuration's error. */
const LOG_TAIL = 4000;

/** `err` with what each serve process last wrote to stderr (a 500 or a dropped connection says why there). */
export function withLogs(err: unknown, logs: readonly string[]): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const told = logs.map((l, i) => (l.trim() === '' ? '' : `\n--- serve process ${i} stderr (last ${LOG_TAIL} characters) ---\n${l.trimEnd()}`)).join('');
  if (told !== '') e.message += told;
  return e;
}

/** Failed attempts (retrying and given up) a serve process has counted since it started, from its /metrics. */
async function failedAttemptsOf(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${text.slice(0, 200)}`);
  return failedAttemptsIn(text);
}

/** The failed attempts (retrying and given up) in a /metrics page. */
export function failedAttemptsIn(metrics: string): number {
  let n = 0;
  for (const m of metrics.matchAll(/^\w+_webhook_delivery_attempts_total\{outcome="(retrying|failed)"\} (\d+)$/gm)) n += Number(m[2]);
  return n;
}

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

export async function runWebhookReplicaBench(o: WebhookReplicaOptions): Promise<WebhookConfigurationResult[]> {
  const quotas = quotasFor(o.replicaCpu, o.log);
  const out: WebhookConfigurationResult[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    if (o.rounds > 1) o.log(`round ${round} of ${o.rounds}`);
    for (const c of await acrossConfigurations(o.database, o.replicas, (name, n, url) => runConfiguration(o, quotas, name, n, url))) out.push({ ...c, round });
  }
  return out;
}

async function runConfiguration(
  o: WebhookReplicaOptions,
  quotas: CpuQuotas | null,
  name: string,
  replicas: number,
  url: string | null,
): Promise<Omit<WebhookConfigurationResult, 'round'>> {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-webhooks-'));
  const children: ChildProcess[] = [];
  /** The last lines each serve process wrote to stderr (errors only: BRAINSTEM_LOG=error), shown if the configuration fails. */
  const logs: string[] = [];
  const made: CpuQuota[] = [];
  const rx = await receiver();
  let posts: ReturnType<typeof poster> | null = null;
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
      logs.push('');
      s.child.stderr!.on('data', (d: Buffer) => (logs[i] = (logs[i] + d.toString()).slice(-LOG_TAIL)));
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
    const warmEvents = Math.ceil((o.warmupDeliveries * replicas) / o.endpoints);
    const post = poster(bases, widget.key);
    posts = post;
    const eventsPath = `/v1/widgets/${widget.id}/events`;
    // Posts events first..last-1 spread round-robin over the replicas, then waits until the
    // receiver has every delivery made so far (by distinct delivery id).
    const deliver = async (first: number, last: number): Promise<Received> => {
      let next = first;
      await Promise.all(
        Array.from({ length: POSTERS_PER_PROCESS * replicas }, async () => {
          while (next < last) {
            const i = next++;
            await post.post(i, eventsPath, JSON.stringify({ event: 'escalation.triggered', data: { conversation_id: `ses_${i}` } }));
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
    const pgssBefore = url === null ? null : await statementSnapshot(url);
    const wakesBefore = pids.map(wakeCounts);
    const cpuBefore = pids.map(cpuMs);
    const rxBefore = cpuMs(rx.child.pid!);
    const ownBefore = process.cpuUsage();
    const pgBefore = postmaster === null ? 0 : postgresCpuMs(postmaster);
    const machineBefore = machineTicks();
    const started = performance.now();
    const received = await deliver(warmEvents, warmEvents + events);
    const seconds = (performance.now() - started) / 1000;
    const cpu = pids.map((pid, i) => cpuMs(pid) - cpuBefore[i]!);
    const rxCpu = cpuMs(rx.child.pid!) - rxBefore;
    const own = process.cpuUsage(ownBefore);
    const wakes = pids.map((pid, i) => {
      const w = wakeCounts(pid);
      return { wakes: w.wakes - wakesBefore[i]!.wakes, syscalls: w.syscalls - wakesBefore[i]!.syscalls };
    });
    const pgCpu = postmaster === null ? null : postgresCpuMs(postmaster) - pgBefore;
    const machine = machineTicks();
    const counts = countsBefore === null ? null : countsDelta(countsBefore, await probeCounts(probeDir, pids));
    const pgss = url === null ? null : statementTimes(pgssBefore, await statementSnapshot(url));
    const failedAttempts = (await Promise.all(bases.map(failedAttemptsOf))).reduce((a, b) => a + b, 0);
    const round = (x: number) => Math.round(x * 1000) / 1000;
    return {
      name,
      replicas,
      deliveries: total,
      seconds: round(seconds),
      deliveriesPerSec: Math.round(total / seconds),
      twice: received.count - received.distinct,
      failedAttempts,
      cpuMsPerDelivery: cpu.map((c) => round(c / total)),
      totalCpuMsPerDelivery: round(cpu.reduce((a, b) => a + b, 0) / total),
      postgresCpuMsPerDelivery: pgCpu === null ? null : round(pgCpu / total),
      receiverCpuMsPerDelivery: round(rxCpu / total),
      postersCpuMsPerDelivery: round((own.user + own.system) / 1000 / total),
      machineBusy: Math.round(((machine.busy - machineBefore.busy) / Math.max(1, machine.total - machineBefore.total)) * 100) / 100,
      quotaUsed: quotaShares(quotas, cpu, seconds * 1000),
      statementsPerDelivery: counts?.map((c) => round(c.statements / total)) ?? null,
      notificationsPerDelivery: counts?.map((c) => round(c.notifications / total)) ?? null,
      statements: counts?.map((c) => c.byStatement) ?? null,
      postgresStatements: pgss,
      wakesPerDelivery: wakes.map((w) => round((w.wakes * replicas) / total)),
      syscallsPerDelivery: wakes.map((w) => round((w.syscalls * replicas) / total)),
    };
  } catch (err) {
    throw withLogs(err, logs);
  } finally {
    posts?.close();
    for (const c of children) await stop(c);
    for (const q of made) q.remove();
    rx.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function replicaTable(results: WebhookConfigurationResult[]): string {
  const rows = [
    [
      'round',
      'configuration',
      'deliveries',
      'received twice',
      'failed attempts (warm-up included)',
      'seconds',
      'deliveries/s',
      'CPU ms per delivery, per replica',
      'CPU ms per delivery, all replicas',
      'PostgreSQL CPU ms per delivery',
      'receiver / posting clients CPU ms per delivery',
      'machine busy',
      'quota used, per replica',
      'PostgreSQL statements per delivery, per replica',
      'notifications received per delivery, per replica',
      'wake-ups per delivery it made, per replica',
    ],
  ];
  for (const r of results)
    rows.push([
      String(r.round),
      r.name,
      String(r.deliveries),
      String(r.twice),
      String(r.failedAttempts),
      r.seconds.toFixed(2),
      String(r.deliveriesPerSec),
      r.cpuMsPerDelivery.join(' / '),
      String(r.totalCpuMsPerDelivery),
      r.postgresCpuMsPerDelivery === null ? '—' : String(r.postgresCpuMsPerDelivery),
      `${r.receiverCpuMsPerDelivery} / ${r.postersCpuMsPerDelivery}`,
      `${Math.round(r.machineBusy * 100)}%`,
      r.quotaUsed === null ? '—' : r.quotaUsed.map((q) => `${Math.round(q * 100)}%`).join(' / '),
      r.statementsPerDelivery === null ? '—' : r.statementsPerDelivery.join(' / '),
      r.notificationsPerDelivery === null ? '—' : r.notificationsPerDelivery.join(' / '),
      r.wakesPerDelivery.join(' / '),
    ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const rounds = [...new Set(results.map((r) => r.round))].sort((a, b) => a - b);
  const ratio = (a: number, b: number) => a / Math.max(1, b);
  const factors = rounds.map((round) => {
    const inRound = results.filter((r) => r.round === round);
    const one = inRound.find((r) => r.name.startsWith('postgres') && r.replicas === 1);
    const sqlite = inRound.find((r) => r.name.startsWith('sqlite'));
    return {
      round,
      scaling: inRound
        .filter((r) => one && r.name.startsWith('postgres') && r.replicas > 1)
        .map((r) => ({ n: r.replicas, x: ratio(r.deliveriesPerSec, one!.deliveriesPerSec) })),
      vsSqlite: one && sqlite ? ratio(one.deliveriesPerSec, sqlite.deliveriesPerSec) : null,
    };
  });
  const describe = (f: { scaling: { n: number; x: number }[]; vsSqlite: number | null }) =>
    [
      ...f.scaling.map((s) => `${s.n} replicas ÷ 1 replica: ${s.x.toFixed(2)}× deliveries/s`),
      ...(f.vsSqlite === null ? [] : [`1 PostgreSQL replica ÷ the SQLite process: ${f.vsSqlite.toFixed(2)}`]),
    ].join('; ');
  const med = (xs: number[]) => {
    const t = [...xs].sort((a, b) => a - b);
    return t.length % 2 === 1 ? t[(t.length - 1) / 2]! : (t[t.length / 2 - 1]! + t[t.length / 2]!) / 2;
  };
  const summary = [
    ...factors.map((f) => `${factors.length > 1 ? `round ${f.round}: ` : ''}${describe(f)}`),
    ...(factors.length > 1
      ? [
          `median of the ${factors.length} rounds' factors: ${describe({
            scaling: factors[0]!.scaling.map((s, i) => ({ n: s.n, x: med(factors.map((f) => f.scaling[i]?.x ?? 0)) })),
            vsSqlite: factors.every((f) => f.vsSqlite !== null) ? med(factors.map((f) => f.vsSqlite!)) : null,
          })}`,
        ]
      : []),
  ];
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line), ...summary].join('\n');
}
