import type { Command } from 'commander';
import { CliError, parseInteger, printJson } from '../util.js';

interface Flags {
  duration: string;
  baseline: string;
  flood: string;
  calmRate: string;
  json?: boolean;
}

/** `brainstem bench soak`: mixed traffic against `brainstem up`, a well-behaved client measured beside a flooding one. */
export function registerBenchSoak(bench: Command): void {
  bench
    .command('soak')
    .description(
      "mixed traffic against `brainstem up` (ticks, pulls, telemetry, uploads, events, wrong-password logins, malformed requests): per-route p99, errors, RSS, and a well-behaved client's p99 against an unloaded run",
    )
    .option('--duration <s>', 'seconds of mixed traffic under load', '600')
    .option('--baseline <s>', 'seconds of the unloaded run of the well-behaved client', '30')
    .option('--flood <n>', 'concurrent flooding clients', '8')
    .option('--calm-rate <n>', 'requests per second of the well-behaved client', '30')
    .option('--json', 'print only the JSON result')
    .action(async (flags: Flags) => {
      // The harness lives in bench/ and is loaded only when this command runs.
      const { runSoak, soakTable } = await import('../../../bench/soak/run.js');
      const result = await runSoak({
        durationS: parseInteger(flags.duration, '--duration', 5, 86_400),
        baselineS: parseInteger(flags.baseline, '--baseline', 2, 3600),
        floodWorkers: parseInteger(flags.flood, '--flood', 1, 256),
        calmRate: parseInteger(flags.calmRate, '--calm-rate', 1, 1000),
        log: (line) => {
          if (!flags.json) process.stderr.write(`bench soak: ${line}\n`);
        },
      }).catch((err: Error) => {
        throw new CliError(`bench soak failed: ${err.message}`);
      });
      if (flags.json) printJson(result);
      else process.stdout.write(`${soakTable(result)}\n`);
    });
}
