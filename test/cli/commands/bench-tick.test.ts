import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { at100Of, pairedOf, targetsOf, type BatchRow, type PairedSlice } from '../../../bench/tick/batch.js';
import { batchSizesOf, tickPolicyOf } from '../../../src/cli/commands/bench-tick.js';
import { MAX_BATCH_TICKS } from '../../../src/sidecar/tick/tick-array.js';
import { CliError } from '../../../src/cli/util.js';
import { cli } from '../../helpers/paths.js';

test('bench tick --policy: accepted values, refused values and combinations, before any load is generated', async () => {
  assert.equal(await tickPolicyOf({}), undefined);
  for (const p of ['all', 'none', 'compare'] as const) assert.equal(await tickPolicyOf({ policy: p }), p);
  await assert.rejects(tickPolicyOf({ policy: 'some' }), (e: unknown) => e instanceof CliError && /--policy must be one of all, none, compare/.test(e.message));
  await assert.rejects(tickPolicyOf({ policy: 'all', micro: true }), /--policy cannot be combined with --micro/);
  await assert.rejects(tickPolicyOf({ policy: 'compare', dialogue: true }), /--policy cannot be combined with --dialogue/);
  const help = spawnSync(process.execPath, [cli, 'bench', 'tick', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--policy <all\|none\|compare>/);
  const bad = spawnSync(process.execPath, [cli, 'bench', 'tick', '--policy', 'most', '--wrk', '/nonexistent/wrk'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--policy must be one of all, none, compare, got "most"/);
});

test('bench tick --batch: sizes from 1 to the /ticks cap, refused combinations, before any load is generated', () => {
  assert.deepEqual(batchSizesOf('1,10, 100'), [1, 10, 100]);
  assert.throws(() => batchSizesOf('0'), /--batch must be/);
  assert.throws(() => batchSizesOf(`${MAX_BATCH_TICKS + 1}`), /--batch must be/);
  assert.throws(() => batchSizesOf('x'), /--batch must be/);
  const help = spawnSync(process.execPath, [cli, 'bench', 'tick', '--help'], { encoding: 'utf8' });
  assert.match(help.stdout, /--batch \[sizes\]/);
  const bad = spawnSync(process.execPath, [cli, 'bench', 'tick', '--batch', '10', '--micro', '--wrk', '/nonexistent/wrk'], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--batch cannot be combined with --micro/);
  const noWrk = spawnSync(process.execPath, [cli, 'bench', 'tick', '--batch', '--wrk', '/nonexistent/wrk'], { encoding: 'utf8' });
  assert.equal(noWrk.status, 1);
  assert.match(noWrk.stderr, /wrk not found/);
});

test('bench tick --batch: the ratios at 100 are worked out within each round, then the median of the rounds', () => {
  const row = (route: BatchRow['route'], batch: number, load: string, decisions: number, cpu: number, p99: number | null = null): BatchRow => ({
    route,
    batch,
    load,
    requests_per_s: decisions / batch,
    decisions_per_s: decisions,
    p50_us: null,
    p99_us: p99,
    cpu_us_per_decision: cpu,
    errors: 0,
  });
  const round = (brain: number, tick: number, hundred: number, p99: number): BatchRow[] => [
    row('Brain.tick in process', 1, 'loop', brain, 1e6 / brain),
    row('/tick', 1, 'max, 50 conns', tick, 1e6 / tick),
    row('/ticks', 100, 'max, 8 conns', hundred, 1e6 / hundred),
    row('/ticks', 100, '~50 batches/s offered, 1 conn', 4000, 30, p99),
  ];
  // A quiet round and a loaded one: each round's own ratio is 0.5, whatever the load.
  const at100 = at100Of([round(200_000, 20_000, 100_000, 1500), round(100_000, 10_000, 50_000, 2500), round(150_000, 15_000, 75_000, 3000)]);
  assert.deepEqual(at100, { vs_tick: 5, vs_brain: 0.5, cpu_vs_tick: 5, cpu_vs_brain: 0.5, fixed_p99_us: 2500 });
  // A round without its batch row is left out; an even count takes the mean of the middle two.
  const two = at100Of([round(200_000, 20_000, 100_000, 1000), round(100_000, 10_000, 40_000, 2000), round(1, 1, 1, 1).slice(0, 2)]);
  assert.equal(two?.vs_brain, 0.45);
  assert.equal(two?.fixed_p99_us, 1500);
  assert.equal(at100Of([]), null);
});

test('bench tick --batch: the paired slices give the median of the sets, by decisions/s and by CPU, against the brain and against /tick', () => {
  const pair = (brain: number, ticks: number, tick: number): PairedSlice => ({
    brain_decisions_per_s: brain,
    brain_cpu_us_per_decision: 1e6 / brain,
    ticks_decisions_per_s: ticks,
    ticks_cpu_us_per_decision: 1e6 / ticks,
    tick_decisions_per_s: tick,
    tick_cpu_us_per_decision: 1e6 / tick,
  });
  // The host's speed swings between sets; each set's own ratio is what counts.
  assert.deepEqual(pairedOf([pair(300_000, 120_000, 30_000), pair(150_000, 60_000, 20_000), pair(200_000, 70_000, 14_000), pair(100_000, 45_000, 9_000)]), {
    pairs: 4,
    vs_brain: 0.4,
    cpu_vs_brain: 0.4,
    vs_tick: 4.5,
    cpu_vs_tick: 4.5,
  });
  assert.equal(pairedOf([]), null);
});

test('bench tick --batch: the targets are judged by the paired slices when there are any, else by the rounds', () => {
  const at100 = { vs_tick: 4.4, vs_brain: 0.48, cpu_vs_tick: 4.3, cpu_vs_brain: 0.47, fixed_p99_us: 1900 };
  // The rounds flatter the batch (a cold in-process brain); the paired sets decide.
  assert.deepEqual(targetsOf(at100, { pairs: 8, vs_brain: 0.33, cpu_vs_brain: 0.33, vs_tick: 2.8, cpu_vs_tick: 2.7 }), {
    four_times_tick: false,
    half_of_brain: false,
    p99_under_2ms_at_50_per_s: true,
  });
  assert.deepEqual(targetsOf({ ...at100, vs_brain: 0.52, fixed_p99_us: null }, null), {
    four_times_tick: true,
    half_of_brain: true,
    p99_under_2ms_at_50_per_s: false,
  });
  assert.equal(targetsOf(null, null), null);
});
