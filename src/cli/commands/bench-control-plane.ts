import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, parseInteger, printJson, replicaBenchFlags, replicaCpuFlag } from '../util.js';

interface Flags {
  duration: string;
  connections: string;
  threads: string;
  serverCpu: string;
  loadCpu: string;
  poolRate: string;
  rounds: string;
  json?: boolean;
  database?: string;
  replicas: string;
  replicaCpu: string;
  warmup?: string;
  controls?: boolean;
  connectionsEach?: boolean;
  cpuProf?: string;
}

/** `brainstem bench control-plane`: signed 304 pulls and telemetry ingest beside a bare uWS hello-world. */
export function registerBenchControlPlane(bench: Command): void {
  bench
    .command('control-plane')
    .description('signed config pulls (304) and telemetry ingest against `brainstem serve`, beside a bare uWS hello-world (needs wrk and taskset)')
    .option('--duration <s>', 'seconds per scenario and round', '5')
    .option('--connections <n>', 'wrk connections', '64')
    .option('--threads <n>', 'wrk threads', '1')
    .option('--server-cpu <list>', 'taskset CPU list for the servers ("" = unpinned)', '0')
    .option('--load-cpu <list>', 'taskset CPU list for wrk ("" = unpinned)', '1')
    .option('--pool-rate <n>', 'signed requests precomputed per second of run (upper bound of the rate)', '150000')
    .option('--rounds <n>', 'rounds of baseline + scenarios (with --database: of the hello-world, SQLite and each replica count); medians are reported', '3')
    .option(
      '--database <url>',
      'instead: PostgreSQL (a role that may create databases) with --replicas beside one SQLite process, each replica driven by its own wrk',
    )
    .option('--replicas <list>', 'with --database: replica counts to run, comma-separated', '1,3')
    .option(
      '--replica-cpu <cores>',
      'with --database: each serve process (and the hello-world) in a CPU cgroup of its own with this share of a core, made and removed by the bench (root); "none" for no quotas',
      '0.25',
    )
    .option(
      '--warmup <s>',
      'with --database: seconds of unmeasured load before each measured scenario (each process compiles its hot paths first); default 2 s of CPU under the quota: 2 ÷ --replica-cpu (8 at 0.25), 2 without quotas',
    )
    .option(
      '--controls',
      'with --database: for each replica count N above 1, also one replica given a 1/N share of the connections, alone and beside N − 1 busy loops under the same quota (what a replica owes to its share of the clients, to the busier machine, and to the other replicas)',
    )
    .option(
      '--connections-each',
      'with --database: each replica gets --connections of its own (the load grows with the replicas) instead of a share of them; not the split-load measure of the scaling goal',
    )
    .option('--cpu-prof <dir>', 'each serve process writes a V8 CPU profile into this directory, with the measured windows in phases.json')
    .option('--json', 'print only the JSON result')
    .action(async (flags: Flags) => {
      if (flags.database !== undefined) return replicaBench(flags);
      const { runControlPlaneBench, resultTable } = await import('../../../bench/control-plane/run.js');
      const result = await runControlPlaneBench({
        durationS: parseInteger(flags.duration, '--duration', 1, 600),
        connections: parseInteger(flags.connections, '--connections', 1, 10_000),
        threads: parseInteger(flags.threads, '--threads', 1, 64),
        serverCpu: flags.serverCpu || undefined,
        loadCpu: flags.loadCpu || undefined,
        poolRate: parseInteger(flags.poolRate, '--pool-rate', 1000, 5_000_000),
        rounds: parseInteger(flags.rounds, '--rounds', 1, 20),
        cpuProfDir: flags.cpuProf === undefined ? null : resolve(flags.cpuProf),
        log: (line) => {
          if (!flags.json) process.stderr.write(`bench control-plane: ${line}\n`);
        },
      }).catch((err: Error) => {
        throw new CliError(`bench control-plane failed: ${err.message}`);
      });
      printJson(result);
      if (!flags.json) process.stdout.write(`\n${resultTable(result)}\n`);
    });
}

async function replicaBench(flags: Flags): Promise<void> {
  const { url, replicas } = replicaBenchFlags(flags.database!, flags.replicas);
  const { runReplicaBench, replicaTable, defaultWarmupS } = await import('../../../bench/control-plane/replicas.js');
  const replicaCpu = replicaCpuFlag(flags.replicaCpu);
  const warmupS = flags.warmup === undefined ? defaultWarmupS(replicaCpu) : parseInteger(flags.warmup, '--warmup', 0, 600);
  const result = await runReplicaBench({
    database: url,
    replicas,
    durationS: parseInteger(flags.duration, '--duration', 1, 600),
    warmupS,
    cpuProfDir: flags.cpuProf === undefined ? null : resolve(flags.cpuProf),
    connections: parseInteger(flags.connections, '--connections', 1, 10_000),
    serverCpu: flags.serverCpu || undefined,
    loadCpu: flags.loadCpu || undefined,
    poolRate: parseInteger(flags.poolRate, '--pool-rate', 1000, 5_000_000),
    replicaCpu,
    controls: flags.controls === true,
    connectionsEach: flags.connectionsEach === true,
    rounds: parseInteger(flags.rounds, '--rounds', 1, 20),
    log: (line) => {
      if (!flags.json) process.stderr.write(`bench control-plane: ${line}\n`);
    },
  }).catch((err: Error) => {
    throw new CliError(`bench control-plane failed: ${err.message}`);
  });
  printJson(result);
  if (!flags.json) process.stdout.write(`\n${replicaTable(result)}\n`);
}
