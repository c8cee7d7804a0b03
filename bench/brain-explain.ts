/**
 * What `?explain=1` costs `Brain.tick`, and what it costs a tick that does not ask: the same
 * traffic as `bench brain` (brain-micro.ts's workload) through this build's brain with explain
 * off and on, and, with `against`, through another build's brain (a checkout from before explain
 * was added, built: its `dist/`), every policy on and every policy off. Modes run in rotated
 * order each round, so a machine growing busier or quieter during the run weighs on every
 * mode alike; ratios are taken within each round and their median reported. The POST /ticks
 * path in process (reader, brain, batch, JSON writer; no HTTP) is measured the same way.
 *
 *   npx brainstem bench brain --explain [--against ../before/dist] [--agents 200] [--ticks 200] [--rounds 9]
 */
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Brain, DEFAULT_BUNDLE, POLICY_KEYS, type ConfigBundle, type TickRequest, type TickResponse } from '../brain/index.js';
import { workload } from './brain-micro.js';

export interface BrainExplainOptions {
  agents?: number;
  ticks?: number;
  rounds?: number;
  /** Another build's `dist/` directory (its `brain/index.js` is loaded): the "before" rows. */
  against?: string;
}

/** The POST /ticks path as the inline sidecar wires it (bench/tick/ticks-path.ts), without HTTP: body in, group reply out. */
type GroupPath = (body: Buffer, explain: boolean) => void;
type PathMaker = () => GroupPath;

/** Wires a build's reader, handler, batch and group writer (its `dist/` at `root`) as ticks-path.ts does; `explain` is passed on (a build from before ignores it). */
async function pathMaker(root: string): Promise<PathMaker> {
  const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
  const { DEFAULT_BUNDLE: bundle } = await load<{ DEFAULT_BUNDLE: ConfigBundle }>('brain/index.js');
  const { silentLogger } = await load<{ silentLogger: unknown }>('src/log.js');
  const { TickBatch } = await load<{
    TickBatch: { of(h: unknown): { answerGroup(items: unknown, enc: string, logger: unknown, explain?: boolean): Uint8Array } };
  }>('src/sidecar/tick/batch.js');
  const { InlineEvaluator } = await load<{ InlineEvaluator: new (b: ConfigBundle) => unknown }>('src/sidecar/tick/evaluator.js');
  const { TickHandler } = await load<{ TickHandler: new (e: unknown) => { acceptBatch(body: Buffer, enc: string): unknown } }>('src/sidecar/tick/handler.js');
  return () => {
    const handler = new TickHandler(new InlineEvaluator(bundle));
    const batch = TickBatch.of(handler);
    return (body, explain) => {
      if (batch.answerGroup(handler.acceptBatch(body, 'json'), 'json', silentLogger, explain).length === 0) throw new Error('unreachable');
    };
  };
}

interface Ticker {
  tick(request: TickRequest, explain?: boolean): TickResponse;
}
type BrainClass = new (bundle: ConfigBundle) => Ticker;

export interface BrainExplainRow {
  mode: string;
  cpu_ns_per_tick_median: number;
  ns_per_tick_median: number;
}

export interface BrainExplainResult {
  bench: 'brain-explain';
  agents: number;
  ticks_per_round: number;
  rounds: number;
  against: string | null;
  modes: BrainExplainRow[];
  /**
   * Medians over the rounds of each round's CPU-time ratio: explain off against the other
   * build (1.0 = costs nothing; null without `against`), and explain on against off.
   */
  ratios: {
    all_on_off_vs_before: number | null;
    reactive_off_vs_before: number | null;
    all_on_explained_vs_off: number;
    reactive_explained_vs_off: number;
  };
  /**
   * The POST /ticks path in process (reader, brain with the default bundle, batch, JSON group
   * writer; no HTTP), CPU ns per tick: explain off and on, and the other build's; ratios as above.
   */
  ticks_path: { modes: BrainExplainRow[]; off_vs_before: number | null; explained_vs_off: number };
  /** Bytes `"why":{…}` adds to a JSON reply over the all-on traffic: median and largest. */
  why_bytes: { median: number; max: number };
}

function bundleFor(on: boolean): ConfigBundle {
  const b = structuredClone(DEFAULT_BUNDLE);
  b.policy = Object.fromEntries(POLICY_KEYS.map((k) => [k, on]));
  return b;
}

/** One pass over the traffic with a fresh brain; each batch decoded just before it is timed (as brain-micro.ts does). */
function pass(make: BrainClass, bundle: ConfigBundle, batches: string[], explain: boolean): { wall: number; cpu: number } {
  const brain = new make(bundle);
  let sink = 0;
  let ns = 0;
  let us = 0;
  let n = 0;
  for (const json of batches) {
    const batch = JSON.parse(json) as TickRequest[];
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    // The "off" modes call tick as the sidecar does for a tick that does not ask: explain false.
    for (let i = 0; i < batch.length; i++) sink += brain.tick(batch[i]!, explain).intents.length;
    ns += Number(process.hrtime.bigint() - t0);
    const c = process.cpuUsage(c0);
    us += c.user + c.system;
    n += batch.length;
  }
  if (sink < 0) throw new Error('unreachable');
  return { wall: ns / n, cpu: (us * 1000) / n };
}

/** The median over rounds of mode a's CPU per tick over mode b's, in the same rounds; null when either mode was not run. */
function cpuRatio(modes: readonly { mode: string; cpu: number[] }[], a: string, b: string): number | null {
  const x = modes.find((m) => m.mode === a);
  const y = modes.find((m) => m.mode === b);
  if (x === undefined || y === undefined) return null;
  return Math.round(median(x.cpu.map((v, k) => v / y.cpu[k]!)) * 1000) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function runBrainExplain(opts: BrainExplainOptions = {}): Promise<BrainExplainResult> {
  const agents = opts.agents ?? 200;
  const ticks = opts.ticks ?? 200;
  const rounds = opts.rounds ?? 9;
  const requests = workload(agents, ticks);
  const batches: string[] = [];
  for (let i = 0; i < requests.length; i += agents) batches.push(JSON.stringify(requests.slice(i, i + agents)));
  let before: BrainClass | null = null;
  const against = opts.against === undefined ? null : resolve(opts.against);
  if (against !== null) {
    const mod = (await import(pathToFileURL(join(against, 'brain', 'index.js')).href)) as { Brain?: BrainClass };
    if (typeof mod.Brain !== 'function') throw new Error(`${join(against, 'brain', 'index.js')} exports no Brain`);
    before = mod.Brain;
  }
  const modes: { mode: string; make: BrainClass; bundle: ConfigBundle; explain: boolean; ns: number[]; cpu: number[] }[] = [];
  for (const on of [true, false]) {
    const name = on ? 'all-on' : 'reactive-only';
    const bundle = bundleFor(on);
    if (before !== null) modes.push({ mode: `${name}, before`, make: before, bundle, explain: false, ns: [], cpu: [] });
    modes.push({ mode: `${name}, explain off`, make: Brain, bundle, explain: false, ns: [], cpu: [] });
    modes.push({ mode: `${name}, explain on`, make: Brain, bundle, explain: true, ns: [], cpu: [] });
  }
  for (const m of modes) pass(m.make, m.bundle, batches, m.explain); // warm-up: JIT, inline caches
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < modes.length; i++) {
      const m = modes[(i + r) % modes.length]!;
      const { wall, cpu } = pass(m.make, m.bundle, batches, m.explain);
      m.ns.push(wall);
      m.cpu.push(cpu);
    }
  }
  const ratio = (a: string, b: string) => cpuRatio(modes, a, b);
  const ticksPath = await measurePath(batches, rounds, against);
  const sizes: number[] = [];
  const brain = new Brain(bundleFor(true));
  for (const r of requests) sizes.push(Buffer.byteLength(`,"why":${JSON.stringify(brain.tick(r, true).why)}`));
  return {
    bench: 'brain-explain',
    agents,
    ticks_per_round: requests.length,
    rounds,
    against,
    modes: modes.map((m) => ({ mode: m.mode, cpu_ns_per_tick_median: Math.round(median(m.cpu)), ns_per_tick_median: Math.round(median(m.ns)) })),
    ratios: {
      all_on_off_vs_before: ratio('all-on, explain off', 'all-on, before'),
      reactive_off_vs_before: ratio('reactive-only, explain off', 'reactive-only, before'),
      all_on_explained_vs_off: ratio('all-on, explain on', 'all-on, explain off')!,
      reactive_explained_vs_off: ratio('reactive-only, explain on', 'reactive-only, explain off')!,
    },
    ticks_path: ticksPath,
    why_bytes: { median: median(sizes), max: Math.max(...sizes) },
  };
}

/** One pass of the /ticks path over every batch body with a fresh wiring; CPU ns per tick. */
function pathPass(make: PathMaker, bodies: Buffer[], perBody: number, explain: boolean): { wall: number; cpu: number } {
  const path = make();
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (const body of bodies) path(body, explain);
  const ns = Number(process.hrtime.bigint() - t0);
  const c = process.cpuUsage(c0);
  const n = bodies.length * perBody;
  return { wall: ns / n, cpu: ((c.user + c.system) * 1000) / n };
}

async function measurePath(batches: string[], rounds: number, against: string | null): Promise<BrainExplainResult['ticks_path']> {
  const bodies = batches.map((b) => Buffer.from(b));
  const perBody = (JSON.parse(batches[0]!) as unknown[]).length;
  const mine = await pathMaker(fileURLToPath(new URL('../', import.meta.url)));
  const modes: { mode: string; make: PathMaker; explain: boolean; ns: number[]; cpu: number[] }[] = [];
  if (against !== null) modes.push({ mode: '/ticks path, before', make: await pathMaker(against), explain: false, ns: [], cpu: [] });
  modes.push({ mode: '/ticks path, explain off', make: mine, explain: false, ns: [], cpu: [] });
  modes.push({ mode: '/ticks path, explain on', make: mine, explain: true, ns: [], cpu: [] });
  for (const m of modes) pathPass(m.make, bodies, perBody, m.explain);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < modes.length; i++) {
      const m = modes[(i + r) % modes.length]!;
      const { wall, cpu } = pathPass(m.make, bodies, perBody, m.explain);
      m.ns.push(wall);
      m.cpu.push(cpu);
    }
  }
  const ratio = (a: string, b: string) => cpuRatio(modes, a, b);
  return {
    modes: modes.map((m) => ({ mode: m.mode, cpu_ns_per_tick_median: Math.round(median(m.cpu)), ns_per_tick_median: Math.round(median(m.ns)) })),
    off_vs_before: ratio('/ticks path, explain off', '/ticks path, before'),
    explained_vs_off: ratio('/ticks path, explain on', '/ticks path, explain off')!,
  };
}

export function formatExplainTable(r: BrainExplainResult): string {
  const lines = ['mode                          cpu ns/tick (median)  wall ns/tick (median)'];
  for (const m of [...r.modes, ...r.ticks_path.modes])
    lines.push(`${m.mode.padEnd(30)}${String(m.cpu_ns_per_tick_median).padStart(20)}${String(m.ns_per_tick_median).padStart(23)}`);
  const x = (v: number | null): string => (v === null ? 'n/a (no --against)' : `${v.toFixed(3)}×`);
  lines.push(
    `explain off vs before, by CPU (median of the rounds' ratios): all-on ${x(r.ratios.all_on_off_vs_before)}, reactive-only ${x(r.ratios.reactive_off_vs_before)}`,
    `explain on vs off, by CPU: all-on ${x(r.ratios.all_on_explained_vs_off)}, reactive-only ${x(r.ratios.reactive_explained_vs_off)}`,
    `/ticks path in process (default bundle), by CPU: explain off vs before ${x(r.ticks_path.off_vs_before)}, explain on vs off ${x(r.ticks_path.explained_vs_off)}`,
    `"why" adds ${r.why_bytes.median} bytes to a JSON reply (median), ${r.why_bytes.max} at most in this traffic`,
  );
  return lines.join('\n');
}
