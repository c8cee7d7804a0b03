import type { Command } from 'commander';
import { CliError, parseInteger, printJson, replicaBenchFlags } from '../util.js';

interface Flags {
  sidecars: string;
  publishes: string;
  connectBatch: string;
  ofrepDuration: string;
  ofrepRounds: string;
  serverCpu: string;
  loadCpu: string;
  json?: boolean;
  database?: string;
  replicas: string;
}

/** `brainstem bench config-push`: publish-to-applied over push streams, memory per stream, CPU per publish; OFREP beside a uWS hello-world. */
export function registerBenchConfigPush(bench: Command): void {
  bench
    .command('config-push')
    .description(
      'simulated sidecars holding config push streams on `serve`: publish to applied p50/p99, memory per stream, CPU per publish; OFREP evaluations beside a bare uWS hello-world (needs wrk, taskset, prlimit)',
    )
    .option('--sidecars <list>', 'simulated sidecar counts, comma-separated', '1000,10000')
    .option('--publishes <n>', 'publishes timed per count', '5')
    .option('--connect-batch <n>', 'streams opened at once', '500')
    .option('--ofrep-duration <s>', 'seconds per OFREP wrk run', '5')
    .option('--ofrep-rounds <n>', 'rounds of hello-world + OFREP; medians are reported', '3')
    .option('--server-cpu <list>', 'taskset CPU list for the servers ("" = unpinned)', '0')
    .option('--load-cpu <list>', 'taskset CPU list for wrk ("" = unpinned)', '1')
    .option(
      '--database <url>',
      'instead: the push across replicas on this PostgreSQL (a role that may create databases): the first --sidecars count of streams spread over --replicas serve processes, each publish through one of them',
    )
    .option('--replicas <n>', 'with --database: serve processes', '3')
    .option('--json', 'print only the JSON result')
    .action(async (flags: Flags) => {
      if (flags.database !== undefined) return replicaPush(flags);
      const counts = flags.sidecars.split(',').map((s) => parseInteger(s.trim(), '--sidecars', 1, 30_000));
      const { runConfigPushBench, pushTable } = await import('../../../bench/config-push/run.js');
      const result = await runConfigPushBench({
        counts,
        publishes: parseInteger(flags.publishes, '--publishes', 1, 100),
        connectBatch: parseInteger(flags.connectBatch, '--connect-batch', 1, 10_000),
        ofrepDurationS: parseInteger(flags.ofrepDuration, '--ofrep-duration', 1, 600),
        ofrepRounds: parseInteger(flags.ofrepRounds, '--ofrep-rounds', 1, 20),
        serverCpu: flags.serverCpu || undefined,
        loadCpu: flags.loadCpu || undefined,
        log: (line) => {
          if (!flags.json) process.stderr.write(`bench config-push: ${line}\n`);
        },
      }).catch((err: Error) => {
        throw new CliError(`bench config-push failed: ${err.message}`);
      });
      printJson(result);
      if (!flags.json) process.stdout.write(`\n${pushTable(result)}\n`);
    });
}

async function replicaPush(flags: Flags): Promise<void> {
  const { url, replicas } = replicaBenchFlags(flags.database!, flags.replicas);
  if (replicas.length !== 1 || replicas[0]! < 2) throw new CliError('--replicas must be one count of 2 or more with --database');
  const { runPushReplicaBench, pushReplicaTable } = await import('../../../bench/config-push/replicas.js');
  const result = await runPushReplicaBench({
    database: url,
    replicas: replicas[0]!,
    sidecars: parseInteger(flags.sidecars.split(',')[0]!.trim(), '--sidecars', 1, 30_000),
    publishes: parseInteger(flags.publishes, '--publishes', 1, 100),
    connectBatch: parseInteger(flags.connectBatch, '--connect-batch', 1, 10_000),
    serverCpu: flags.serverCpu || undefined,
    log: (line) => {
      if (!flags.json) process.stderr.write(`bench config-push: ${line}\n`);
    },
  }).catch((err: Error) => {
    throw new CliError(`bench config-push failed: ${err.message}`);
  });
  printJson(result);
  if (!flags.json) process.stdout.write(`\n${pushReplicaTable(result)}\n`);
}
