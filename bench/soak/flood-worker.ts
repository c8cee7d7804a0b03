import { parentPort, workerData } from 'node:worker_threads';
import { FLOOD, shoot, type Kind, type Outcome, type SoakContext } from './traffic.js';

/**
 * The flooding tenant's clients, on their own thread: on the well-behaved client's event loop
 * they would delay its requests before they were even sent, and the measured ratio would be
 * the client's own queueing. Posts every outcome back when the run ends.
 */
const { ctx, clients, until } = workerData as { ctx: SoakContext; clients: number; until: number };
ctx.png = Buffer.from(ctx.png);

const total = FLOOD.reduce((a, k) => a + k.weight, 0);
function pick(): Kind {
  let r = Math.random() * total;
  for (const k of FLOOD) if ((r -= k.weight) < 0) return k;
  return FLOOD[0]!;
}

const outcomes: Outcome[] = [];
async function client(): Promise<void> {
  while (Date.now() < until) outcomes.push(await shoot(pick(), ctx));
}

await Promise.all(Array.from({ length: clients }, client));
parentPort!.postMessage(outcomes);
