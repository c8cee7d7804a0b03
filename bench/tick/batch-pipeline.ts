/**
 * The POST /ticks path without the transport, in process, pinned to the server's CPU:
 *   node dist/bench/tick/batch-pipeline.js <agents> <batch> <batches> <gap_ms>
 * The benchmark's batch bodies are read (acceptBatch, with the sidecar's telemetry tracking),
 * decided and written (TickBatch.answerGroup) as the sidecar does them, each copied first into
 * a reused buffer as a socket's bytes would be: first `batches` back to back, then `batches` more one
 * every `gap_ms` with the thread asleep in between (the spacing of the fixed-rate run, with no
 * HTTP, no other process's work, no event loop). Prints one JSON line
 * {"back_to_back": {decisions_per_s, p50_us, p99_us, cpu_us_per_decision}, "spaced": {…}}: how
 * long the same batch takes when the process has been busy and when it wakes to it.
 */
import { generateTicks } from './scenarios.js';
import { ticksPath } from './ticks-path.js';

export interface PipelineTimes {
  /** Decisions over the whole run's wall time (sleeps included when spaced). */
  decisions_per_s: number;
  p50_us: number;
  p99_us: number;
  cpu_us_per_decision: number;
}

const agents = Number(process.argv[2] ?? 10_000);
const size = Number(process.argv[3] ?? 100);
const batches = Number(process.argv[4] ?? 150);
const gapMs = Number(process.argv[5] ?? 20);

const ticks = generateTicks({ agents, count: agents, seed: 7 });
const bodies: Buffer[] = [];
for (let k = 0; k < Math.max(100, Math.ceil(agents / size)); k++) {
  bodies.push(Buffer.from(JSON.stringify(Array.from({ length: size }, (_, j) => ticks[(k * size + j) % ticks.length]))));
}
const answer = ticksPath();
let next = 0;

// Each body is copied into one reused buffer before it is read, as uWS hands the sidecar its
// receive buffer: fresh bytes, but no new allocation per batch.
const scratch = Buffer.allocUnsafeSlow(Math.max(...bodies.map((b) => b.length)));

/** One batch, read, decided and written; its wall time in µs. */
function one(): number {
  const source = bodies[next++ % bodies.length]!;
  source.copy(scratch);
  const body = scratch.subarray(0, source.length);
  const started = performance.now();
  answer(body);
  return (performance.now() - started) * 1000;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function measure(gap: number): PipelineTimes {
  const times: number[] = [];
  const cpu = process.cpuUsage();
  const began = performance.now();
  for (let k = 0; k < batches; k++) {
    times.push(one());
    if (gap > 0) Atomics.wait(sleeper, 0, 0, gap);
  }
  const used = process.cpuUsage(cpu);
  const wallS = (performance.now() - began) / 1000;
  times.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!);
  return {
    decisions_per_s: Math.round((batches * size) / wallS),
    p50_us: at(0.5),
    p99_us: at(0.99),
    cpu_us_per_decision: Math.round(((used.user + used.system) / (batches * size)) * 100) / 100,
  };
}

// Warm-up: every body five times, so every agent exists and the code is optimised (the
// compiler's threads count in the process's CPU time while they work).
for (let k = 0; k < 5 * bodies.length; k++) one();
const backToBack = measure(0);
const spaced = measure(gapMs);
process.stdout.write(`${JSON.stringify({ back_to_back: backToBack, spaced })}\n`);
