/**
 * What `?errors=body` costs a tick that does not ask for it: /tick now reads the query string
 * (one uWS getQuery(), answering undefined without a query) and errorsInBodyOf looks no
 * further. A difference of tens of nanoseconds drowns in a shared machine's noise at the level
 * of `bench tick`, so it is amplified here: two uWS routes answer the same constant reply, one
 * reading the query and judging it READS times per request, the other not at all; the same
 * requests go to each in turn over one keep-alive connection, rounds interleaved, and the CPU
 * time of the difference is divided by the reads. Run: node dist/bench/tick/query-read.js [--json]
 */
import { request, Agent } from 'node:http';
import uWS from 'uWebSockets.js';
import { errorsInBodyOf } from '../../src/http/errors-in-body.js';

const READS = 20_000;
const REQUESTS = 200;
const ROUNDS = 7;
const CONTENT_TYPE = Buffer.from('content-type');

async function main(): Promise<void> {
  const app = uWS.App();
  let sink = 0;
  app.post('/plain', (res) => {
    res.onAborted(() => {});
    res.end('{}');
  });
  app.post('/reads', (res, req) => {
    res.onAborted(() => {});
    const type = req.getHeader(CONTENT_TYPE);
    for (let i = 0; i < READS; i++) if (errorsInBodyOf(req.getQuery(), type) !== null) sink++;
    res.end('{}');
  });
  const port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(uWS.us_socket_local_port(s)) : reject(new Error('cannot listen')))),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (path: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': 2 } },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
  const cpu = async (path: string): Promise<number> => {
    const start = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i++) await send(path);
    const used = process.cpuUsage(start);
    return (used.user + used.system) * 1000;
  };
  await cpu('/plain');
  await cpu('/reads');
  const perRead: number[] = [];
  const plainUs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const plain = await cpu('/plain');
    const reads = await cpu('/reads');
    perRead.push((reads - plain) / (REQUESTS * READS));
    plainUs.push(plain / REQUESTS / 1000);
  }
  agent.destroy();
  (app as uWS.TemplatedApp & { close(): void }).close();
  perRead.sort((a, b) => a - b);
  const median = perRead[Math.floor(perRead.length / 2)]!;
  plainUs.sort((a, b) => a - b);
  // The baseline: this process's CPU per request (client and server) for the route that reads nothing.
  const baseline = Math.round(plainUs[Math.floor(plainUs.length / 2)]! * 10) / 10;
  const report = {
    reads_per_request: READS,
    requests: REQUESTS,
    rounds: ROUNDS,
    ns_per_query_read_median: Math.round(median),
    ns_per_query_read_min: Math.round(perRead[0]!),
    baseline_us_per_request: baseline,
    sink,
  };
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(report)}\n`);
  else
    process.stdout.write(
      `query read + errorsInBodyOf, no query: ${report.ns_per_query_read_median} ns median (min ${report.ns_per_query_read_min}) per tick, beside ${baseline} µs CPU per request of the same route without it (client and server in this process); ${ROUNDS} interleaved rounds of ${REQUESTS} requests × ${READS} reads\n`,
    );
}

await main();
