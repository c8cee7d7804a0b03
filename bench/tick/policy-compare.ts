import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { maxRun, medianRun, startServer, stopServer, writeCorpus, type RunResult, type ServerSpec, type TickBenchOptions } from './run.js';

/**
 * `brainstem bench tick --policy compare`: the sidecar inline (JSON, full load) with every
 * bundle policy on and with every policy off, in alternating order each round of the same
 * run, beside the usual baselines (bare uWS and the node:http handler, JSON and MessagePack).
 * Issue #3's target: with every subsystem on, throughput stays at least 60% of the purely
 * reactive figure. It is given from ticks/s and, steadier on a shared machine, from server
 * CPU time per tick.
 */

export interface PolicyCompareReport {
  options: TickBenchOptions;
  machine: { cpus: number; node: string };
  runs: RunResult[];
  /** all-on over none, from the median runs: ticks/s, and CPU per tick (none / all, so higher is better in both). */
  ratios: { ticks_per_s: number; cpu_us_per_tick: number };
  targets: { all_vs_none_throughput: boolean; all_vs_none_cpu: boolean };
}

export const POLICY_ALL: ServerSpec = { label: 'sidecar inline, every policy on', kind: 'sidecar', workers: 0, policy: 'all' };
export const POLICY_NONE: ServerSpec = { label: 'sidecar inline, every policy off', kind: 'sidecar', workers: 0, policy: 'none' };

const BASELINES: ServerSpec[] = [
  { label: 'bare uWS (constant reply)', kind: 'uws-bare', workers: 0 },
  { label: 'node:http + tick handler', kind: 'node-http', workers: 0 },
];

/** The order of one round: baselines first, then the two policies, swapped every other round. */
export function roundOrder(round: number): Array<{ spec: ServerSpec; encoding: 'json' | 'msgpack' }> {
  const base = BASELINES.flatMap((spec) => (['json', 'msgpack'] as const).map((encoding) => ({ spec, encoding })));
  const pair = round % 2 === 1 ? [POLICY_ALL, POLICY_NONE] : [POLICY_NONE, POLICY_ALL];
  return [...base, ...pair.map((spec) => ({ spec, encoding: 'json' as const }))];
}

export async function runPolicyCompare(opts: TickBenchOptions, progress: (line: string) => void): Promise<PolicyCompareReport> {
  if (spawnSync(opts.wrk, ['-v']).error) throw new Error(`wrk not found at ${opts.wrk} (Debian: apt-get install wrk)`);
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-policy-'));
  const samples = new Map<string, RunResult[]>();
  try {
    const corpus = writeCorpus(dir, opts.agents);
    for (let round = 1; round <= opts.rounds; round++) {
      for (const { spec, encoding } of roundOrder(round)) {
        const { child, port } = await startServer(spec, opts.serverCpu);
        try {
          const run = maxRun(opts, spec, child.pid!, port, corpus[encoding], encoding);
          const key = `${run.server}|${run.encoding}`;
          samples.set(key, [...(samples.get(key) ?? []), run]);
          progress(`round ${round}: ${spec.label} ${encoding}: ${run.ticks_per_s} ticks/s, ${run.cpu_us_per_tick} µs CPU/tick, p99 ${run.p99_us} µs`);
        } finally {
          await stopServer(child);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const runs = [...samples.values()].map(medianRun);
  const row = (label: string): RunResult | undefined => runs.find((r) => r.server === label);
  const all = row(POLICY_ALL.label);
  const none = row(POLICY_NONE.label);
  const round2 = (x: number): number => Math.round(x * 100) / 100;
  const ratios = {
    ticks_per_s: all && none && none.ticks_per_s > 0 ? round2(all.ticks_per_s / none.ticks_per_s) : 0,
    cpu_us_per_tick: all && none && all.cpu_us_per_tick > 0 ? round2(none.cpu_us_per_tick / all.cpu_us_per_tick) : 0,
  };
  return {
    options: { ...opts },
    machine: { cpus: cpus().length, node: process.version },
    runs,
    ratios,
    targets: { all_vs_none_throughput: ratios.ticks_per_s >= 0.6, all_vs_none_cpu: ratios.cpu_us_per_tick >= 0.6 },
  };
}

export function formatPolicyCompare(report: PolicyCompareReport): string {
  const head = '| server | encoding | ticks/s | CPU µs/tick | p50 µs | p99 µs | errors | RSS MB |';
  const rule = '|---|---|--:|--:|--:|--:|--:|--:|';
  const rows = report.runs.map(
    (r) => `| ${r.server} | ${r.encoding} | ${r.ticks_per_s} | ${r.cpu_us_per_tick} | ${r.p50_us} | ${r.p99_us} | ${r.errors} | ${r.rss_mb} |`,
  );
  const met = (ok: boolean): string => (ok ? 'met' : 'missed');
  return [
    head,
    rule,
    ...rows,
    '',
    `every policy on vs every policy off (inline JSON), ticks/s: ${report.ratios.ticks_per_s} (target ≥ 0.6: ${met(report.targets.all_vs_none_throughput)})`,
    `the same from server CPU per tick (off / on): ${report.ratios.cpu_us_per_tick} (target ≥ 0.6: ${met(report.targets.all_vs_none_cpu)})`,
    `medians of ${report.options.rounds} rounds, ${report.options.agents} agents, ${report.options.connections} connections`,
  ].join('\n');
}
