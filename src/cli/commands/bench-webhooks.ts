import type { Command } from 'commander';
import { CliError, parseInteger, replicaBenchFlags, replicaCpuFlag } from '../util.js';

/** The command's flags, as commander gives them (strings until parsed). */
interface BenchWebhooksFlags {
  deliveries: string;
  events: string;
  json?: boolean;
  database?: string;
  replicas: string;
  endpoints: string;
  replicaCpu: string;
  warmup: string;
  rounds?: string;
}

/** `brainstem bench webhooks`: outbox → receiver throughput beside a raw-POST baseline, and enqueue latency. */
export function registerBenchWebhooks(bench: Command): void {
  bench
    .command('webhooks')
    .description('deliveries/s from the outbox to a local receiver (1, 10, 100 endpoints) beside raw POSTs/s, and events accepted/s with p99 enqueue latency')
    .option('--deliveries <n>', 'deliveries per scenario', '20000')
    .option('--events <n>', 'events for the enqueue measurement', '20000')
    .option(
      '--database <url>',
      'instead: PostgreSQL (a role that may create databases) with --replicas serve processes beside one on SQLite, events posted over HTTP and delivered to a local receiver',
    )
    .option('--replicas <list>', 'with --database: replica counts to run, comma-separated', '1,3')
    .option('--endpoints <n>', 'with --database: endpoints the deliveries are spread over', '8')
    .option('--warmup <n>', 'with --database: deliveries each serve process makes unmeasured first (it compiles its hot paths)', '4000')
    .option(
      '--replica-cpu <cores>',
      'with --database: each serve process in a CPU cgroup of its own with this share of a core, made and removed by the bench (root); "none" for no quotas',
      '0.25',
    )
    .option(
      '--rounds <n>',
      'with --database: rounds of SQLite and each replica count, fresh processes each; the factors of each round and their medians are reported (default 3). Without: rounds of every scenario, a raw-POST baseline before each scenario run and one more after the last; each scenario run is compared with the baselines just before and after it, the median over the rounds reported (default 1)',
    )
    .option('--json', 'print JSON only')
    .action(async (flags: BenchWebhooksFlags) => {
      if (flags.database !== undefined) return replicaBench(flags);
      const deliveries = parseInteger(flags.deliveries, '--deliveries', 100, 10_000_000);
      const events = parseInteger(flags.events, '--events', 100, 10_000_000);
      // The harness lives in bench/ and is loaded only when this command runs.
      const { runWebhooksBench, formatTable } = await import('../../../bench/webhooks/run.js');
      const rounds = parseInteger(flags.rounds ?? '1', '--rounds', 1, 20);
      const result = await runWebhooksBench({ deliveries, events, rounds });
      if (!flags.json) process.stdout.write(`${formatTable(result)}\n\n`);
      process.stdout.write(`${JSON.stringify(result, null, flags.json ? 2 : undefined)}\n`);
    });
}

async function replicaBench(flags: BenchWebhooksFlags): Promise<void> {
  const { url, replicas } = replicaBenchFlags(flags.database!, flags.replicas);
  const { runWebhookReplicaBench, replicaTable } = await import('../../../bench/webhooks/replicas.js');
  const result = await runWebhookReplicaBench({
    database: url,
    replicas,
    deliveries: parseInteger(flags.deliveries, '--deliveries', 100, 10_000_000),
    endpoints: parseInteger(flags.endpoints, '--endpoints', 1, 100),
    warmupDeliveries: parseInteger(flags.warmup, '--warmup', 0, 10_000_000),
    replicaCpu: replicaCpuFlag(flags.replicaCpu),
    rounds: parseInteger(flags.rounds ?? '3', '--rounds', 1, 20),
    log: (line) => {
      if (!flags.json) process.stderr.write(`bench webhooks: ${line}\n`);
    },
  }).catch((err: Error) => {
    throw new CliError(`bench webhooks failed: ${err.message}`);
  });
  if (!flags.json) process.stdout.write(`${replicaTable(result)}\n\n`);
  process.stdout.write(`${JSON.stringify(result, null, flags.json ? 2 : undefined)}\n`);
}
