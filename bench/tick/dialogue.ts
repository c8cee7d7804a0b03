import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cpuUs,
  medianRun,
  rssMb,
  startServer,
  stopServer,
  toRun,
  wrk,
  writeCorpus,
  type RunResult,
  type ServerSpec,
  type TickBenchOptions,
  type WrkResult,
} from './run.js';

/**
 * `brainstem bench tick --dialogue`: the sidecar inline with and without the dialogue tier,
 * interleaved in the same run, against a scripted OpenAI-compatible model that answers every
 * line in `latencyMs` (2 s). The tier must never make a tick wait, so tick p99, throughput
 * and server CPU per tick should stay within 10% of the plain sidecar. The dialogue plugin is
 * a child process of the server: its CPU is not in the server's CPU per tick (it is off the
 * tick path by design) and is reported apart.
 *
 * The machine is shared, and a neighbour's burst of a few seconds is enough to decide a
 * comparison of two runs taken one after the other. So each round starts both servers (both
 * on the server's core; only one is driven at a time), warms both up the same way, then
 * alternates 1-second wrk slices between them (off, on, on, off, …) at full load and then at
 * the fixed rate: a disturbance lands on both sides. A side's figures for a round are its
 * slices together (ticks/s from all its requests; CPU per tick from its process's CPU over
 * the whole phase, so work it does between its own slices is counted; p50/p99/p99.9 the
 * median of its slices'). The verdict is the median of the per-round ratios.
 */

/** One side of one round: its full-load slices and its fixed-rate slices, each pooled into one result. */
export interface DialogueSide {
  max: RunResult;
  fixed: RunResult;
}

export interface DialogueRatios {
  /** ticks/s at full load, with / without. */
  ticks_per_s: number;
  /** Server CPU µs per tick at full load, with / without. */
  cpu_us_per_tick: number;
  /** p99 at the fixed rate (~`rate`/s offered), with / without. */
  p99_at_rate: number;
}

export interface DialogueRound {
  round: number;
  /** Which server this round measured first. */
  first: 'off' | 'on';
  off: DialogueSide;
  on: DialogueSide;
  ratios: DialogueRatios;
}

export interface DialogueBenchReport {
  options: TickBenchOptions & { latencyMs: number };
  rounds: DialogueRound[];
  /** Per server and load, the median run over the rounds (by ticks/s at full load, by p99 at the fixed rate); RSS is the largest seen. */
  runs: RunResult[];
  /** What the dialogue server's tier did over the whole run (from its telemetry drain at exit). */
  dialogue: { linesSpoken: number; llmRequests: number; llmErrors: number; heard: number; cacheHits: number; modelRequests: number };
  /** Medians of the per-round ratios: what the targets are judged on. */
  ratios: DialogueRatios;
  targets: { within_10pct_throughput: boolean; within_10pct_p99: boolean };
}

const PLAIN: ServerSpec = { label: 'sidecar inline', kind: 'sidecar', workers: 0 };
const DIALOGUE: ServerSpec = { label: 'sidecar inline + dialogue', kind: 'sidecar-dialogue', workers: 0 };

interface Telemetry {
  linesSpoken: number;
  dialogue: { llmRequests: number; llmErrors: number; heard: number; cacheHits: number } | null;
}

/** A server under test, started for one round. */
interface Started {
  spec: ServerSpec;
  pid: number;
  port: number;
  /** Stops it; resolves with the telemetry it printed on the way out (sidecar kinds). */
  stop: () => Promise<Telemetry | null>;
}

async function start(spec: ServerSpec, cpu: string, baseUrl: string): Promise<Started> {
  const { child, port, lines } = await startServer(spec, cpu, { BENCH_LLM_BASE_URL: baseUrl });
  let telemetry: Telemetry | null = null;
  lines.on('line', (line) => {
    const parsed = JSON.parse(line) as { telemetry?: Telemetry };
    if (parsed.telemetry) telemetry = parsed.telemetry;
  });
  return {
    spec,
    pid: child.pid!,
    port,
    stop: async () => {
      await stopServer(child);
      return telemetry;
    },
  };
}

/** One side's slices of a phase as one result: rates from the sums, percentiles the median of the slices'. */
function pooled(s: Started, mode: RunResult['mode'], connections: number, slices: readonly WrkResult[], cpuUsTotal: number): RunResult {
  const sum = (f: (w: WrkResult) => number): number => slices.reduce((n, w) => n + f(w), 0);
  const merged: WrkResult = {
    requests: sum((w) => w.requests),
    duration_us: sum((w) => w.duration_us),
    errors: sum((w) => w.errors),
    non2xx: sum((w) => w.non2xx),
    p50_us: Math.round(median(slices.map((w) => w.p50_us))),
    p99_us: Math.round(median(slices.map((w) => w.p99_us))),
    p999_us: Math.round(median(slices.map((w) => w.p999_us))),
    max_us: Math.max(...slices.map((w) => w.max_us)),
  };
  return toRun(s.spec, 'json', mode, connections, { w: merged, cpu: cpuUsTotal }, rssMb(s.pid));
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const ratioOf = (on: number, off: number): number => (off > 0 ? round2(on / off) : 0);

/** Median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function roundRatios(off: DialogueSide, on: DialogueSide): DialogueRatios {
  return {
    ticks_per_s: ratioOf(on.max.ticks_per_s, off.max.ticks_per_s),
    cpu_us_per_tick: ratioOf(on.max.cpu_us_per_tick, off.max.cpu_us_per_tick),
    p99_at_rate: ratioOf(on.fixed.p99_us, off.fixed.p99_us),
  };
}

export function medianRatios(rounds: readonly DialogueRound[]): DialogueRatios {
  const of = (k: keyof DialogueRatios): number => round2(median(rounds.map((r) => r.ratios[k])));
  return { ticks_per_s: of('ticks_per_s'), cpu_us_per_tick: of('cpu_us_per_tick'), p99_at_rate: of('p99_at_rate') };
}

export async function runDialogueBench(opts: TickBenchOptions, latencyMs: number, progress: (line: string) => void): Promise<DialogueBenchReport> {
  const model = spawn(process.execPath, [fileURLToPath(new URL('./fake-model.js', import.meta.url)), String(latencyMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const modelLines = createInterface({ input: model.stdout! });
  const [first] = (await once(modelLines, 'line')) as [string];
  const fake = { baseUrl: (JSON.parse(first) as { baseUrl: string }).baseUrl, chats: 0 };
  modelLines.on('line', (line) => {
    const m = JSON.parse(line) as { chats?: number };
    if (m.chats !== undefined) fake.chats = m.chats;
  });
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-dialogue-'));
  const rounds: DialogueRound[] = [];
  const totals = { linesSpoken: 0, llmRequests: 0, llmErrors: 0, heard: 0, cacheHits: 0 };
  // The warm-up also starts the dialogue plugin (on the first line asked): at least 3 s so the
  // plugin is up and lines flow while measuring; the plain server gets the same, so neither
  // side is measured less warmed up than the other.
  const warmup = Math.max(3, opts.warmup);
  const delayMs = 2;
  const fixedConns = Math.max(1, Math.round((opts.rate * (delayMs + 0.5)) / 1000));
  const absorb = (t: Telemetry | null): void => {
    if (!t?.dialogue) return;
    totals.linesSpoken += t.linesSpoken;
    totals.llmRequests += t.dialogue.llmRequests;
    totals.llmErrors += t.dialogue.llmErrors;
    totals.heard += t.dialogue.heard;
    totals.cacheHits += t.dialogue.cacheHits;
  };
  try {
    const corpus = writeCorpus(dir, opts.agents).json;
    for (let round = 1; round <= opts.rounds; round++) {
      // Alternate which side goes first each round (and within a round, slice pair by pair).
      const first = round % 2 === 1 ? 'off' : 'on';
      const started: Started[] = [];
      try {
        for (const spec of first === 'off' ? [PLAIN, DIALOGUE] : [DIALOGUE, PLAIN]) started.push(await start(spec, opts.serverCpu, fake.baseUrl));
        const [a, b] = started as [Started, Started];
        // Warmed up in alternating 1-second slices too, so both end their warm-up equally recently.
        for (let i = 0; i < warmup; i++) for (const s of i % 2 === 0 ? [a, b] : [b, a]) wrk(opts, s.port, corpus, 'json', 1, opts.connections);
        for (const s of started) if (s.spec === DIALOGUE) repinChildren(s.pid, opts.clientCpu);
        const phase = (mode: RunResult['mode'], connections: number, delay?: number): [RunResult, RunResult] => {
          const slices = new Map<Started, WrkResult[]>([
            [a, []],
            [b, []],
          ]);
          const cpu0 = [cpuUs(a.pid), cpuUs(b.pid)];
          for (let i = 0; i < opts.duration; i++) {
            for (const s of i % 2 === 0 ? [a, b] : [b, a]) slices.get(s)!.push(wrk(opts, s.port, corpus, 'json', 1, connections, delay));
          }
          const cpu = [cpuUs(a.pid) - cpu0[0]!, cpuUs(b.pid) - cpu0[1]!];
          return [pooled(a, mode, connections, slices.get(a)!, cpu[0]!), pooled(b, mode, connections, slices.get(b)!, cpu[1]!)];
        };
        const [maxA, maxB] = phase('max', opts.connections);
        for (const r of [maxA, maxB]) progress(`round ${round}: ${r.server}: ${r.ticks_per_s} ticks/s, p99 ${r.p99_us} µs, ${r.cpu_us_per_tick} µs CPU/tick`);
        const [fixedA, fixedB] = phase('fixed-rate', fixedConns, delayMs);
        for (const r of [fixedA, fixedB]) progress(`round ${round}: ${r.server} at ~${opts.rate}/s: ${r.ticks_per_s} ticks/s, p99 ${r.p99_us} µs`);
        const sideA: DialogueSide = { max: maxA, fixed: fixedA };
        const sideB: DialogueSide = { max: maxB, fixed: fixedB };
        const [off, on] = a.spec === PLAIN ? [sideA, sideB] : [sideB, sideA];
        const ratios = roundRatios(off, on);
        rounds.push({ round, first, off, on, ratios });
        progress(
          `round ${round}: with / without: throughput ${ratios.ticks_per_s}, CPU per tick ${ratios.cpu_us_per_tick}, p99 at ~${opts.rate}/s ${ratios.p99_at_rate}`,
        );
      } finally {
        for (const s of started) absorb(await s.stop());
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const exited = once(model, 'exit');
    model.kill('SIGTERM');
    await exited;
  }
  const runs = (['off', 'on'] as const).flatMap((side) => (['max', 'fixed'] as const).map((load) => medianRun(rounds.map((r) => r[side][load]))));
  const ratios = medianRatios(rounds);
  return {
    options: { ...opts, latencyMs },
    rounds,
    runs,
    dialogue: { ...totals, modelRequests: fake.chats },
    ratios,
    targets: { within_10pct_throughput: ratios.ticks_per_s >= 0.9, within_10pct_p99: ratios.p99_at_rate <= 1.1 },
  };
}

/**
 * Moves the server's child processes (the dialogue plugin, started under the server's
 * taskset) to the client's CPUs: deployed, the plugin runs beside the sidecar on another core,
 * not on the one core this benchmark gives the server.
 */
function repinChildren(pid: number, cpus: string): void {
  const seen = new Set<number>();
  const walk = (p: number): void => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      let kids = '';
      try {
        kids = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const k of kids.split(' ').filter(Boolean).map(Number)) {
        if (seen.has(k)) continue;
        seen.add(k);
        spawnSync('taskset', ['-a', '-p', '-c', cpus, String(k)], { stdio: 'ignore' });
        walk(k);
      }
    }
  };
  walk(pid);
}

export function formatDialogueTable(report: DialogueBenchReport): string {
  const rate = report.options.rate;
  const head = '| server | load | ticks/s | p50 µs | p99 µs | p99.9 µs | CPU µs/tick | errors | RSS MB |';
  const rule = '|---|---|--:|--:|--:|--:|--:|--:|--:|';
  const rows = report.runs.map(
    (r) =>
      `| ${r.server} | ${r.mode === 'max' ? `max, ${r.connections} conns` : `~${rate}/s offered, ${r.connections} conns`} | ${r.ticks_per_s} | ${r.p50_us} | ${r.p99_us} | ${r.p999_us} | ${r.cpu_us_per_tick} | ${r.errors} | ${r.rss_mb} |`,
  );
  const perRound = [
    `| round | first | ticks/s off / on | ratio | CPU µs/tick off / on | ratio | p99 µs at ~${rate}/s off / on | ratio |`,
    '|--:|---|--:|--:|--:|--:|--:|--:|',
    ...report.rounds.map(
      (r) =>
        `| ${r.round} | ${r.first} | ${r.off.max.ticks_per_s} / ${r.on.max.ticks_per_s} | ${r.ratios.ticks_per_s} | ${r.off.max.cpu_us_per_tick} / ${r.on.max.cpu_us_per_tick} | ${r.ratios.cpu_us_per_tick} | ${r.off.fixed.p99_us} / ${r.on.fixed.p99_us} | ${r.ratios.p99_at_rate} |`,
    ),
    `| median | | | **${report.ratios.ticks_per_s}** | | **${report.ratios.cpu_us_per_tick}** | | **${report.ratios.p99_at_rate}** |`,
  ];
  const d = report.dialogue;
  return [
    head,
    rule,
    ...rows,
    '',
    ...perRound,
    '',
    `model answering in ${report.options.latencyMs} ms: ${d.modelRequests} requests received, ${d.llmRequests} asked by the tier, ${d.llmErrors} failed, ${d.linesSpoken} lines spoken, ${d.cacheHits} cache hits, ${d.heard} heard lines`,
    `with / without dialogue, median of ${report.rounds.length} rounds: throughput ${report.ratios.ticks_per_s} (target ≥ 0.9: ${report.targets.within_10pct_throughput ? 'met' : 'missed'}), p99 at ~${rate}/s ${report.ratios.p99_at_rate} (target ≤ 1.1: ${report.targets.within_10pct_p99 ? 'met' : 'missed'}), CPU per tick ${report.ratios.cpu_us_per_tick}`,
  ].join('\n');
}
