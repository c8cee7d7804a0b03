import type { Command } from 'commander';
import { parseInteger, printJson } from '../util.js';

/** `brainstem bench mods`: a mod's cost on the game thread per character per cadence, per runtime. */
export function registerBenchMods(bench: Command): void {
  bench
    .command('mods')
    .description('CPU µs per character per cadence a mod pays on the game thread (Lua 5.4): gather, build, send, apply; beside encoding only')
    .option('--rounds <n>', 'cadences measured per character count', '20')
    .option('--json', 'print only JSON')
    .action(async (o: { rounds: string; json?: boolean }) => {
      const { formatTable, runModsBench } = await import('../../../bench/mods/run.js');
      const result = await runModsBench({ characters: [10, 100, 500], rounds: parseInteger(o.rounds, '--rounds', 1, 10_000) });
      printJson(result);
      if (!o.json) process.stdout.write(`\n${formatTable(result)}\n`);
    });
}
