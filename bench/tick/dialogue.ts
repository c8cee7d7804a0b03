import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measured, rssMb, startServer, stopServer, toRun, wrk, writeCorpus, type RunResult, type ServerSpec, type TickBenchOptions } from './run.js';

/**
 * `brainstem bench tick --dialogue`: the sidecar inline with and without the dialogue tier,
 * interleaved in the same run, against a scripted OpenAI-compatible model that answers every
 * line in `latencyMs` (2 s). The tier must never make a tick wait, so tick p99, throughput
 * and server CPU per tick should stay within 10% of the plain sidecar. The dialogue plugin is
 * a child process of the server: its CPU is not in the server's CPU per tick (it is off the
 * tick path by design) and is reported apart.
 */

export interface DialogueBenchReport {
  options: TickBenchOptions & { latencyMs: number };
  runs: RunResult[];
  /** What the dialogue server's tier did over the whole run (from its telemetry drain at exit). */
  dialogue: { linesSpoken: number; llmRequests: number; llmErrors: number; heard: number; cacheHits: number; modelRequests: number };
  /** with dialogue / without, from the median runs: throughput, fixed-rate p99, CPU per tick. */
  ratios: { ticks_per_s: number; p99_at_rate: number; cpu_us_per_tick: number };
  targets: { within_10pct_throughput: boolean; within_10pct_p99: boolean };
}

const PLAIN: ServerSpec = { label: 'sidecar inline', kind: 'sidecar', workers: 0 };
const DIALOGUE: ServerSpec = { label: 'sidecar inline + dialogue', kind: 'sidecar-dialogue', workers: 0 };

interface Telemetry {
  linesSpoken: number;
  dialogue: { llmRequests: number; llmErrors: number; heard: number; cacheHits: number } | null;
}

export async function runDialogueBench(opts: TickBenchOptions, latencyMs: number, progress: (line: string) => void): Promise<DialogueBenchReport> {
  const model = spawn(process.execPath, [fileURLToPath(new URL('./fake-model.js', import.meta.url)), String(latencyMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const modelLines = createInterface({ input: model.stdout! });
  const [first] = (await once(modelLines, 'line')) as [string];
  const fake = { baseUrl: (JSON.parse(first) as { baseUrl: string }).baseUrl, chats: 0 };
  modelLines.on('line', (line) => {
    const m = JSON.parse(line) as { chats?: number };
    if (m.chats !== undefined) fake.chats = m.chats;
  });
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-dialogue-'));
  const samples = new Map<string, RunResult[]>();
  const totals = { linesSpoken: 0, llmRequests: 0, llmErrors: 0, heard: 0, cacheHits: 0 };
  try {
    const corpus = writeCorpus(dir, opts.agents).json;
    for (let round = 1; round <= opts.rounds; round++) {
      // Alternate the order each round so neither side always runs on a warmer machine.
      for (const spec of round % 2 === 1 ? [PLAIN, DIALOGUE] : [DIALOGUE, PLAIN]) {
        const { child, port, lines } = await startServer(spec, opts.serverCpu, { BENCH_LLM_BASE_URL: fake.baseUrl });
        let telemetry: Telemetry | null = null;
        lines.on('line', (line) => {
          const parsed = JSON.parse(line) as { telemetry?: Telemetry };
          if (parsed.telemetry) telemetry = parsed.telemetry;
        });
        const keep = (run: RunResult): void => {
          const key = `${run.server}|${run.mode}`;
          samples.set(key, [...(samples.get(key) ?? []), run]);
        };
        try {
          // The warm-up also starts the dialogue plugin (on the first line asked); it gets at
          // least 3 s so the plugin is up and lines flow while measuring.
          wrk(opts, port, corpus, 'json', spec === DIALOGUE ? Math.max(3, opts.warmup) : opts.warmup || 1, opts.connections);
          if (spec === DIALOGUE) repinChildren(child.pid!, opts.clientCpu);
          const max = toRun(spec, 'json', 'max', opts.connections, measured(child.pid!, () => wrk(opts, port, corpus, 'json', opts.duration, opts.connections)), rssMb(child.pid!));
          keep(max);
          progress(`round ${round}: ${spec.label}: ${max.ticks_per_s} ticks/s, p99 ${max.p99_us} µs, ${max.cpu_us_per_tick} µs CPU/tick`);
          const delayMs = 2;
          const conns = Math.max(1, Math.round((opts.rate * (delayMs + 0.5)) / 1000));
          const fixed = toRun(spec, 'json', 'fixed-rate', conns, measured(child.pid!, () => wrk(opts, port, corpus, 'json', opts.duration, conns, delayMs)), rssMb(child.pid!));
          keep(fixed);
          progress(`round ${round}: ${spec.label} at ~${opts.rate}/s: ${fixed.ticks_per_s} ticks/s, p99 ${fixed.p99_us} µs`);
        } finally {
          await stopServer(child);
        }
        const t = telemetry as Telemetry | null;
        if (spec === DIALOGUE && t?.dialogue) {
          totals.linesSpoken += t.linesSpoken;
          totals.llmRequests += t.dialogue.llmRequests;
          totals.llmErrors += t.dialogue.llmErrors;
          totals.heard += t.dialogue.heard;
          totals.cacheHits += t.dialogue.cacheHits;
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const exited = once(model, 'exit');
    model.kill('SIGTERM');
    await exited;
  }
  const runs = [...samples.values()].map((list) => {
    const sorted = [...list].sort((a, b) => (a.mode === 'max' ? a.ticks_per_s - b.ticks_per_s : a.p99_us - b.p99_us));
    return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, rss_mb: Math.max(...list.map((r) => r.rss_mb)) };
  });
  const row = (label: string, mode: RunResult['mode']): RunResult | undefined => runs.find((r) => r.server === label && r.mode === mode);
  const ratio = (f: (r: RunResult) => number, mode: RunResult['mode']): number => {
    const a = row(DIALOGUE.label, mode);
    const b = row(PLAIN.label, mode);
    return a && b && f(b) > 0 ? Math.round((f(a) / f(b)) * 100) / 100 : 0;
  };
  const ratios = {
    ticks_per_s: ratio((r) => r.ticks_per_s, 'max'),
    p99_at_rate: ratio((r) => r.p99_us, 'fixed-rate'),
    cpu_us_per_tick: ratio((r) => r.cpu_us_per_tick, 'max'),
  };
  return {
    options: { ...opts, latencyMs },
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
  const head = '| server | load | ticks/s | p50 µs | p99 µs | p99.9 µs | CPU µs/tick | errors | RSS MB |';
  const rule = '|---|---|--:|--:|--:|--:|--:|--:|--:|';
  const rows = report.runs.map(
    (r) => `| ${r.server} | ${r.mode === 'max' ? `max, ${r.connections} conns` : `~${report.options.rate}/s offered, ${r.connections} conns`} | ${r.ticks_per_s} | ${r.p50_us} | ${r.p99_us} | ${r.p999_us} | ${r.cpu_us_per_tick} | ${r.errors} | ${r.rss_mb} |`,
  );
  const d = report.dialogue;
  return [
    head,
    rule,
    ...rows,
    '',
    `model answering in ${report.options.latencyMs} ms: ${d.modelRequests} requests received, ${d.llmRequests} asked by the tier, ${d.llmErrors} failed, ${d.linesSpoken} lines spoken, ${d.cacheHits} cache hits, ${d.heard} heard lines`,
    `with / without dialogue: throughput ${report.ratios.ticks_per_s} (target ≥ 0.9: ${report.targets.within_10pct_throughput ? 'met' : 'missed'}), p99 at ~${report.options.rate}/s ${report.ratios.p99_at_rate} (target ≤ 1.1: ${report.targets.within_10pct_p99 ? 'met' : 'missed'}), CPU per tick ${report.ratios.cpu_us_per_tick}`,
  ].join('\n');
}
