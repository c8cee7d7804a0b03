import type { Command } from 'commander';
import type { TickPolicy } from '../../../bench/tick/policy.js';
import { MAX_BATCH_TICKS } from '../../sidecar/tick/batch-cap.js';
import { CliError, parseInteger, printJson } from '../util.js';

interface TickBenchFlags {
  duration: string;
  warmup: string;
  rounds: string;
  connections: string;
  agents: string;
  rate: string;
  serverCpu: string;
  clientCpu: string;
  wrk: string;
  json?: boolean;
  micro?: boolean;
  dialogue?: boolean;
  latencyMs: string;
  policy?: string;
  batch?: string;
}

/**
 * `--policy` checked against the other mode flags; undefined when not given. The benchmark's
 * modules load only here, when a bench command runs, never with the rest of the CLI.
 */
export async function tickPolicyOf(flags: Pick<TickBenchFlags, 'policy' | 'micro' | 'dialogue'>): Promise<TickPolicy | undefined> {
  if (flags.policy === undefined) return undefined;
  const { parseTickPolicy } = await import('../../../bench/tick/policy.js');
  let policy: TickPolicy;
  try {
    policy = parseTickPolicy(flags.policy);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  if (flags.micro || flags.dialogue) throw new CliError(`--policy cannot be combined with ${flags.micro ? '--micro' : '--dialogue'}`);
  return policy;
}

/** `--batch 1,10,100`: batch sizes from 1 to the /ticks cap. */
export function batchSizesOf(text: string): number[] {
  const sizes = text.split(',').map((part) => parseInteger(part.trim(), '--batch', 1, MAX_BATCH_TICKS));
  if (sizes.length === 0) throw new CliError('--batch needs at least one size');
  return sizes;
}

/** The measured runs' settings from the flags, each checked against its range. */
function tickOptions(flags: TickBenchFlags) {
  return {
    duration: parseInteger(flags.duration, '--duration', 1, 3600),
    warmup: parseInteger(flags.warmup, '--warmup', 0, 600),
    rounds: parseInteger(flags.rounds, '--rounds', 1, 50),
    connections: parseInteger(flags.connections, '--connections', 1, 10000),
    agents: parseInteger(flags.agents, '--agents', 1, 1_000_000),
    rate: parseInteger(flags.rate, '--rate', 1, 1_000_000),
    serverCpu: flags.serverCpu,
    clientCpu: flags.clientCpu,
    wrk: flags.wrk,
  };
}

/** Runs one benchmark and prints its report as JSON or a table; a failure of the run is a CLI error naming it. */
async function report<T>(json: boolean | undefined, run: () => Promise<T>, format: (r: T) => string): Promise<void> {
  try {
    const r = await run();
    if (json) printJson(r);
    else process.stdout.write(`${format(r)}\n`);
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

/** `brainstem bench tick`: /tick over loopback with wrk, against bare uWS and node:http baselines. */
export function registerTickBench(bench: Command): void {
  bench
    .command('tick')
    .description('drive POST /tick with wrk (JSON and MessagePack; inline, 1 and 2 workers) against a bare uWS and a node:http baseline')
    .option('--duration <s>', 'seconds per measured run', '5')
    .option('--warmup <s>', 'seconds of warm-up before each run', '1')
    .option('--rounds <n>', "repeat the whole sequence and report each row's median run", '3')
    .option('--connections <n>', 'wrk connections for the maximum-throughput runs', '50')
    .option('--agents <n>', 'distinct agents in the replayed corpus', '10000')
    .option('--rate <n>', 'offered ticks/s of the fixed-rate run', '5000')
    .option('--server-cpu <list>', 'taskset CPU list for the server under test', '0')
    .option('--client-cpu <list>', 'taskset CPU list for wrk', '1')
    .option('--wrk <path>', 'wrk binary', '/usr/bin/wrk')
    .option('--json', 'print the report as JSON instead of a table')
    .option('--micro', 'instead: micro-benchmark the hot functions (decode, validate, encode) against the generic codec')
    .option('--dialogue', 'instead: the sidecar inline with and without the dialogue tier (JSON), its model a scripted server answering in --latency-ms')
    .option('--latency-ms <ms>', 'model latency of the --dialogue run', '2000')
    .option(
      '--batch [sizes]',
      'instead: POST /ticks with N agents per request (comma-separated, default 1,10,100,500) against per-request /tick and Brain.tick in process, inline JSON',
    )
    .option(
      '--policy <all|none|compare>',
      'brain under test with every bundle policy on (all) or off (none); compare: the sidecar inline (JSON) under both in the same run, with the ratio (target ≥ 0.6)',
    )
    .action(async (flags: TickBenchFlags) => {
      const policy = await tickPolicyOf(flags);
      if (flags.batch !== undefined && (flags.micro || flags.dialogue || policy !== undefined))
        throw new CliError('--batch cannot be combined with --micro, --dialogue or --policy');
      if (flags.micro) {
        const { runTickMicro, formatMicro } = await import('../../../bench/tick/micro.js');
        const rows = runTickMicro();
        if (flags.json) printJson(rows);
        else process.stdout.write(`${formatMicro(rows)}\n`);
        return;
      }
      const { runTickBench, formatTable } = await import('../../../bench/tick/run.js');
      const options = tickOptions(flags);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      if (flags.batch !== undefined) {
        const { runBatchBench, formatBatchTable, DEFAULT_BATCH_SIZES } = await import('../../../bench/tick/batch.js');
        const sizes = typeof flags.batch === 'string' ? batchSizesOf(flags.batch) : [...DEFAULT_BATCH_SIZES];
        return report(flags.json, () => runBatchBench(options, sizes, log), formatBatchTable);
      }
      if (policy === 'compare') {
        const { runPolicyCompare, formatPolicyCompare } = await import('../../../bench/tick/policy-compare.js');
        return report(flags.json, () => runPolicyCompare(options, log), formatPolicyCompare);
      }
      if (flags.dialogue) {
        const { runDialogueBench, formatDialogueTable } = await import('../../../bench/tick/dialogue.js');
        const latencyMs = parseInteger(flags.latencyMs, '--latency-ms', 0, 600_000);
        return report(flags.json, () => runDialogueBench(options, latencyMs, log), formatDialogueTable);
      }
      return report(flags.json, () => runTickBench(policy === undefined ? options : { ...options, policy }, log), formatTable);
    });
}
