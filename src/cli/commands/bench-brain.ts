import type { Command } from 'commander';
import { parseInteger } from '../util.js';

/** `brainstem bench brain`: Brain.tick alone, every policy off beside every policy on, same traffic, same run. */
export function registerBenchBrain(bench: Command): void {
  bench
    .command('brain')
    .description('micro-benchmark of Brain.tick: purely reactive (every policy off) vs every subsystem on')
    .option('--agents <n>', 'distinct agents (default 200)')
    .option('--ticks <n>', 'ticks each agent gets per round, so a round is agents × ticks ticks (default 200)')
    .option('--rounds <n>', 'rounds (the median is reported; default 7)')
    .option('--json', 'print only the JSON result')
    .action(async (flags: { agents?: string; ticks?: string; rounds?: string; json?: boolean }) => {
      const { runBrainMicro, formatTable } = await import('../../../bench/brain-micro.js');
      const n = (v: string | undefined, name: string) => (v === undefined ? undefined : parseInteger(v, name, 1, 10_000_000));
      const result = runBrainMicro({ agents: n(flags.agents, '--agents'), ticks: n(flags.ticks, '--ticks'), rounds: n(flags.rounds, '--rounds') });
      process.stdout.write(`${JSON.stringify(result)}\n`);
      if (!flags.json) process.stdout.write(`${formatTable(result)}\n`);
    });
}
