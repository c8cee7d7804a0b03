import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatDialogueTable,
  median,
  medianRatios,
  roundRatios,
  type DialogueBenchReport,
  type DialogueRound,
  type DialogueSide,
} from '../../bench/tick/dialogue.js';
import type { RunResult } from '../../bench/tick/run.js';

function run(server: string, mode: RunResult['mode'], ticks: number, cpu: number, p99: number): RunResult {
  return {
    server,
    encoding: 'json',
    mode,
    connections: mode === 'max' ? 50 : 13,
    ticks_per_s: ticks,
    p50_us: 100,
    p99_us: p99,
    p999_us: p99 * 2,
    max_us: p99 * 3,
    errors: 0,
    rss_mb: 110,
    cpu_us_per_tick: cpu,
  };
}

function side(server: string, ticks: number, cpu: number, p99: number): DialogueSide {
  return { max: run(server, 'max', ticks, cpu, 2000), fixed: run(server, 'fixed-rate', 5000, cpu * 1.5, p99) };
}

function round(n: number, off: DialogueSide, on: DialogueSide): DialogueRound {
  return { round: n, first: n % 2 === 1 ? 'off' : 'on', off, on, ratios: roundRatios(off, on) };
}

test('bench tick --dialogue: per-round ratios, and a verdict one disturbed round does not decide', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
  const rounds = [
    round(1, side('off', 40000, 22, 600), side('on', 38000, 23, 630)),
    round(2, side('off', 10000, 40, 9000), side('on', 39000, 23, 610)),
    round(3, side('off', 41000, 22, 620), side('on', 39500, 22.9, 640)),
  ];
  assert.deepEqual(rounds[0]!.ratios, { ticks_per_s: 0.95, cpu_us_per_tick: 1.05, p99_at_rate: 1.05 });
  assert.deepEqual(rounds[1]!.ratios, { ticks_per_s: 3.9, cpu_us_per_tick: 0.57, p99_at_rate: 0.07 });
  assert.deepEqual(medianRatios(rounds), { ticks_per_s: 0.96, cpu_us_per_tick: 1.04, p99_at_rate: 1.03 });
  const report: DialogueBenchReport = {
    options: { duration: 4, warmup: 3, rounds: 3, connections: 50, agents: 10000, rate: 5000, serverCpu: '0', clientCpu: '1', wrk: 'wrk', latencyMs: 2000 },
    rounds,
    runs: [rounds[0]!.off.max, rounds[0]!.off.fixed, rounds[0]!.on.max, rounds[0]!.on.fixed],
    dialogue: { linesSpoken: 1, llmRequests: 2, llmErrors: 0, heard: 3, cacheHits: 0, modelRequests: 2 },
    ratios: medianRatios(rounds),
    targets: { within_10pct_throughput: true, within_10pct_p99: true },
  };
  const table = formatDialogueTable(report);
  assert.match(table, /\| 2 \| on \| 10000 \/ 39000 \| 3\.9 \| 40 \/ 23 \| 0\.57 \| 9000 \/ 610 \| 0\.07 \|/);
  assert.match(table, /\| median \| \| \| \*\*0\.96\*\* \| \| \*\*1\.04\*\* \| \| \*\*1\.03\*\* \|/);
  assert.match(table, /median of 3 rounds: throughput 0\.96 \(target ≥ 0\.9: met\), p99 at ~5000\/s 1\.03 \(target ≤ 1\.1: met\), CPU per tick 1\.04/);
});
