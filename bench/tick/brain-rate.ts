/**
 * The in-process ceiling of `bench tick --batch`: Brain.tick over the benchmark's corpus in a
 * loop, no transport, no decoding. Run pinned to the server's CPU:
 *   node dist/bench/tick/brain-rate.js <agents> <seconds>
 * prints {"decisions_per_s": N, "cpu_us_per_decision": C} on stdout (C from the process's CPU
 * time, the figure that holds on a loaded machine).
 */
import { Brain, DEFAULT_BUNDLE, parseTickRequest, type TickRequest } from '../../brain/index.js';
import { generateTicks } from './scenarios.js';

const agents = Number(process.argv[2] ?? 10_000);
const seconds = Number(process.argv[3] ?? 3);
const requests: TickRequest[] = generateTicks({ agents, count: agents, seed: 7 }).map((t) => {
  const parsed = parseTickRequest(t);
  if (!parsed.ok) throw new Error('the corpus holds an invalid tick');
  return parsed.request;
});
const brain = new Brain(DEFAULT_BUNDLE);
// Warm-up: one pass so every agent exists and the code is optimised.
for (const r of requests) brain.tick(r);
let count = 0;
const cpu = process.cpuUsage();
const started = performance.now();
const until = started + seconds * 1000;
let now = started;
while (now < until) {
  for (let k = 0; k < 1000; k++) brain.tick(requests[(count + k) % requests.length]!);
  count += 1000;
  now = performance.now();
}
const used = process.cpuUsage(cpu);
const cpuUs = used.user + used.system;
process.stdout.write(
  `${JSON.stringify({ decisions_per_s: Math.round(count / ((now - started) / 1000)), cpu_us_per_decision: Math.round((cpuUs / count) * 100) / 100 })}\n`,
);
