import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { maxRun, measured, rssMb, startServer, stopServer, wrk, writeCorpus, type ServerSpec, type TickBenchOptions, type WrkResult } from './run.js';
import type { PipelineTimes } from './batch-pipeline.js';
import type { BrainRate } from './brain-rate.js';
import { generateTicks } from './scenarios.js';

/** Batch sizes `bench tick --batch` measures when none are given. */
export const DEFAULT_BATCH_SIZES = [1, 10, 100, 500] as const;
/** The fixed-rate run: batches of this many agents at this many batches per second (the p99 target). */
export const FIXED_BATCH = 100;
export const FIXED_BATCHES_PER_S = 50;
/** Seconds of /tick load a freshly started sidecar gets before the --warmup of the first measured run. */
const FRESH_SERVER_WARMUP_S = 3;
const BARE_SPEC: ServerSpec = { label: 'bare uWS (constant reply)', kind: 'uws-bare', workers: 0 };
/** Connections of the maximum-throughput batch runs: a few batches in flight keep the server busy. */
const BATCH_CONNECTIONS = 8;

export interface BatchRow {
  /**
   * `/tick` (one agent per request), `/ticks` with N agents per request, the brain in process,
   * the /ticks path in process without the transport (read, decide, write a batch), or a bare
   * uWebSockets.js server taking the same batch bodies and answering a constant reply of a real
   * one's size (the transport alone: what no reader or brain can save).
   */
  route: '/tick' | '/ticks' | 'Brain.tick in process' | '/ticks path in process' | 'bare uWS /ticks';
  batch: number;
  load: string;
  requests_per_s: number;
  decisions_per_s: number;
  p50_us: number | null;
  p99_us: number | null;
  cpu_us_per_decision: number | null;
  errors: number;
}

export interface BatchBenchReport {
  options: TickBenchOptions & { sizes: number[] };
  rows: BatchRow[];
  /**
   * At a batch of 100: agent throughput against per-request /tick and against the brain in
   * process, by decisions/s and by CPU per decision (the figure that holds on a loaded machine),
   * each the median of the rounds' own ratios; the p99 at 50 batches/s the median of the rounds'.
   */
  at100: { vs_tick: number; vs_brain: number; cpu_vs_tick: number; cpu_vs_brain: number; fixed_p99_us: number | null } | null;
  targets: { four_times_tick: boolean; half_of_brain: boolean; p99_under_2ms_at_50_per_s: boolean } | null;
  /**
   * The batch of 100 against the brain and against per-request /tick in paired slices (see
   * pairedSlices): the median of the pairs' ratios by decisions/s and by CPU; null when no
   * batch of 100 was measured.
   */
  paired: { pairs: number; vs_brain: number; cpu_vs_brain: number; vs_tick: number; cpu_vs_tick: number } | null;
}

/**
 * One set of adjacent slices: the brain in process, the sidecar's /ticks × 100 and its
 * per-request /tick (in that order or the reverse).
 */
export interface PairedSlice {
  brain_decisions_per_s: number;
  brain_cpu_us_per_decision: number;
  ticks_decisions_per_s: number;
  ticks_cpu_us_per_decision: number;
  tick_decisions_per_s: number;
  tick_cpu_us_per_decision: number;
}

const BRAIN_RATE = fileURLToPath(new URL('./brain-rate.js', import.meta.url));
const PIPELINE = fileURLToPath(new URL('./batch-pipeline.js', import.meta.url));
/** Batches the in-process /ticks path runs back to back, then as many again spaced like the fixed-rate run. */
const PIPELINE_BATCHES = 150;

/** Batch bodies: consecutive slices of `size` ticks of the corpus, JSON arrays. */
function writeBatches(dir: string, agents: number, size: number): { bodies: string; index: string } {
  const ticks = generateTicks({ agents, count: agents, seed: 7 });
  const parts: Buffer[] = [];
  // Enough bodies that every agent is covered, at least 100 to rotate through.
  const count = Math.max(100, Math.ceil(agents / size));
  for (let k = 0; k < count; k++) {
    const slice = Array.from({ length: size }, (_, j) => ticks[(k * size + j) % ticks.length]);
    parts.push(Buffer.from(JSON.stringify(slice)));
  }
  const bodies = join(dir, `batch-${size}.bin`);
  const index = join(dir, `batch-${size}.idx`);
  writeFileSync(bodies, Buffer.concat(parts));
  writeFileSync(index, `${parts.map((p) => p.length).join('\n')}\n`);
  return { bodies, index };
}

function row(route: BatchRow['route'], batch: number, load: string, w: WrkResult, cpu: number): BatchRow {
  const rps = w.requests / (w.duration_us / 1e6);
  return {
    route,
    batch,
    load,
    requests_per_s: Math.round(rps),
    decisions_per_s: Math.round(rps * batch),
    p50_us: w.p50_us,
    p99_us: w.p99_us,
    cpu_us_per_decision: w.requests > 0 ? Math.round((cpu / (w.requests * batch)) * 100) / 100 : null,
    errors: w.errors + w.non2xx,
  };
}

/**
 * `brainstem bench tick --batch`: agent decisions per second and p99 per request of POST
 * /ticks at each batch size, against per-request /tick on the same sidecar (inline, JSON) and
 * Brain.tick in process, all in the same run; each row is the median of the rounds.
 */
export async function runBatchBench(opts: TickBenchOptions, sizes: readonly number[], progress: (line: string) => void): Promise<BatchBenchReport> {
  if (spawnSync(opts.wrk, ['-v']).error) throw new Error(`wrk not found at ${opts.wrk} (Debian: apt-get install wrk)`);
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-bench-batch-'));
  const samples = new Map<string, BatchRow[]>();
  // Each round's own rows too: its ratios compare runs minutes apart at most.
  const rounds: BatchRow[][] = [];
  const pairs: PairedSlice[] = [];
  const keep = (r: BatchRow): void => {
    const key = `${r.route}|${r.batch}|${r.load}`;
    samples.set(key, [...(samples.get(key) ?? []), r]);
    rounds[rounds.length - 1]!.push(r);
  };
  const spec: ServerSpec = { label: 'sidecar inline', kind: 'sidecar', workers: 0 };
  try {
    const single = writeCorpus(dir, opts.agents).json;
    const batches = new Map(sizes.map((n) => [n, writeBatches(dir, opts.agents, n)]));
    const fixed = writeBatches(dir, opts.agents, FIXED_BATCH);
    const hundred = batches.get(PAIRED_BATCH);
    for (let round = 1; round <= opts.rounds; round++) {
      rounds.push([]);
      const brain = spawnSync('taskset', ['-c', opts.serverCpu, process.execPath, BRAIN_RATE, String(opts.agents), String(opts.duration)], {
        encoding: 'utf8',
      });
      if (brain.status !== 0) throw new Error(`the in-process brain run failed: ${brain.stderr}`);
      const { decisions_per_s: rate, cpu_us_per_decision: cpuUs } = JSON.parse(brain.stdout) as { decisions_per_s: number; cpu_us_per_decision: number };
      keep({
        route: 'Brain.tick in process',
        batch: 1,
        load: 'loop',
        requests_per_s: rate,
        decisions_per_s: rate,
        p50_us: null,
        p99_us: null,
        cpu_us_per_decision: cpuUs,
        errors: 0,
      });
      progress(`round ${round}: Brain.tick in process: ${rate} decisions/s`);
      const gapMs = Math.round(1000 / FIXED_BATCHES_PER_S);
      const pipeline = spawnSync(
        'taskset',
        ['-c', opts.serverCpu, process.execPath, PIPELINE, String(opts.agents), String(FIXED_BATCH), String(PIPELINE_BATCHES), String(gapMs)],
        { encoding: 'utf8' },
      );
      if (pipeline.status !== 0) throw new Error(`the in-process /ticks path run failed: ${pipeline.stderr}`);
      const path = JSON.parse(pipeline.stdout) as Record<'back_to_back' | 'spaced', PipelineTimes>;
      for (const [load, t] of [
        ['back to back', path.back_to_back],
        [`one every ${gapMs} ms`, path.spaced],
      ] as const) {
        keep({
          route: '/ticks path in process',
          batch: FIXED_BATCH,
          load,
          requests_per_s: Math.round(t.decisions_per_s / FIXED_BATCH),
          decisions_per_s: t.decisions_per_s,
          p50_us: t.p50_us,
          p99_us: t.p99_us,
          cpu_us_per_decision: t.cpu_us_per_decision,
          errors: 0,
        });
      }
      progress(
        `round ${round}: /ticks path in process: a ${FIXED_BATCH}-tick batch p50 ${path.back_to_back.p50_us} µs back to back, ${path.spaced.p50_us} µs (p99 ${path.spaced.p99_us}) one every ${gapMs} ms`,
      );
      const { child, port } = await startServer(spec, opts.serverCpu);
      try {
        const pid = child.pid!;
        // A fresh sidecar spawns every agent and compiles the tick path in its first seconds:
        // warmed for --warmup alone, its first measured /tick ran 15-20 % slower than the next,
        // which flattered the batch against it.
        wrk(opts, port, single, 'json', FRESH_SERVER_WARMUP_S, opts.connections);
        const t = maxRun(opts, spec, pid, port, single, 'json');
        keep({
          route: '/tick',
          batch: 1,
          load: `max, ${opts.connections} conns`,
          requests_per_s: t.ticks_per_s,
          decisions_per_s: t.ticks_per_s,
          p50_us: t.p50_us,
          p99_us: t.p99_us,
          cpu_us_per_decision: t.cpu_us_per_tick,
          errors: t.errors,
        });
        progress(`round ${round}: /tick: ${t.ticks_per_s} decisions/s, p99 ${t.p99_us} µs`);
        for (const n of sizes) {
          const corpus = batches.get(n)!;
          if (opts.warmup > 0) wrk(opts, port, corpus, 'json', opts.warmup, BATCH_CONNECTIONS, undefined, '/ticks');
          const m = measured(pid, () => wrk(opts, port, corpus, 'json', opts.duration, BATCH_CONNECTIONS, undefined, '/ticks'));
          const r = row('/ticks', n, `max, ${BATCH_CONNECTIONS} conns`, m.w, m.cpu);
          keep(r);
          progress(`round ${round}: /ticks × ${n}: ${r.decisions_per_s} decisions/s, ${r.requests_per_s} requests/s, p99 ${r.p99_us} µs`);
        }
        if (hundred !== undefined) {
          for (const pair of await pairedSlices(opts, pid, port, hundred, single)) {
            pairs.push(pair);
            progress(
              `round ${round}: paired slices: Brain.tick ${pair.brain_decisions_per_s}, /ticks × ${PAIRED_BATCH} ${pair.ticks_decisions_per_s}, /tick ${pair.tick_decisions_per_s} decisions/s`,
            );
          }
        }
        // One connection pausing 1000/rate ms between batches: about the target rate (the
        // round trip adds to the pause, so the achieved rate is a little lower and reported).
        const f = measured(pid, () => wrk(opts, port, fixed, 'json', opts.duration, 1, Math.round(1000 / FIXED_BATCHES_PER_S), '/ticks'));
        const r = row('/ticks', FIXED_BATCH, `~${FIXED_BATCHES_PER_S} batches/s offered, 1 conn`, f.w, f.cpu);
        keep(r);
        progress(`round ${round}: /ticks × ${FIXED_BATCH} at ~${FIXED_BATCHES_PER_S}/s: p99 ${r.p99_us} µs (rss ${rssMb(pid)} MB)`);
      } finally {
        await stopServer(child);
      }
      if (hundred !== undefined) {
        const bare = await startServer(BARE_SPEC, opts.serverCpu);
        try {
          if (opts.warmup > 0) wrk(opts, bare.port, hundred, 'json', opts.warmup, BATCH_CONNECTIONS, undefined, '/ticks');
          const m = measured(bare.child.pid!, () => wrk(opts, bare.port, hundred, 'json', opts.duration, BATCH_CONNECTIONS, undefined, '/ticks'));
          const r = row('bare uWS /ticks', PAIRED_BATCH, `max, ${BATCH_CONNECTIONS} conns`, m.w, m.cpu);
          keep(r);
          progress(`round ${round}: bare uWS /ticks × ${PAIRED_BATCH}: ${r.decisions_per_s} decisions/s, ${r.cpu_us_per_decision} CPU µs per decision`);
        } finally {
          await stopServer(bare.child);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = [...samples.values()].map((list) => [...list].sort((a, b) => a.decisions_per_s - b.decisions_per_s)[Math.floor((list.length - 1) / 2)]!);
  const at100 = at100Of(rounds);
  const paired = pairedOf(pairs);
  return {
    options: { ...opts, sizes: [...sizes] },
    rows,
    at100,
    paired,
    targets: targetsOf(at100, paired),
  };
}

/**
 * The targets at 100 agents per batch, the ratios judged by the paired slices when there are
 * any: the rounds' ratios compare a warm sidecar with a freshly started in-process brain (and
 * minutes-apart runs), which flatters the batch.
 */
export function targetsOf(at100: BatchBenchReport['at100'], paired: BatchBenchReport['paired']): BatchBenchReport['targets'] {
  if (at100 === null) return null;
  return {
    four_times_tick: (paired?.vs_tick ?? at100.vs_tick) >= 4,
    half_of_brain: (paired?.vs_brain ?? at100.vs_brain) >= 0.5,
    p99_under_2ms_at_50_per_s: at100.fixed_p99_us !== null && at100.fixed_p99_us < 2000,
  };
}

/** Pairs of slices per round, and each slice's length in seconds. */
const PAIRS_PER_ROUND = 4;
const PAIRED_SLICE_S = 1;
/** The batch size the paired slices measure (the one the targets name). */
const PAIRED_BATCH = 100;

/**
 * Brain.tick in process, the sidecar's POST /ticks × 100 and its per-request /tick in adjacent
 * one-second slices on the same core, the order reversed every other set: the in-process brain
 * waits on its stdin while the sidecar runs and the sidecar is idle while the brain runs. A
 * set's ratios hold when the host's speed drifts from minute to minute (the whole runs of a
 * round are a minute apart).
 */
async function pairedSlices(
  opts: TickBenchOptions,
  pid: number,
  port: number,
  corpus: { bodies: string; index: string },
  single: { bodies: string; index: string },
): Promise<PairedSlice[]> {
  const child = spawn('taskset', ['-c', opts.serverCpu, process.execPath, BRAIN_RATE, String(opts.agents), '0', '--slices'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error('the in-process brain stopped before its slices were done');
    return line.value;
  };
  try {
    if ((await nextLine()) !== 'ready') throw new Error('the in-process brain did not start its slices');
    const out: PairedSlice[] = [];
    for (let k = 0; k < PAIRS_PER_ROUND; k++) {
      const brainSlice = async (): Promise<BrainRate> => {
        child.stdin!.write(`${PAIRED_SLICE_S}\n`);
        return JSON.parse(await nextLine()) as BrainRate;
      };
      const ticksSlice = (): BatchRow => {
        const m = measured(pid, () => wrk(opts, port, corpus, 'json', PAIRED_SLICE_S, BATCH_CONNECTIONS, undefined, '/ticks'));
        return row('/ticks', PAIRED_BATCH, 'paired', m.w, m.cpu);
      };
      const tickSlice = (): BatchRow => {
        const m = measured(pid, () => wrk(opts, port, single, 'json', PAIRED_SLICE_S, opts.connections));
        return row('/tick', 1, 'paired', m.w, m.cpu);
      };
      // The order reverses every other set, so that a steady drift weighs on all alike.
      let brain: BrainRate;
      let ticks: BatchRow;
      let tick: BatchRow;
      if (k % 2 === 0) {
        brain = await brainSlice();
        ticks = ticksSlice();
        tick = tickSlice();
      } else {
        tick = tickSlice();
        ticks = ticksSlice();
        brain = await brainSlice();
      }
      out.push({
        brain_decisions_per_s: brain.decisions_per_s,
        brain_cpu_us_per_decision: brain.cpu_us_per_decision,
        ticks_decisions_per_s: ticks.decisions_per_s,
        ticks_cpu_us_per_decision: ticks.cpu_us_per_decision ?? NaN,
        tick_decisions_per_s: tick.decisions_per_s,
        tick_cpu_us_per_decision: tick.cpu_us_per_decision ?? NaN,
      });
    }
    return out;
  } finally {
    child.stdin!.end();
    await exited;
  }
}

/** The paired slices' ratios of the batch to the brain and to per-request /tick: the median of the sets; null without any. */
export function pairedOf(pairs: readonly PairedSlice[]): BatchBenchReport['paired'] {
  if (pairs.length === 0) return null;
  const round2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    pairs: pairs.length,
    vs_brain: round2(median(pairs.map((p) => p.ticks_decisions_per_s / p.brain_decisions_per_s))),
    cpu_vs_brain: round2(median(pairs.map((p) => p.brain_cpu_us_per_decision / p.ticks_cpu_us_per_decision))),
    vs_tick: round2(median(pairs.map((p) => p.ticks_decisions_per_s / p.tick_decisions_per_s))),
    cpu_vs_tick: round2(median(pairs.map((p) => p.tick_cpu_us_per_decision / p.ticks_cpu_us_per_decision))),
  };
}

/** The median of `xs` (the mean of the middle two for an even count). */
function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The report's ratios at 100 agents per batch from each round's rows: worked out within each
 * round (its brain, /tick and batch runs follow each other within a minute), then the median
 * of the rounds. On a shared machine the load drifts between rounds, and a ratio of medians
 * could pair the brain of a quiet round with the server of a loaded one. Rounds missing a row
 * are left out; null when none has them all.
 */
export function at100Of(rounds: readonly (readonly BatchRow[])[]): BatchBenchReport['at100'] {
  const round2 = (x: number): number => Math.round(x * 100) / 100;
  const cpuOf = (r: BatchRow): number => r.cpu_us_per_decision ?? NaN;
  const ratios = rounds.flatMap((list) => {
    const find = (route: BatchRow['route'], batch: number, fixedRate = false): BatchRow | undefined =>
      list.find((r) => r.route === route && r.batch === batch && r.load.startsWith('~') === fixedRate);
    const tick = find('/tick', 1);
    const brain = find('Brain.tick in process', 1);
    const hundred = find('/ticks', 100);
    if (!tick || !brain || !hundred) return [];
    return [
      {
        vs_tick: hundred.decisions_per_s / tick.decisions_per_s,
        vs_brain: hundred.decisions_per_s / brain.decisions_per_s,
        cpu_vs_tick: cpuOf(tick) / cpuOf(hundred),
        cpu_vs_brain: cpuOf(brain) / cpuOf(hundred),
        fixed_p99_us: find('/ticks', FIXED_BATCH, true)?.p99_us ?? null,
      },
    ];
  });
  if (ratios.length === 0) return null;
  const p99s = ratios.flatMap((r) => (r.fixed_p99_us === null ? [] : [r.fixed_p99_us]));
  return {
    vs_tick: round2(median(ratios.map((r) => r.vs_tick))),
    vs_brain: round2(median(ratios.map((r) => r.vs_brain))),
    cpu_vs_tick: round2(median(ratios.map((r) => r.cpu_vs_tick))),
    cpu_vs_brain: round2(median(ratios.map((r) => r.cpu_vs_brain))),
    fixed_p99_us: p99s.length > 0 ? Math.round(median(p99s)) : null,
  };
}

export function formatBatchTable(report: BatchBenchReport): string {
  const lines = [
    '| route | agents per request | load | requests/s | decisions/s | p50 µs | p99 µs | CPU µs/decision | errors |',
    '|---|--:|---|--:|--:|--:|--:|--:|--:|',
    ...report.rows.map(
      (r) =>
        `| ${r.route} | ${r.batch} | ${r.load} | ${r.requests_per_s} | ${r.decisions_per_s} | ${r.p50_us ?? '—'} | ${r.p99_us ?? '—'} | ${r.cpu_us_per_decision ?? '—'} | ${r.errors} |`,
    ),
    '',
  ];
  const a = report.at100;
  const t = report.targets;
  if (a && t) {
    lines.push(
      `at 100 agents per batch, by the rounds' ratios: ${a.vs_tick}× the decisions/s of per-request /tick; by CPU per decision ${a.cpu_vs_tick}×`,
      `at 100 agents per batch, by the rounds' ratios: ${a.vs_brain} of Brain.tick in process; by CPU per decision ${a.cpu_vs_brain}`,
      `targets (ratios judged by the paired slices when measured): ≥ 4× per-request /tick ${t.four_times_tick ? 'met' : 'missed'}, ≥ 0.5 of the brain ${t.half_of_brain ? 'met' : 'missed'}`,
      `p99 of a 100-agent batch at ~${FIXED_BATCHES_PER_S} batches/s: ${a.fixed_p99_us ?? '—'} µs (target < 2,000: ${t.p99_under_2ms_at_50_per_s ? 'met' : 'missed'})`,
    );
  } else lines.push('(no batch of 100 measured: the targets are not judged)');
  const p = report.paired;
  if (p) {
    lines.push(
      `paired slices (${PAIRED_SLICE_S} s each of Brain.tick in process, /ticks × ${PAIRED_BATCH} and per-request /tick, adjacent, ${p.pairs} sets): the batch at ${p.vs_brain} of the brain by decisions/s (median of the sets), ${p.cpu_vs_brain} by CPU per decision; ${p.vs_tick}× per-request /tick by decisions/s, ${p.cpu_vs_tick}× by CPU per decision`,
    );
  }
  const round2 = (x: number): number => Math.round(x * 100) / 100;
  const bare = report.rows.find((r) => r.route === 'bare uWS /ticks');
  const brain = report.rows.find((r) => r.route === 'Brain.tick in process');
  if (bare?.cpu_us_per_decision && brain?.cpu_us_per_decision) {
    lines.push(
      `the transport alone (bare uWS taking the same /ticks × ${PAIRED_BATCH} bodies, constant reply): ${round2(bare.cpu_us_per_decision / brain.cpu_us_per_decision)} of the brain's CPU per decision`,
    );
  }
  const inProcess = report.rows.filter((r) => r.route === '/ticks path in process');
  if (inProcess.length === 2) {
    const [busy, woken] = inProcess as [BatchRow, BatchRow];
    lines.push(
      `the same ${FIXED_BATCH}-tick batch in process, no HTTP (read, decide, write): p50 ${busy.p50_us} µs back to back, ${woken.p50_us} µs (p99 ${woken.p99_us}) ${woken.load}`,
    );
  }
  return lines.join('\n');
}
