import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveFfmpeg } from '../../src/video/ffmpeg.js';
import { FORMATS, type Format } from '../../src/video/types.js';
import type { CpuQuota } from '../cgroup.js';
import { ADMIN, ROOT, call, startChild, stop } from '../control-plane/run.js';
import { confined, databaseUrl, quotasFor, withAdmin } from '../control-plane/replicas.js';
import { makePhotos } from './run.js';

/**
 * Renders across worker replicas: one `serve --role api` process takes the requests, and N
 * `serve --role worker` processes, each in a CPU cgroup of its own (a worker on a core of its
 * own, at a smaller size), claim and render them from the shared PostgreSQL database; photos
 * and videos in S3-compatible storage (`--object-store`) or, without it, one data directory
 * that every process shares. ffmpeg is a child of its worker, so it runs inside the worker's
 * quota; the bench checks that on every ffmpeg it sees.
 */
export interface WorkerBenchOptions {
  /** A PostgreSQL server URL whose role may create databases; each configuration gets a fresh one, dropped after. */
  database: string;
  /** Worker counts to run, in order (the first is the baseline of the scaling factor). */
  workers: number[];
  /** Renders submitted at once per configuration. */
  renders: number;
  photos: number;
  format: Format;
  /** `s3://bucket/prefix` with the AWS_* environment, or null for a shared data directory. */
  objectStore: string | null;
  /** Share of a core each worker process (and its ffmpeg) may use; null for none. */
  replicaCpu: number | null;
  log: (line: string) => void;
}

export interface WorkerRun {
  workers: number;
  renders: number;
  seconds: number;
  rendersPerMinute: number;
  /** CPU seconds per render of all workers together, their ffmpeg children included. */
  cpuSecondsPerRender: number;
  /** CPU seconds each worker process used (with its children), so that an idle worker shows. */
  cpuSecondsPerWorker: number[];
  /** What the workers used of their quotas over the run (1: the quota was the bound; well below: the machine was). */
  quotaUsed: number | null;
  /** ffmpeg processes seen running under a worker, and how many of them were inside its quota. */
  ffmpeg: { seen: number; inQuota: number };
  failed: number;
}

export interface WorkerBenchResult {
  settings: {
    renders: number;
    photos: number;
    format: Format;
    width: number;
    height: number;
    storage: string;
    replicaCpu: number | null;
    quotaUnavailable: string | null;
  };
  load: { before: string; after: string };
  runs: WorkerRun[];
  /** Renders per minute of the last worker count ÷ the first. */
  scaling: number;
  goal: number;
}

/** The configuration's quota-group prefix: the worker cgroups are named after it and the bench's pid. */
const QUOTA_PREFIX = 'brainstem-bench';
const CLK_TCK = 100;
/** The kernel's task flag of a process that has begun to exit (include/linux/sched.h). */
const PF_EXITING = 0x4;
const POLL_MS = 250;
/** A render that has not finished after this long is reported as failed (a 3-photo tour takes seconds of CPU). */
const RENDER_TIMEOUT_MS = 30 * 60_000;

/** CPU seconds of a process and its children it has waited for (user, system), from /proc. */
function cpuWithChildren(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
}

/** The ffmpeg processes whose parent is one of `parents`, each with whether its cgroups name `group`. */
function ffmpegChildren(parents: Set<number>, group: RegExp): { pid: number; inQuota: boolean }[] {
  const out: { pid: number; inQuota: boolean }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm !== 'ffmpeg') continue;
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (!parents.has(Number(ppid)) || state === 'Z' || state === 'X') continue;
      const groups = readFileSync(`/proc/${name}/cgroup`, 'utf8');
      // cgroup v1 shows an exiting task (PF_EXITING, which never clears) in the root group: a
      // child not exiting after its groups were read was not exiting while they were read.
      const again = readFileSync(`/proc/${name}/stat`, 'utf8');
      const after = again.slice(again.lastIndexOf(')') + 2).split(' ');
      if (after[0] === 'Z' || (Number(after[6]) & PF_EXITING) !== 0) continue;
      out.push({ pid: Number(name), inQuota: group.test(groups) });
    } catch {
      // the process ended while being read
    }
  }
  return out;
}

function round(n: number, places = 2): number {
  const f = 10 ** places;
  return Math.round(n * f) / f;
}

export async function runWorkerBench(o: WorkerBenchOptions): Promise<WorkerBenchResult> {
  const quotas = quotasFor(o.replicaCpu, o.log);
  const ffmpeg = resolveFfmpeg();
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-workers-'));
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  const before = load();
  try {
    o.log(`${o.photos} camera-sized photos`);
    const photos = makePhotos(ffmpeg.path, dir, o.photos);
    const runs: WorkerRun[] = [];
    for (const n of o.workers) {
      const name = `brainstem_bench_${process.pid}_w${n}`;
      await withAdmin(o.database, (c) => c.query(`CREATE DATABASE ${name}`));
      try {
        runs.push(await runWorkers(o, quotas, n, databaseUrl(o.database, name), photos, join(dir, `w${n}`)));
      } finally {
        await withAdmin(o.database, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      }
    }
    const first = runs[0]!;
    const last = runs[runs.length - 1]!;
    const { width, height } = FORMATS[o.format];
    return {
      settings: {
        renders: o.renders,
        photos: o.photos,
        format: o.format,
        width,
        height,
        storage: o.objectStore ?? 'one shared data directory',
        replicaCpu: quotas?.available ? quotas.fraction : null,
        quotaUnavailable: quotas && !quotas.available ? quotas.reason : null,
      },
      load: { before, after: load() },
      runs,
      scaling: round(last.rendersPerMinute / Math.max(first.rendersPerMinute, 1e-9)),
      goal: 1.8,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runWorkers(
  o: WorkerBenchOptions,
  quotas: ReturnType<typeof quotasFor>,
  workers: number,
  url: string,
  photos: Buffer[],
  dir: string,
): Promise<WorkerRun> {
  const children: ChildProcess[] = [];
  const made: CpuQuota[] = [];
  try {
    rmSync(dir, { recursive: true, force: true });
    const limitsFile = join(mkdtempSync(join(tmpdir(), 'brainstem-bench-limits-')), 'limits.json');
    // Every render is queued at once; the API's per-minute limits would refuse the polls.
    writeFileSync(limitsFile, JSON.stringify({ apiKey: 1e9, tenantApiKeys: 1e9, session: 1e9, queuedVideosPerTenant: 1e6 }));
    const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error' };
    const storage = o.objectStore ? ['--object-store', o.objectStore] : [];
    const common = ['--database', url, '--data', join(dir, 'data'), '--limits', limitsFile, ...storage];
    const serve = (role: string, extra: string[]) => [join(ROOT, 'bin', 'brainstem'), 'serve', '--addr', '127.0.0.1:0', '--role', role, ...common, ...extra];
    // The API process first: it migrates the database; it stays outside the quotas (it only queues and answers polls).
    const api = await startChild(process.execPath, serve('api', []), env, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
    children.push(api.child);
    // The workers together: the schema is there already.
    const started = await Promise.allSettled(
      Array.from({ length: workers }, (_, i) => {
        const [cmd, args] = confined(quotas, made, `worker-${workers}-${i}`, undefined, process.execPath, serve('worker', ['--render-concurrency', '1']));
        return startChild(cmd, args, env, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
      }),
    );
    for (const w of started) if (w.status === 'fulfilled') children.push(w.value.child);
    for (const w of started) if (w.status === 'rejected') throw w.reason;
    const pids = children.slice(1).map((c) => c.pid!);
    const base = `http://127.0.0.1:${api.port}`;
    o.log(`${workers} worker${workers === 1 ? '' : 's'}: ${o.renders} renders of a ${o.photos}-photo ${o.format} tour`);
    const tenant = await call(base, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(base, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password' });
    const { token } = await call(base, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
    const { key } = await call(base, 'POST', '/v1/api-keys', token, { name: 'bench' });
    const property = await call(base, 'POST', '/v1/properties', key, {
      title: 'Benchmark Villa',
      address: '1 Render Road',
      price: 990000,
      currency: 'EUR',
      bedrooms: 5,
      description: 'A bright villa with a garden and a view of the hills.',
    });
    for (let i = 0; i < photos.length; i += 5) {
      await call(base, 'POST', `/v1/properties/${property.id}/photos`, key, {
        photos: photos.slice(i, i + 5).map((p, j) => ({ filename: `p${i + j}.jpg`, data_base64: p.toString('base64') })),
      });
    }

    const group = new RegExp(`${QUOTA_PREFIX}-${process.pid}-worker-${workers}-`);
    const parents = new Set(pids);
    const seen = new Map<number, boolean>();
    const cpu0 = pids.map(cpuWithChildren);
    const t0 = performance.now();
    const ids: number[] = [];
    for (let i = 0; i < o.renders; i++)
      ids.push((await call(base, 'POST', '/v1/videos', key, { property_id: property.id, template: 'tour', format: o.format })).id);
    const open = new Set(ids);
    let failed = 0;
    while (open.size > 0) {
      if (performance.now() - t0 > RENDER_TIMEOUT_MS) {
        failed += open.size;
        break;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
      for (const f of ffmpegChildren(parents, group)) seen.set(f.pid, f.inQuota);
      for (const id of [...open]) {
        const v = await call(base, 'GET', `/v1/videos/${id}`, key);
        if (v.status === 'queued' || v.status === 'rendering') continue;
        open.delete(id);
        if (v.status !== 'completed') {
          failed++;
          o.log(`render ${id} ${v.status}: ${v.error}`);
        }
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    // Workers wait for their ffmpeg children, so the children's CPU is in their counts once a render ends.
    const cpu = pids.map((pid, i) => round(cpuWithChildren(pid) - cpu0[i]!));
    const done = o.renders - failed;
    const run: WorkerRun = {
      workers,
      renders: done,
      seconds: round(seconds, 1),
      rendersPerMinute: round((done / seconds) * 60),
      cpuSecondsPerRender: round(cpu.reduce((a, b) => a + b, 0) / Math.max(1, done)),
      cpuSecondsPerWorker: cpu,
      quotaUsed: quotas?.available ? round(cpu.reduce((a, b) => a + b, 0) / (seconds * quotas.fraction * workers)) : null,
      ffmpeg: { seen: seen.size, inQuota: [...seen.values()].filter(Boolean).length },
      failed,
    };
    o.log(
      `${workers} worker${workers === 1 ? '' : 's'}: ${run.rendersPerMinute} renders/min, ${run.cpuSecondsPerRender} CPU s per render, ffmpeg in quota ${run.ffmpeg.inQuota}/${run.ffmpeg.seen} (load ${loadavg()[0]!.toFixed(1)})`,
    );
    return run;
  } finally {
    for (const c of children) await stop(c);
    for (const q of made) q.remove();
  }
}

export function workersTable(r: WorkerBenchResult): string {
  const s = r.settings;
  const quota =
    s.replicaCpu !== null
      ? `each worker and its ffmpeg in a CPU cgroup with ${s.replicaCpu} of a core`
      : `no CPU quotas (${s.quotaUnavailable ?? 'none asked for'})`;
  return [
    `${s.renders} renders of a ${s.photos}-photo ${s.format} tour (${s.width}x${s.height}); PostgreSQL; ${s.storage}; ${quota}`,
    `load average (1, 5, 15 min) before / after: ${r.load.before} / ${r.load.after}`,
    '',
    '| workers | renders/min | seconds | CPU s per render | CPU s per worker | share of the quotas used | ffmpeg inside the quota | failed |',
    '|---:|---:|---:|---:|---|---:|---:|---:|',
    ...r.runs.map(
      (x) =>
        `| ${x.workers} | ${x.rendersPerMinute} | ${x.seconds} | ${x.cpuSecondsPerRender} | ${x.cpuSecondsPerWorker.join(' / ')} | ${x.quotaUsed === null ? '—' : `${Math.round(x.quotaUsed * 100)} %`} | ${x.ffmpeg.inQuota} of ${x.ffmpeg.seen} | ${x.failed} |`,
    ),
    '',
    `${r.runs.at(-1)!.workers} workers ÷ ${r.runs[0]!.workers}: ${r.scaling}× renders per minute (goal ≥ ${r.goal}×)`,
  ].join('\n');
}
