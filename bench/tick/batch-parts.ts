/**
 * Where the CPU of a POST /ticks batch goes, in process, each part against Brain.tick:
 *   node dist/bench/tick/batch-parts.js [pairs] [slice_s] [agents] [warmup_s]
 * Each part runs in its own process pinned to CPU 0 (so the brain's code only ever sees the
 * objects its own part gives it, as in the sidecar and in `bench tick --batch`'s ceiling), and
 * the brain and the part take turns in short slices, alternating which goes first: this host's
 * speed drifts from one second to the next, and adjacent slices drift alike. Prints, per part,
 * the median over the pairs of (part's CPU µs per tick) / (the brain's), with its quartiles.
 *
 * The parts, over the benchmark's 100-tick batch bodies (each copied first into a reused buffer,
 * as a socket's bytes would be):
 * - `read`: the sidecar's fast reader (readTicks), no decision;
 * - `parse`: what a generic decoder costs instead, JSON.parse of the body as a string (the
 *   conversion included: JSON.parse takes nothing else), no validation;
 * - `build`: only building the same request objects from ones already decoded (the floor of any
 *   reader that hands the brain fresh objects);
 * - `pipeline`: the whole /ticks path without the transport: read, tracked, decided, written.
 *
 * A part's process started with `--part NAME` serves slices: after a warm-up (1.5 s unless given;
 * the test's smoke run takes less) it prints `ready`,
 * then for each line of stdin holding seconds runs that long and prints its CPU µs per tick.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Brain, DEFAULT_BUNDLE, type Profile, type Target, type TickRequest, type Vec3 } from '../../brain/index.js';
import { readTicks } from '../../src/sidecar/tick/tick-array.js';
import { generateTicks, parsedTicks } from './scenarios.js';
import { ticksPath } from './ticks-path.js';

export const PARTS = ['read', 'parse', 'build', 'pipeline'] as const;
export type Part = (typeof PARTS)[number] | 'brain';

const BATCH = 100;

export interface PartRatio {
  part: (typeof PARTS)[number];
  pairs: number;
  /** Median over the pairs of the part's CPU per tick divided by the brain's. */
  vs_brain: number;
  q1: number;
  q3: number;
}

/** One step of a part: a whole 100-tick batch. */
function stepOf(part: Part, agents: number): () => void {
  const ticks = generateTicks({ agents, count: agents, seed: 7 });
  const bodies: Buffer[] = [];
  for (let k = 0; k < Math.ceil(agents / BATCH); k++) {
    bodies.push(Buffer.from(JSON.stringify(Array.from({ length: BATCH }, (_, j) => ticks[(k * BATCH + j) % ticks.length]))));
  }
  const scratch = Buffer.allocUnsafeSlow(Math.max(...bodies.map((b) => b.length)));
  let next = 0;
  const body = (): Buffer => {
    const source = bodies[next++ % bodies.length]!;
    source.copy(scratch);
    return scratch.subarray(0, source.length);
  };
  const requests = (): TickRequest[] => parsedTicks(ticks);
  let sink = 0;
  switch (part) {
    case 'brain': {
      const brain = new Brain(DEFAULT_BUNDLE);
      const all = requests();
      return () => {
        for (let k = 0; k < BATCH; k++) brain.tick(all[(next + k) % all.length]!);
        next = (next + BATCH) % all.length;
      };
    }
    case 'read':
      return () => {
        sink += readTicks(body(), 'json').length;
      };
    case 'parse':
      return () => {
        sink += (JSON.parse(body().toString('latin1')) as unknown[]).length;
      };
    case 'build': {
      const all = requests();
      return () => {
        for (let k = 0; k < BATCH; k++) sink += rebuilt(all[(next + k) % all.length]!).snapshot.targets.length;
        next = (next + BATCH) % all.length;
      };
    }
    case 'pipeline': {
      const answer = ticksPath();
      return () => answer(body());
    }
  }
}

const vec = (p: Vec3): Vec3 => ({ x: p.x, y: p.y, z: p.z });

function target(t: Target): Target {
  const { id, kind, hostile, visible, name, health } = t;
  const pos = vec(t.pos);
  if (name !== undefined) return health !== undefined ? { id, kind, pos, hostile, visible, name, health } : { id, kind, pos, hostile, visible, name };
  return health !== undefined ? { id, kind, pos, hostile, visible, health } : { id, kind, pos, hostile, visible };
}

/** A request's objects built again, field by field in the readers' shapes. */
function rebuilt(r: TickRequest): TickRequest {
  const s = r.snapshot;
  const st = s.self_state;
  const snapshot: TickRequest['snapshot'] = {
    agent: s.agent,
    time_s: s.time_s,
    self_state: {
      pos: vec(st.pos),
      heading_deg: st.heading_deg,
      health: st.health,
      blood: st.blood,
      hunger: st.hunger,
      thirst: st.thirst,
      has_weapon: st.has_weapon,
      ammo: st.ammo,
    },
    targets: s.targets.map(target),
  };
  if (s.route !== undefined) snapshot.route = s.route.map(vec);
  if (s.poi !== undefined) snapshot.poi = s.poi.map((p) => ({ id: p.id, kind: p.kind, pos: vec(p.pos) }));
  if (s.heard !== undefined) snapshot.heard = s.heard.map((h) => ({ from: h.from, text: h.text, at_s: h.at_s }));
  if (s.squad !== undefined) snapshot.squad = s.squad;
  const p = r.profile;
  const profile: Profile =
    p.name !== undefined && p.role !== undefined && p.coward !== undefined && p.traits !== undefined
      ? { name: p.name, role: p.role, coward: p.coward, traits: { ...p.traits } }
      : { ...p };
  return { snapshot, profile };
}

/** CPU µs per tick of `step` run for `seconds`. */
function cpuPerTick(step: () => void, seconds: number): number {
  let ticks = 0;
  const cpu = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    for (let k = 0; k < 10; k++) step();
    ticks += 10 * BATCH;
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / ticks;
}

async function serve(part: Part, agents: number, warmup: number): Promise<void> {
  const step = stepOf(part, agents);
  cpuPerTick(step, warmup);
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) process.stdout.write(`${cpuPerTick(step, Number(line))}\n`);
}

interface SliceProcess {
  ask(seconds: number): Promise<number>;
  end(): void;
}

async function start(part: Part, agents: number, cpu: string, warmup: number): Promise<SliceProcess> {
  const child = spawn('taskset', ['-c', cpu, process.execPath, fileURLToPath(import.meta.url), '--part', part, String(agents), String(warmup)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`the ${part} slices ended early`);
    return line.value;
  };
  if ((await next()) !== 'ready') throw new Error(`the ${part} slices did not start`);
  return {
    ask: async (seconds) => {
      child.stdin!.write(`${seconds}\n`);
      return Number(await next());
    },
    end: () => child.stdin!.end(),
  };
}

function quantile(sorted: readonly number[], q: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000) / 1000;
}

/** Each part against the brain in `pairs` paired slices of `slice` seconds on `cpu`, each process warmed up for `warmup` seconds first. */
export async function measureParts(options: { pairs: number; slice: number; agents: number; cpu: string; warmup: number }): Promise<PartRatio[]> {
  const out: PartRatio[] = [];
  for (const part of PARTS) {
    const [brain, other] = await Promise.all([
      start('brain', options.agents, options.cpu, options.warmup),
      start(part, options.agents, options.cpu, options.warmup),
    ]);
    const ratios: number[] = [];
    for (let k = 0; k < options.pairs; k++) {
      const first = k % 2 === 0 ? brain : other;
      const second = first === brain ? other : brain;
      const a = await first.ask(options.slice);
      const b = await second.ask(options.slice);
      ratios.push(first === brain ? b / a : a / b);
    }
    brain.end();
    other.end();
    ratios.sort((x, y) => x - y);
    out.push({ part, pairs: options.pairs, vs_brain: quantile(ratios, 0.5), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75) });
  }
  return out;
}

if (process.argv[2] === '--part') {
  await serve(process.argv[3] as Part, Number(process.argv[4]), Number(process.argv[5]));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measureParts({
    pairs: Number(process.argv[2] ?? 30),
    slice: Number(process.argv[3] ?? 0.3),
    agents: Number(process.argv[4] ?? 10_000),
    warmup: Number(process.argv[5] ?? 1.5),
    cpu: process.env.BENCH_CPU ?? '0',
  });
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
}
