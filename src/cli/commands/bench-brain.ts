import type { Command } from 'commander';
import { parseInteger } from '../util.js';

/** `brainstem bench brain`: Brain.tick alone, every policy off beside every policy on, same traffic, same run. */
export function registerBenchBrain(bench: Command): void {
  bench
    .command('brain')
    .description('micro-benchmark of Brain.tick: purely reactive (every policy off) vs every subsystem on')
    .option('--agents <n>', 'distinct agents (default 200)')
    .option('--ticks <n>', 'ticks each agent gets per round, so a round is agents × ticks ticks (default 200)')
    .option('--rounds <n>', 'rounds (the median is reported; default 7, with --explain 9)')
    .option('--explain', 'instead: what explaining a tick costs (explain on vs off), and with --against what a tick that does not ask costs')
    .option('--against <dir>', "another build's dist/ directory (a checkout from before, built) whose Brain runs beside this one, in the same rounds")
    .option('--json', 'print only the JSON result')
    .action(async (flags: { agents?: string; ticks?: string; rounds?: string; explain?: boolean; against?: string; json?: boolean }) => {
      const n = (v: string | undefined, name: string) => (v === undefined ? undefined : parseInteger(v, name, 1, 10_000_000));
      const sizes = { agents: n(flags.agents, '--agents'), ticks: n(flags.ticks, '--ticks'), rounds: n(flags.rounds, '--rounds') };
      if (flags.explain) {
        const { runBrainExplain, formatExplainTable } = await import('../../../bench/brain-explain.js');
        const result = await runBrainExplain({ ...sizes, ...(flags.against === undefined ? {} : { against: flags.against }) });
        process.stdout.write(`${JSON.stringify(result)}\n`);
        if (!flags.json) process.stdout.write(`${formatExplainTable(result)}\n`);
        return;
      }
      const { runBrainMicro, formatTable, loadAgainst } = await import('../../../bench/brain-micro.js');
      const result = runBrainMicro({ ...sizes, ...(flags.against === undefined ? {} : { against: await loadAgainst(flags.against) }) });
      process.stdout.write(`${JSON.stringify(result)}\n`);
      if (!flags.json) process.stdout.write(`${formatTable(result)}\n`);
    });
}
