/**
 * Micro-benchmark of Brain.tick: the reactive-only brain (every policy off, the baseline)
 * against the all-on brain, on the same recorded snapshots, measured in alternating rounds
 * in one run because these machines are noisy.
 *
 *   npx tsc -p . && node dist/bench/brain-micro.js [--agents 200] [--ticks 200] [--rounds 7]
 *
 * With `against` (another build's dist/), that build's brain runs the same traffic beside this
 * one, both modes, in rotated order every round: a before/after in one run.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { seededRandom } from '../src/random.js';
import { Brain, DEFAULT_BUNDLE, POLICY_KEYS, TARGET_KINDS, type AgentId, type ConfigBundle, type Target, type TickRequest } from '../brain/index.js';

export interface BrainMicroOptions {
  agents?: number;
  ticks?: number;
  rounds?: number;
  /** Another build's brain (loadAgainst), run beside this one. */
  against?: AgainstBrain;
}

/** What `against` needs of another build's brain/index.js. */
export interface AgainstBrain {
  dir: string;
  Brain: BrainClass;
  DEFAULT_BUNDLE: ConfigBundle;
  POLICY_KEYS: readonly string[];
}

type BrainClass = new (bundle: ConfigBundle) => { tick(r: TickRequest): { intents: unknown[] } };

/** Loads the brain of another build: `dir` is its dist/ (check the commit out, `npm run build`, pass its dist). */
export async function loadAgainst(dir: string): Promise<AgainstBrain> {
  const abs = resolve(dir);
  const file = join(abs, 'brain', 'index.js');
  if (!existsSync(file)) throw new Error(`--against ${dir}: no ${file}; pass another build's dist/ directory (check the commit out, npm run build there)`);
  const mod = (await import(pathToFileURL(file).href)) as Partial<AgainstBrain>;
  if (typeof mod.Brain !== 'function' || mod.DEFAULT_BUNDLE === undefined || !Array.isArray(mod.POLICY_KEYS)) {
    throw new Error(`${file} exports no Brain, DEFAULT_BUNDLE and POLICY_KEYS`);
  }
  return { dir: abs, Brain: mod.Brain, DEFAULT_BUNDLE: mod.DEFAULT_BUNDLE, POLICY_KEYS: mod.POLICY_KEYS };
}

export interface BrainMicroResult {
  bench: 'brain-micro';
  agents: number;
  ticks_per_round: number;
  rounds: number;
  /**
   * Per mode: wall-clock ns per tick (median and best round) and CPU-time ns per tick
   * (median). CPU time is the steadier figure on a shared machine: it does not count time the
   * process spent descheduled.
   */
  modes: Array<{ mode: string; ns_per_tick_median: number; ns_per_tick_min: number; cpu_ns_per_tick_median: number; ticks_per_s: number }>;
  /** all-on throughput as a fraction of reactive-only, from median CPU time (target ≥ 0.75, issue #35). */
  all_on_vs_reactive: number;
  /** The same from median wall-clock time. */
  all_on_vs_reactive_wall: number;
  /**
   * With `against`: the other build's rows and ratio, and this build's CPU per tick over the
   * other's, the median of each round's ratio (the two ran back to back in that round).
   */
  against?: {
    dir: string;
    modes: BrainMicroResult['modes'];
    all_on_vs_reactive: number;
    all_on_vs_reactive_wall: number;
    reactive_cpu_vs_against: number;
    all_on_cpu_vs_against: number;
  };
}

/**
 * Realistic traffic: agents on a 1 km field ticking at 2 Hz. Each agent perceives its own
 * 0-8 targets (agent i sees i mod 9), a third hostile, which move smoothly and drop in and
 * out of sight now and then, as a game's perception does; a quarter of the agents walk patrol
 * routes, every third is in a squad of four, some hear speech, health drops and recovers.
 */
export function workload(agents: number, ticks: number): TickRequest[] {
  // Seeded so the workload is the same on every run.
  const rnd = seededRandom(42);
  const out: TickRequest[] = [];
  const pos = Array.from({ length: agents }, () => ({ x: rnd() * 1000, y: 8, z: rnd() * 1000 }));
  const health = new Array<number>(agents).fill(100);
  const seen = Array.from({ length: agents }, (_, a) =>
    Array.from({ length: a % 9 }, (_, i) => {
      const ang = rnd() * Math.PI * 2;
      const d = 5 + rnd() * 200;
      return {
        id: 10_000 + a * 10 + i,
        kind: TARGET_KINDS[Math.floor(rnd() * 4)]!,
        dx: Math.sin(ang) * d,
        dz: Math.cos(ang) * d,
        hostile: rnd() < 0.33,
        visible: rnd() < 0.8,
        name: rnd() < 0.5 ? `P${i}` : undefined,
      };
    }),
  );
  const poi = [
    { id: 'well', kind: 'water', pos: { x: 200, y: 8, z: 300 } },
    { id: 'store', kind: 'food', pos: { x: 700, y: 8, z: 600 } },
    { id: 'crate', kind: 'loot', pos: { x: 500, y: 8, z: 900 } },
    { id: 'clinic', kind: 'medical', pos: { x: 100, y: 8, z: 800 } },
  ];
  for (let t = 0; t < ticks; t++) {
    for (let a = 0; a < agents; a++) {
      const p = pos[a]!;
      p.x += (rnd() - 0.5) * 2;
      p.z += (rnd() - 0.5) * 2;
      // Two draws of the generator, not one condition twice.
      // oxlint-disable-next-line no-dupe-else-if
      if (rnd() < 0.02) health[a] = Math.max(5, health[a]! - 15);
      else if (rnd() < 0.02) health[a] = Math.min(100, health[a]! + 10);
      const targets: Target[] = [];
      for (const n of seen[a]!) {
        n.dx += (rnd() - 0.5) * 2;
        n.dz += (rnd() - 0.5) * 2;
        if (rnd() < 0.03) n.visible = !n.visible;
        targets.push({
          id: n.id,
          kind: n.kind,
          pos: { x: p.x + n.dx, y: 8, z: p.z + n.dz },
          hostile: n.hostile,
          visible: n.visible,
          ...(n.name !== undefined ? { name: n.name } : {}),
        });
      }
      out.push({
        snapshot: {
          agent: (a + 1) as AgentId,
          time_s: t * 0.5,
          self_state: {
            pos: { ...p },
            heading_deg: (t * 7 + a) % 360,
            health: health[a]!,
            blood: 5000,
            hunger: Math.floor(t / 4 + a) % 100,
            thirst: Math.floor(t / 3 + a) % 100,
            has_weapon: a % 6 !== 0,
            ammo: a % 9 === 0 ? 0 : 30,
          },
          targets,
          ...(a % 4 === 0
            ? {
                route: [
                  { x: 0, y: 8, z: 0 },
                  { x: 100, y: 8, z: 0 },
                ],
              }
            : {}),
          poi,
          ...(rnd() < 0.05 ? { heard: [{ from: 10_001, text: 'anyone out there?', at_s: t * 0.5 }] } : {}),
          ...(a % 3 === 0 ? { squad: `sq${a % 12}` } : {}),
        },
        profile: a % 10 === 0 ? { role: 'guard', coward: false } : {},
      });
    }
  }
  return out;
}

function bundleFor(on: boolean, base: ConfigBundle = DEFAULT_BUNDLE, keys: readonly string[] = POLICY_KEYS): ConfigBundle {
  const b = structuredClone(base);
  b.policy = Object.fromEntries(keys.map((k) => [k, on]));
  return b;
}

/**
 * One pass over the workload with a fresh brain; ns per tick. Each batch (one tick of every
 * agent) is decoded from JSON just before it is timed, as the sidecar decodes a request just
 * before ticking it: ticking objects built long ago would measure cache misses, not the brain.
 */
function pass(make: BrainClass, bundle: ConfigBundle, batches: string[]): { wall: number; cpu: number } {
  const brain = new make(bundle);
  let sink = 0;
  let ns = 0;
  let us = 0;
  let n = 0;
  for (const json of batches) {
    const batch = JSON.parse(json) as TickRequest[];
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch.length; i++) sink += brain.tick(batch[i]!).intents.length;
    ns += Number(process.hrtime.bigint() - t0);
    const c = process.cpuUsage(c0);
    us += c.user + c.system;
    n += batch.length;
  }
  if (sink < 0) throw new Error('unreachable');
  return { wall: ns / n, cpu: (us * 1000) / n };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Mode {
  mode: string;
  make: BrainClass;
  bundle: ConfigBundle;
  ns: number[];
  cpu: number[];
}

function rowOf(m: Mode): BrainMicroResult['modes'][number] {
  const med = median(m.ns);
  return {
    mode: m.mode,
    ns_per_tick_median: Math.round(med),
    ns_per_tick_min: Math.round(Math.min(...m.ns)),
    cpu_ns_per_tick_median: Math.round(median(m.cpu)),
    ticks_per_s: Math.round(1e9 / med),
  };
}

const ratio = (a: number, b: number): number => Math.round((a / b) * 1000) / 1000;

/** Median over the rounds of a's CPU per tick over b's in the same round. */
function pairedRatio(a: Mode, b: Mode): number {
  return ratio(median(a.cpu.map((x, i) => x / b.cpu[i]!)), 1);
}

export function runBrainMicro(opts: BrainMicroOptions = {}): BrainMicroResult {
  const agents = opts.agents ?? 200;
  const ticks = opts.ticks ?? 200;
  const rounds = opts.rounds ?? 7;
  const requests = workload(agents, ticks);
  const batches: string[] = [];
  for (let i = 0; i < requests.length; i += agents) batches.push(JSON.stringify(requests.slice(i, i + agents)));
  const modes: Mode[] = [
    { mode: 'reactive-only', make: Brain, bundle: bundleFor(false), ns: [], cpu: [] },
    { mode: 'all-on', make: Brain, bundle: bundleFor(true), ns: [], cpu: [] },
  ];
  const other = opts.against;
  if (other !== undefined) {
    for (const on of [false, true]) {
      const bundle = bundleFor(on, other.DEFAULT_BUNDLE, other.POLICY_KEYS);
      modes.push({ mode: `${on ? 'all-on' : 'reactive-only'}, against`, make: other.Brain, bundle, ns: [], cpu: [] });
    }
  }
  for (const m of modes) pass(m.make, m.bundle, batches); // warm-up: JIT, inline caches
  for (let r = 0; r < rounds; r++) {
    // Rotated (and with two modes, alternated) so no mode always runs first or after the same one.
    for (let i = 0; i < modes.length; i++) {
      const m = modes[(i + r) % modes.length]!;
      const { wall, cpu } = pass(m.make, m.bundle, batches);
      m.ns.push(wall);
      m.cpu.push(cpu);
    }
  }
  const rows = modes.map(rowOf);
  const result: BrainMicroResult = {
    bench: 'brain-micro',
    agents,
    ticks_per_round: requests.length,
    rounds,
    modes: rows.slice(0, 2),
    all_on_vs_reactive: ratio(rows[0]!.cpu_ns_per_tick_median, rows[1]!.cpu_ns_per_tick_median),
    all_on_vs_reactive_wall: ratio(rows[0]!.ns_per_tick_median, rows[1]!.ns_per_tick_median),
  };
  if (other !== undefined) {
    result.against = {
      dir: other.dir,
      modes: rows.slice(2),
      all_on_vs_reactive: ratio(rows[2]!.cpu_ns_per_tick_median, rows[3]!.cpu_ns_per_tick_median),
      all_on_vs_reactive_wall: ratio(rows[2]!.ns_per_tick_median, rows[3]!.ns_per_tick_median),
      reactive_cpu_vs_against: pairedRatio(modes[0]!, modes[2]!),
      all_on_cpu_vs_against: pairedRatio(modes[1]!, modes[3]!),
    };
  }
  return result;
}

export function formatTable(r: BrainMicroResult): string {
  const lines = ['mode                     wall ns/tick (median)  wall ns/tick (min)  cpu ns/tick (median)  ticks/s'];
  for (const m of [...r.modes, ...(r.against?.modes ?? [])]) {
    lines.push(
      `${m.mode.padEnd(25)}${String(m.ns_per_tick_median).padStart(21)}${String(m.ns_per_tick_min).padStart(20)}${String(m.cpu_ns_per_tick_median).padStart(22)}${String(m.ticks_per_s).padStart(9)}`,
    );
  }
  lines.push(
    `all-on throughput = ${(r.all_on_vs_reactive * 100).toFixed(1)}% of reactive-only by CPU time, ${(r.all_on_vs_reactive_wall * 100).toFixed(1)}% by wall time (target >= 75%)`,
  );
  const o = r.against;
  if (o !== undefined) {
    lines.push(`against ${o.dir}: all-on throughput ${(o.all_on_vs_reactive * 100).toFixed(1)}% of reactive-only by CPU time`);
    lines.push(
      `this build's CPU per tick / against's, median of the rounds' ratios: reactive-only ${o.reactive_cpu_vs_against.toFixed(3)}x, all-on ${o.all_on_cpu_vs_against.toFixed(3)}x`,
    );
  }
  return lines.join('\n');
}

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = runBrainMicro({ agents: arg('agents'), ticks: arg('ticks'), rounds: arg('rounds') });
  console.log(JSON.stringify(result));
  console.log(formatTable(result));
}
