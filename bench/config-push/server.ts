// The control plane under test, in a process of its own so that its memory and CPU are its
// own: `node server.js DB_FILE MAX_STREAMS` prints "listening PORT".
import { startEmbedded } from '../../src/embedded/start.js';

const [db, streams] = [process.argv[2]!, Number(process.argv[3] ?? 20_000)];
const server = await startEmbedded({
  port: 0,
  db,
  adminToken: 'bsa_bench_admin_token',
  // Every simulated sidecar uses the one server key: the benchmark lifts the per-key limits
  // (streams, signed requests a minute) that a single real sidecar never comes near.
  streamLimits: { perKey: streams, total: streams },
  limits: { serverKey: { limit: 1e9, windowMs: 60_000 }, session: { limit: 1e9, windowMs: 60_000 } },
});
process.stdout.write(`listening ${server.port}\n`);
process.on('SIGTERM', () => {
  void server.close().finally(() => process.exit(0));
});
