import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { encode } from '@msgpack/msgpack';
import { generateTicks } from './scenarios.js';
import type { BrainPolicy } from './policy.js';
import type { ServerKind } from './server.js';

export interface TickBenchOptions {
  /** Seconds per measured run. */
  duration: number;
  /** Seconds of unmeasured warm-up before each run. */
  warmup: number;
  /** Times the whole sequence is repeated; each row reports its median run (the machine is shared and noisy). */
  rounds: number;
  connections: number;
  /** Distinct agents in the replayed corpus (one tick each, replayed in turn). */
  agents: number;
  /** Offered rate of the fixed-rate runs, ticks per second. */
  rate: number;
  serverCpu: string;
  clientCpu: string;
  wrk: string;
  /** `--policy all|none`: the brains under test (sidecar rows and the node:http handler) run with every policy on or off; unset = the built-in bundle. */
  policy?: 'all' | 'none';
}

type Encoding = 'json' | 'msgpack';

export interface RunResult {
  server: string;
  encoding: Encoding;
  mode: 'max' | 'fixed-rate';
  connections: number;
  ticks_per_s: number;
  p50_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
  errors: number;
  rss_mb: number;
  /** Server CPU time (all its threads) per tick: robust to a noisy machine, unlike ticks/s. */
  cpu_us_per_tick: number;
}

export interface TickBenchReport {
  options: TickBenchOptions;
  machine: { cpus: number; node: string };
  runs: RunResult[];
  /** Throughput ratios (what the targets name) and the same ratios from CPU cost per tick (less sensitive to other load). */
  ratios: {
    json_vs_bare_uws: number;
    json_vs_node_http: number;
    /** Against a uWS server that only JSON.parses the body: what decoding alone leaves of the transport's rate. */
    json_vs_uws_parse: number;
    cpu_json_vs_bare_uws: number;
    cpu_json_vs_node_http: number;
  };
  targets: {
    ratio_vs_bare_uws: boolean;
    ratio_vs_node_http: boolean;
    p99_under_1ms_at_rate: boolean;
    /** Inline, the default mode. */
    rss_under_150mb: boolean;
  };
  /** Largest RSS seen per sidecar mode, MB. */
  rss_mb: Record<string, number>;
}

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const LUA = fileURLToPath(new URL('../../../bench/tick/tick.lua', import.meta.url));

export interface ServerSpec {
  label: string;
  kind: ServerKind;
  workers: number;
  /** Encodings it is driven with; both when omitted. */
  encodings?: readonly Encoding[];
  /** Bundle policies of the brain under test (brain kinds only); default: the built-in bundle. */
  policy?: BrainPolicy;
}

const SERVERS: ServerSpec[] = [
  { label: 'bare uWS (constant reply)', kind: 'uws-bare', workers: 0 },
  { label: 'uWS + JSON.parse (constant reply)', kind: 'uws-parse', workers: 0, encodings: ['json'] },
  { label: 'node:http + tick handler', kind: 'node-http', workers: 0 },
  { label: 'sidecar inline', kind: 'sidecar', workers: 0 },
  { label: 'sidecar 1 worker', kind: 'sidecar', workers: 1 },
  { label: 'sidecar 2 workers', kind: 'sidecar', workers: 2 },
];

export function writeCorpus(dir: string, agents: number): Record<Encoding, { bodies: string; index: string }> {
  const ticks = generateTicks({ agents, count: agents, seed: 7 });
  const out = {} as Record<Encoding, { bodies: string; index: string }>;
  for (const encoding of ['json', 'msgpack'] as const) {
    const parts = ticks.map((t) => (encoding === 'json' ? Buffer.from(JSON.stringify(t)) : Buffer.from(encode(t))));
    const bodies = join(dir, `${encoding}.bin`);
    const index = join(dir, `${encoding}.idx`);
    writeFileSync(bodies, Buffer.concat(parts));
    writeFileSync(index, `${parts.map((p) => p.length).join('\n')}\n`);
    out[encoding] = { bodies, index };
  }
  return out;
}

export async function startServer(
  spec: ServerSpec,
  cpu: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; port: number; lines: ReturnType<typeof createInterface> }> {
  const child = spawn('taskset', ['-c', cpu, process.execPath, SERVER, spec.kind, String(spec.workers), spec.policy ?? 'default'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BRAINSTEM_LOG: 'silent', ...env },
  });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${spec.label} exited with ${code} before listening`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  return { child, port, lines };
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** utime + stime of a process and all its threads, in microseconds (Linux /proc). */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat(5), counted after the ")" that ends the command name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / CLOCK_TICKS;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

export interface WrkResult {
  requests: number;
  duration_us: number;
  errors: number;
  non2xx: number;
  p50_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
}

export function wrk(
  opts: TickBenchOptions,
  port: number,
  corpus: { bodies: string; index: string },
  encoding: Encoding,
  seconds: number,
  connections: number,
  delayMs?: number,
  path = '/tick',
): WrkResult {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TICK_BODIES: corpus.bodies,
    TICK_INDEX: corpus.index,
    TICK_TYPE: encoding === 'json' ? 'application/json' : 'application/msgpack',
    TICK_PATH: path,
  };
  if (delayMs !== undefined) env.TICK_DELAY_MS = String(delayMs);
  const args = ['-c', opts.clientCpu, opts.wrk, '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', LUA, `http://127.0.0.1:${port}${path}`];
  const r = spawnSync('taskset', args, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed (${r.status}): ${r.stderr || r.stdout}`);
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`wrk printed no RESULT line:\n${r.stdout}`);
  return JSON.parse(line.slice('RESULT '.length)) as WrkResult;
}

export function measured(pid: number, run: () => WrkResult): { w: WrkResult; cpu: number } {
  const before = cpuUs(pid);
  const w = run();
  return { w, cpu: cpuUs(pid) - before };
}

export function toRun(
  spec: ServerSpec,
  encoding: Encoding,
  mode: RunResult['mode'],
  connections: number,
  { w, cpu }: { w: WrkResult; cpu: number },
  rss: number,
): RunResult {
  return {
    server: spec.label,
    encoding,
    mode,
    connections,
    ticks_per_s: Math.round(w.requests / (w.duration_us / 1e6)),
    p50_us: w.p50_us,
    p99_us: w.p99_us,
    p999_us: w.p999_us,
    max_us: w.max_us,
    errors: w.errors,
    rss_mb: rss,
    cpu_us_per_tick: w.requests > 0 ? Math.round((cpu / w.requests) * 10) / 10 : 0,
  };
}

/** The median of a row's runs, by ticks/s at full load and by p99 at the fixed rate; RSS is the largest seen. */
export function medianRun(list: readonly RunResult[]): RunResult {
  const sorted = [...list].sort((a, b) => (a.mode === 'max' ? a.ticks_per_s - b.ticks_per_s : a.p99_us - b.p99_us));
  return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, rss_mb: Math.max(...list.map((r) => r.rss_mb)) };
}

/** Warms a started server up, then drives it at full load with `opts.connections` and measures it. */
export function maxRun(
  opts: TickBenchOptions,
  spec: ServerSpec,
  pid: number,
  port: number,
  corpus: { bodies: string; index: string },
  encoding: Encoding,
): RunResult {
  if (opts.warmup > 0) wrk(opts, port, corpus, encoding, opts.warmup, opts.connections);
  const w = measured(pid, () => wrk(opts, port, corpus, encoding, opts.duration, opts.connections));
  return toRun(spec, encoding, 'max', opts.connections, w, rssMb(pid));
}

export async function runTickBench(opts: TickBenchOptions, progress: (line: string) => void): Promise<TickBenchReport> {
  if (spawnSync(opts.wrk, ['-v']).error) throw new Error(`wrk not found at ${opts.wrk} (Debian: apt-get install wrk)`);
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-tick-'));
  const samples = new Map<string, RunResult[]>();
  const keep = (run: RunResult): void => {
    const key = `${run.server}|${run.encoding}|${run.mode}`;
    samples.set(key, [...(samples.get(key) ?? []), run]);
  };
  const servers =
    opts.policy === undefined
      ? SERVERS
      : SERVERS.map((spec) => (spec.kind === 'uws-bare' || spec.kind === 'uws-parse' ? spec : { ...spec, policy: opts.policy }));
  try {
    const corpus = writeCorpus(dir, opts.agents);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const spec of servers) {
        for (const encoding of spec.encodings ?? (['json', 'msgpack'] as const)) {
          const { child, port } = await startServer(spec, opts.serverCpu);
          try {
            const run = maxRun(opts, spec, child.pid!, port, corpus[encoding], encoding);
            keep(run);
            progress(
              `round ${round}: ${spec.label} ${encoding}: ${run.ticks_per_s} ticks/s, p99 ${run.p99_us} µs, ${run.cpu_us_per_tick} µs CPU/tick, rss ${run.rss_mb} MB`,
            );
            if (spec.kind === 'sidecar' && encoding === 'json') {
              // wrk's delay() is whole milliseconds per connection: a 2 ms pause plus about half a
              // millisecond of round trip and timer slack per request, over enough connections,
              // offers about the target rate; the achieved rate is what is reported.
              const delayMs = 2;
              const conns = Math.max(1, Math.round((opts.rate * (delayMs + 0.5)) / 1000));
              const f = measured(child.pid!, () => wrk(opts, port, corpus[encoding], encoding, opts.duration, conns, delayMs));
              const fixed = toRun(spec, encoding, 'fixed-rate', conns, f, rssMb(child.pid!));
              keep(fixed);
              progress(`round ${round}: ${spec.label} ${encoding} at ~${opts.rate}/s: ${fixed.ticks_per_s} ticks/s, p99 ${fixed.p99_us} µs`);
            }
          } finally {
            await stopServer(child);
          }
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const runs: RunResult[] = [...samples.values()].map(medianRun);
  const max = (label: string): number => runs.find((r) => r.server === label && r.encoding === 'json' && r.mode === 'max')?.ticks_per_s ?? 0;
  const cpu = (label: string): number => runs.find((r) => r.server === label && r.encoding === 'json' && r.mode === 'max')?.cpu_us_per_tick ?? 0;
  const inline = max('sidecar inline');
  const round2 = (x: number): number => Math.round(x * 100) / 100;
  const ratios = {
    json_vs_bare_uws: round2(inline / max('bare uWS (constant reply)')),
    json_vs_node_http: round2(inline / max('node:http + tick handler')),
    json_vs_uws_parse: round2(inline / max('uWS + JSON.parse (constant reply)')),
    cpu_json_vs_bare_uws: round2(cpu('bare uWS (constant reply)') / cpu('sidecar inline')),
    cpu_json_vs_node_http: round2(cpu('node:http + tick handler') / cpu('sidecar inline')),
  };
  const fixedInline = runs.find((r) => r.server === 'sidecar inline' && r.mode === 'fixed-rate');
  const rssMbByMode: Record<string, number> = {};
  for (const r of runs) if (r.server.startsWith('sidecar')) rssMbByMode[r.server] = Math.max(rssMbByMode[r.server] ?? 0, r.rss_mb);
  return {
    options: opts,
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
    runs,
    ratios,
    targets: {
      ratio_vs_bare_uws: ratios.json_vs_bare_uws >= 0.6,
      ratio_vs_node_http: ratios.json_vs_node_http >= 1.8,
      p99_under_1ms_at_rate: fixedInline !== undefined && fixedInline.p99_us < 1000,
      rss_under_150mb: (rssMbByMode['sidecar inline'] ?? Infinity) < 150,
    },
    rss_mb: rssMbByMode,
  };
}

export function formatTable(report: TickBenchReport): string {
  const head = '| server | encoding | load | ticks/s | p50 µs | p99 µs | p99.9 µs | CPU µs/tick | errors | RSS MB |';
  const rule = '|---|---|---|--:|--:|--:|--:|--:|--:|--:|';
  const rows = report.runs.map(
    (r) =>
      `| ${r.server} | ${r.encoding} | ${r.mode === 'max' ? `max, ${r.connections} conns` : `~${report.options.rate}/s offered, ${r.connections} conns`} | ${r.ticks_per_s} | ${r.p50_us} | ${r.p99_us} | ${r.p999_us} | ${r.cpu_us_per_tick} | ${r.errors} | ${r.rss_mb} |`,
  );
  const t = report.targets;
  const policy = report.options.policy;
  return [
    ...(policy === undefined
      ? []
      : [`brain policy: every bundle policy ${policy === 'all' ? 'on' : 'off'} (--policy ${policy}; sidecar rows and the node:http handler)`, '']),
    head,
    rule,
    ...rows,
    '',
    `sidecar inline JSON vs bare uWS: ${report.ratios.json_vs_bare_uws} (target ≥ 0.6: ${t.ratio_vs_bare_uws ? 'met' : 'missed'})`,
    `sidecar inline JSON vs node:http: ${report.ratios.json_vs_node_http}× (target ≥ 1.8: ${t.ratio_vs_node_http ? 'met' : 'missed'})`,
    `sidecar inline JSON vs uWS that only JSON.parses the body: ${report.ratios.json_vs_uws_parse}`,
    `same ratios from server CPU per tick: ${report.ratios.cpu_json_vs_bare_uws} of bare uWS, ${report.ratios.cpu_json_vs_node_http}× node:http`,
    `p99 < 1 ms at ~${report.options.rate}/s (inline): ${t.p99_under_1ms_at_rate ? 'met' : 'missed'}`,
    `RSS < 150 MB with ${report.options.agents} agents, inline (the default): ${t.rss_under_150mb ? 'met' : 'missed'}; largest RSS per mode: ${Object.entries(
      report.rss_mb,
    )
      .map(([mode, mb]) => `${mode} ${mb} MB`)
      .join(', ')}`,
  ].join('\n');
}
