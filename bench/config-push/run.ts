import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signature } from '../../src/signing/request.js';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { ADMIN, call, pinned, ROOT, startChild, stop } from '../control-plane/run.js';
import { runWrk, type WrkResult } from '../control-plane/wrk.js';

export interface ConfigPushOptions {
  /** Simulated sidecar counts, each a run of its own. */
  counts: number[];
  /** Publishes per count. */
  publishes: number;
  /** Streams opened at once while connecting. */
  connectBatch: number;
  ofrepDurationS: number;
  ofrepRounds: number;
  serverCpu: string | undefined;
  loadCpu: string | undefined;
  log: (line: string) => void;
}

export interface PushRun {
  sidecars: number;
  /** Server RSS growth per open stream, bytes (the pull connections were open before the baseline). */
  bytesPerStream: number;
  rssBeforeMiB: number;
  rssWithStreamsMiB: number;
  /** Publish (PUT sent) to each sidecar's "applied" (its signed pull answered with the new version), over every publish. */
  appliedMs: { p50: number; p99: number; max: number; samples: number };
  /** Server CPU time per publish (the publish itself, the announcements and every pull it caused), ms. */
  cpuMsPerPublish: number;
  /** Sidecars that did not apply a publish within the timeout. */
  missed: number;
}

export interface ConfigPushResult {
  machine: { cpus: number; node: string; nofile: number; pullConnections: number };
  runs: PushRun[];
  /**
   * Medians of the rounds; `shareOfHelloWorld` is the median of the per-round ratios (each
   * round's two runs are seconds apart, so they share the machine's load), `bestShare` the best
   * round's rate against the best round's (noise only lowers a rate).
   */
  ofrep: { helloWorld: OfrepRun; evaluate: OfrepRun; shareOfHelloWorld: number; bestShare: number; rounds: { hello: OfrepRun; evaluate: OfrepRun }[] };
}

/** One wrk run against one server, with the server process's own CPU time over it. */
export interface OfrepRun extends WrkResult {
  /** The server's CPU time (user + system) per request answered, µs: what a request costs, whatever else loads the machine. */
  serverCpuUsPerRequest: number;
  /** The server's CPU time over the run's wall time: near 1, its core was the limit; well below, wrk or the machine's other work was. */
  serverBusy: number;
}

/**
 * Seconds of unmeasured load on each OFREP server before the rounds: the sidecar's route is
 * optimised by V8 during its first thousands of requests, which would otherwise land in the
 * first round only (the hello-world has next to nothing to optimise).
 */
const OFREP_WARMUP_S = 2;

const CLK_TCK = 100;
/**
 * Keep-alive connections the simulated sidecars' pulls share (a pull waits for a free one).
 * A connection per sidecar would double the open files, past a container's hard limit at
 * 10,000 sidecars; the server, not these connections, is what a burst of pulls waits on.
 */
const PULL_POOL = 256;

/** One keep-alive pull connection, answering its queue of pulls in order. */
export class PullConnection {
  private socket: Socket | null = null;
  private buf = '';
  private readonly queue: { request: string; done: (status: number, body: string) => void }[] = [];
  private busy = false;

  constructor(private readonly port: number) {}

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = (this.socket = connect(this.port, '127.0.0.1', () => resolve()));
      s.setEncoding('utf8');
      s.once('error', reject);
      s.on('data', (d: string) => {
        this.buf += d;
        const head = this.buf.indexOf('\r\n\r\n');
        if (head < 0) return;
        const len = Number(/content-length: (\d+)/i.exec(this.buf.slice(0, head))?.[1] ?? 0);
        if (this.buf.length < head + 4 + len) return;
        const status = Number(this.buf.slice(9, 12));
        const body = this.buf.slice(head + 4, head + 4 + len);
        this.buf = this.buf.slice(head + 4 + len);
        const job = this.queue.shift()!;
        this.busy = false;
        job.done(status, body);
        this.next();
      });
    });
  }

  send(request: string, done: (status: number, body: string) => void): void {
    this.queue.push({ request, done });
    this.next();
  }

  private next(): void {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    this.socket!.write(this.queue[0]!.request);
  }

  close(): void {
    this.socket?.destroy();
  }
}

/** This process's open-file limits (soft, hard) from /proc. */
function fdLimits(): { soft: number; hard: number } {
  const m = /Max open files\s+(\d+)\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? { soft: Number(m[1]), hard: Number(m[2]) } : { soft: NaN, hard: NaN };
}

/**
 * Raises this process's open-file limit (prlimit, util-linux) to `want`, or to the hard limit
 * when `want` is above it and raising the hard limit is not permitted (a container); returns
 * the limit in force, which the children inherit.
 */
export function raiseFdLimit(want: number, log: (l: string) => void): number {
  for (const target of [want, fdLimits().hard]) {
    try {
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${target}:${Math.max(target, fdLimits().hard)}`], { stdio: 'ignore' });
      break;
    } catch {
      // not permitted: the next, lower target
    }
  }
  const now = fdLimits();
  log(`open-file limit of this process and its children: ${now.soft} (prlimit --nofile; asked for ${want}, hard limit ${now.hard})`);
  return now.soft;
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * One simulated sidecar: a stream connection and a keep-alive pull connection, raw HTTP/1.1
 * over node:net (a few hundred bytes of state each). On a `version` event newer than what it
 * applied it sends a signed pull; "applied" is the pull's 200 carrying that version. The
 * signature is not verified here (the real sidecar's ed25519 check costs ~0.1 ms and would be
 * this one process's CPU, not the server's).
 */
export class SimSidecar {
  stream: Socket | null = null;
  applied = 1;
  private streamBuf = '';
  private pulling = false;
  private again = false;
  private seq = 0;
  onApplied: ((version: number) => void) | null = null;
  /** Told of every version event the stream brings (the push itself, before the pull). */
  onEvent: ((version: number) => void) | null = null;

  constructor(
    private readonly port: number,
    private readonly key: string,
    private readonly serverId: number,
    private readonly id: number,
    private readonly pulls: PullConnection,
  ) {}

  private signed(target: string): string {
    const timestamp = Math.floor(Date.now() / 1000);
    return `GET ${target} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${this.key}\r\nX-Service-Timestamp: ${timestamp}\r\nX-Service-Signature: ${signature(this.key, { method: 'GET', target, timestamp })}\r\n`;
  }

  openStream(): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = (this.stream = connect(this.port, '127.0.0.1'));
      s.setEncoding('utf8');
      s.once('error', reject);
      s.on('data', (d: string) => {
        this.streamBuf += d;
        if (this.streamBuf.startsWith('HTTP/1.1 ') && !this.streamBuf.startsWith('HTTP/1.1 200')) reject(new Error(this.streamBuf.slice(0, 200)));
        let end: number;
        while ((end = this.streamBuf.indexOf('\n\n')) >= 0) {
          const block = this.streamBuf.slice(0, end);
          this.streamBuf = this.streamBuf.slice(end + 2);
          const m = /event: version\ndata: \{"version":(\d+)/.exec(block);
          if (m) {
            resolve();
            this.onEvent?.(Number(m[1]));
            if (Number(m[1]) > this.applied) this.startPull();
          }
        }
      });
      s.write(`${this.signed(`/v1/config/stream?server=${this.serverId}&nonce=s${this.id}`)}Accept: text/event-stream\r\n\r\n`);
    });
  }

  private startPull(): void {
    if (this.pulling) {
      this.again = true;
      return;
    }
    this.pulling = true;
    const request = `${this.signed(`/v1/config?server=${this.serverId}&nonce=p${this.id}-${this.seq++}`)}If-None-Match: "v${this.applied}"\r\n\r\n`;
    this.pulls.send(request, (status, body) => {
      this.pulling = false;
      if (status === 200) {
        const v = Number(/"version":(\d+)/.exec(body)?.[1] ?? 0);
        if (v > this.applied) {
          this.applied = v;
          this.onApplied?.(v);
        }
      }
      if (this.again) {
        this.again = false;
        this.startPull();
      }
    });
  }

  close(): void {
    this.stream?.destroy();
  }
}

export async function inBatches<T>(items: T[], size: number, fn: (t: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/**
 * `brainstem bench config-push`: simulated sidecars holding config push streams on a real
 * `serve` (its own process, so its memory and CPU are measured alone), publishes timed to each
 * sidecar's applied pull; then OFREP evaluations on a real sidecar beside a bare uWS
 * hello-world, both driven by the same wrk script.
 */
export async function runConfigPushBench(o: ConfigPushOptions): Promise<ConfigPushResult> {
  const nofile = raiseFdLimit(65_536, o.log);
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-push-'));
  const env = { ...process.env, SERVICE_ADMIN_TOKEN: ADMIN, BRAINSTEM_LOG: 'error' };
  const children: ChildProcess[] = [];
  const runs: PushRun[] = [];
  try {
    const max = Math.max(...o.counts);
    if (max + PULL_POOL + 200 > nofile) throw new Error(`${max} sidecars need about ${max + PULL_POOL + 200} open files per process; the limit is ${nofile}`);
    const [sCmd, sArgs] = pinned(o.serverCpu, process.execPath, [
      join(ROOT, 'dist', 'bench', 'config-push', 'server.js'),
      join(dir, 'bench.db'),
      String(max + 100),
    ]);
    const server = await startChild(sCmd, sArgs, env, /listening (\d+)/);
    children.push(server.child);
    const base = `http://127.0.0.1:${server.port}`;
    o.log(`serve (pid ${server.child.pid}) on ${base}`);
    const tenant = await call(base, 'POST', '/v1/admin/tenants', ADMIN, { name: 'bench', plan: 'enterprise' });
    await call(base, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'bench@example.com', password: 'bench-password-1' });
    const { token } = await call(base, 'POST', '/v1/auth/login', null, { email: 'bench@example.com', password: 'bench-password-1' });
    const srv = await call(base, 'POST', '/v1/servers', token, { name: 'bench' });
    const { key } = await call(base, 'POST', `/v1/servers/${srv.id}/keys`, token);
    // The head cached and a first stream's code paths warmed before the baseline memory is read.
    const pool = Array.from({ length: PULL_POOL }, () => new PullConnection(server.port));
    await Promise.all(pool.map((c) => c.open()));
    const warm = new SimSidecar(server.port, key, srv.id, -1, pool[0]!);
    await warm.openStream();
    warm.close();

    for (const n of o.counts) {
      await new Promise((r) => setTimeout(r, 500));
      const pid = server.child.pid!;
      const before = rssBytes(pid);
      const sims = Array.from({ length: n }, (_, i) => new SimSidecar(server.port, key, srv.id, i + n * 10, pool[i % PULL_POOL]!));
      o.log(`${n} sidecars: opening streams (${o.connectBatch} at a time)`);
      await inBatches(sims, o.connectBatch, (s) => s.openStream());
      await new Promise((r) => setTimeout(r, 500));
      const withStreams = rssBytes(pid);
      const head = await call(base, 'GET', `/v1/servers/${srv.id}/config`, token);
      for (const s of sims) s.applied = head.version;
      const latencies: number[] = [];
      let cpu = 0;
      let missed = 0;
      let bundle = head;
      for (let p = 0; p < o.publishes; p++) {
        const target = bundle.version + 1;
        let left = n;
        let t0 = 0;
        const all = new Promise<void>((resolve) => {
          for (const s of sims)
            s.onApplied = (v) => {
              if (v !== target) return;
              latencies.push(performance.now() - t0);
              if (--left === 0) resolve();
            };
        });
        const cpu0 = cpuMs(pid);
        t0 = performance.now();
        bundle = await call(base, 'PUT', `/v1/servers/${srv.id}/config`, token, {
          ...bundle,
          speech: { ...bundle.speech, limits: { ...bundle.speech.limits, per_hour: 10 + p } },
        });
        const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000));
        if ((await Promise.race([all, timeout])) === 'timeout') missed += left;
        cpu += cpuMs(pid) - cpu0;
        await new Promise((r) => setTimeout(r, 200));
      }
      const sorted = latencies.sort((a, b) => a - b);
      const run: PushRun = {
        sidecars: n,
        bytesPerStream: Math.round((withStreams - before) / n),
        rssBeforeMiB: Math.round(before / 1048576),
        rssWithStreamsMiB: Math.round(withStreams / 1048576),
        appliedMs: {
          p50: Math.round(percentile(sorted, 50) * 10) / 10,
          p99: Math.round(percentile(sorted, 99) * 10) / 10,
          max: Math.round((sorted.at(-1) ?? NaN) * 10) / 10,
          samples: sorted.length,
        },
        cpuMsPerPublish: Math.round(cpu / o.publishes),
        missed,
      };
      o.log(
        `${n} sidecars: applied p50 ${run.appliedMs.p50} ms, p99 ${run.appliedMs.p99} ms; ${run.bytesPerStream} B/stream; ${run.cpuMsPerPublish} ms CPU/publish`,
      );
      runs.push(run);
      for (const s of sims) s.close();
    }
    for (const c of pool) c.close();
    await stop(server.child);

    // OFREP: a sidecar with a bundle holding flags, beside the hello-world, one wrk script.
    const bundleDir = join(dir, 'bundle');
    execFileSync('mkdir', ['-p', bundleDir]);
    writeFileSync(
      join(bundleDir, 'bundle.json'),
      JSON.stringify({
        ...DEFAULT_BUNDLE,
        flags: {
          zombie_density: {
            type: 'number',
            value: 1,
            rules: [
              { if: { map: ['chernarus'], players: { min: 30 } }, value: 1.6 },
              { if: { percentage: 10 }, value: 1.2 },
            ],
          },
        },
      }),
    );
    const TOKEN = 'bench-ofrep-token';
    const [hCmd, hArgs] = pinned(o.serverCpu, process.execPath, [join(ROOT, 'dist', 'bench', 'control-plane', 'hello.js'), '0']);
    const hello = await startChild(hCmd, hArgs, env, /listening (\d+)/);
    children.push(hello.child);
    const [cCmd, cArgs] = pinned(o.serverCpu, process.execPath, [
      join(ROOT, 'bin', 'brainstem'),
      'sidecar',
      '--bundle',
      bundleDir,
      '--addr',
      '127.0.0.1:0',
      '--token',
      TOKEN,
      '--state',
      '',
    ]);
    const sidecar = await startChild(cCmd, cArgs, env, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
    children.push(sidecar.child);
    const script = join(ROOT, 'bench', 'config-push', 'ofrep.lua');
    // Both servers get the same wrk script (its body and headers), connections, thread and core.
    const common = { script, args: [TOKEN], threads: 1, connections: 64, durationS: o.ofrepDurationS, cpu: o.loadCpu };
    const url = (port: number): string => `http://127.0.0.1:${port}/ofrep/v1/evaluate/flags/zombie_density`;
    const measured = async (child: ChildProcess, port: number): Promise<OfrepRun> => {
      const cpu0 = cpuMs(child.pid!);
      const w = stripRaw(await runWrk({ ...common, url: url(port) }));
      const cpu = cpuMs(child.pid!) - cpu0;
      return { ...w, serverCpuUsPerRequest: Math.round(((cpu * 1000) / w.requests) * 100) / 100, serverBusy: Math.round((cpu / 1000 / w.seconds) * 100) / 100 };
    };
    for (const port of [hello.port, sidecar.port]) await runWrk({ ...common, url: url(port), durationS: OFREP_WARMUP_S });
    const rounds: { hello: OfrepRun; evaluate: OfrepRun }[] = [];
    for (let r = 0; r < o.ofrepRounds; r++) {
      const runHello = () => measured(hello.child, hello.port);
      const runEval = () => measured(sidecar.child, sidecar.port);
      // Swapped every other round: neither side always runs second.
      const [h, e] = r % 2 === 0 ? [await runHello(), await runEval()] : await runEval().then(async (ev) => [await runHello(), ev] as const);
      if (e.errors > 0 || e.socketErrors > 0) throw new Error(`OFREP answered ${e.errors} non-2xx responses and ${e.socketErrors} socket errors`);
      o.log(
        `OFREP round ${r + 1}: hello-world ${Math.round(h.rps)}/s (${h.serverCpuUsPerRequest} µs CPU each), evaluate ${Math.round(e.rps)}/s (${e.serverCpuUsPerRequest} µs CPU each)`,
      );
      rounds.push({ hello: h, evaluate: e });
    }
    const median = (xs: OfrepRun[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;
    const helloWorld = median(rounds.map((r) => r.hello));
    const evaluate = median(rounds.map((r) => r.evaluate));
    return {
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version, nofile, pullConnections: PULL_POOL },
      runs,
      ofrep: {
        helloWorld,
        evaluate,
        shareOfHelloWorld: Math.round(median2(rounds.map((r) => r.evaluate.rps / r.hello.rps)) * 1000) / 1000,
        bestShare: Math.round((Math.max(...rounds.map((r) => r.evaluate.rps)) / Math.max(...rounds.map((r) => r.hello.rps))) * 1000) / 1000,
        rounds,
      },
    };
  } finally {
    for (const c of children) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }
}

function median2(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

function stripRaw(r: WrkResult & { raw?: string }): WrkResult {
  const { raw: _, ...rest } = r;
  return rest;
}

export function pushTable(r: ConfigPushResult): string {
  const lines = [
    '| sidecars | applied p50 | applied p99 | max | missed | RSS growth per stream | CPU per publish |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map(
      (x) =>
        `| ${x.sidecars} | ${x.appliedMs.p50} ms | ${x.appliedMs.p99} ms | ${x.appliedMs.max} ms | ${x.missed} | ${(x.bytesPerStream / 1024).toFixed(1)} KB | ${x.cpuMsPerPublish} ms |`,
    ),
    '',
    '| OFREP single flag (wrk, 64 connections) | requests/s | p50 | p99 | server CPU per request | server core busy |',
    '|---|---:|---:|---:|---:|---:|',
    `| bare uWS hello-world (baseline) | ${Math.round(r.ofrep.helloWorld.rps)} | ${r.ofrep.helloWorld.p50Ms} ms | ${r.ofrep.helloWorld.p99Ms} ms | ${r.ofrep.helloWorld.serverCpuUsPerRequest} µs | ${Math.round(r.ofrep.helloWorld.serverBusy * 100)} % |`,
    `| sidecar POST /ofrep/v1/evaluate/flags/{key} | ${Math.round(r.ofrep.evaluate.rps)} (median of per-round ratios ${Math.round(r.ofrep.shareOfHelloWorld * 100)} %, best/best ${Math.round(r.ofrep.bestShare * 100)} %) | ${r.ofrep.evaluate.p50Ms} ms | ${r.ofrep.evaluate.p99Ms} ms | ${r.ofrep.evaluate.serverCpuUsPerRequest} µs | ${Math.round(r.ofrep.evaluate.serverBusy * 100)} % |`,
  ];
  return lines.join('\n');
}
