/**
 * The in-process ceiling of `bench tick --batch`: Brain.tick over the benchmark's corpus in a
 * loop, no transport, no decoding. Run pinned to the server's CPU:
 *   node dist/bench/tick/brain-rate.js <agents> <seconds>
 * prints {"decisions_per_s": N, "cpu_us_per_decision": C} on stdout (C from the process's CPU
 * time, the figure that holds on a loaded machine).
 *   node dist/bench/tick/brain-rate.js <agents> 0 --slices
 * warms up for a second more, prints `ready`, then for each line of stdin holding a number of seconds runs the
 * loop that long and prints the same JSON line; it idles between slices (the benchmark runs
 * the sidecar's slices there) and exits when stdin ends.
 */
import { createInterface } from 'node:readline';
import { Brain, DEFAULT_BUNDLE } from '../../brain/index.js';
import { generateTicks, parsedTicks } from './scenarios.js';

export interface BrainRate {
  decisions_per_s: number;
  cpu_us_per_decision: number;
}

const agents = Number(process.argv[2] ?? 10_000);
const seconds = Number(process.argv[3] ?? 3);
const requests = parsedTicks(generateTicks({ agents, count: agents, seed: 7 }));
const brain = new Brain(DEFAULT_BUNDLE);
// Warm-up: one pass so every agent exists and the code is optimised.
for (const r of requests) brain.tick(r);
let next = 0;

function run(forSeconds: number): BrainRate {
  let count = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const until = started + forSeconds * 1000;
  let now = started;
  while (now < until) {
    for (let k = 0; k < 1000; k++) brain.tick(requests[(next + k) % requests.length]!);
    next = (next + 1000) % requests.length;
    count += 1000;
    now = performance.now();
  }
  const used = process.cpuUsage(cpu);
  return {
    decisions_per_s: Math.round(count / ((now - started) / 1000)),
    cpu_us_per_decision: Math.round(((used.user + used.system) / count) * 100) / 100,
  };
}

if (process.argv[4] === '--slices') {
  // Short slices would otherwise start while the compiler is still at work.
  run(1);
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    process.stdout.write(`${JSON.stringify(run(Number(line)))}\n`);
  }
} else process.stdout.write(`${JSON.stringify(run(seconds))}\n`);
