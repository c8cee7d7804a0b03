import type { Command } from 'commander';
import { parseInteger, printJson } from '../util.js';

/** `brainstem bench mods`: a mod's cost on the game thread per character per cadence, per runtime. */
export function registerBenchMods(bench: Command): void {
  bench
    .command('mods')
    .description(
      'CPU µs per character per cadence a mod pays on the game thread (Lua 5.4, Mono C#): gather, build, hand to the HTTP function, read and apply the replies (the exchange itself, off the game thread in the engines, printed beside); beside encoding only',
    )
    .option('--ticks <n>', 'character-cadences measured per character count (rounds = ticks / characters)', '20000')
    .option('--no-csharp', 'skip the Mono C# runtime')
    .option('--json', 'print only JSON')
    .action(async (o: { ticks: string; csharp: boolean; json?: boolean }) => {
      const { formatTable, runModsBench } = await import('../../../bench/mods/run.js');
      const result = await runModsBench({ characters: [10, 100, 500], ticks: parseInteger(o.ticks, '--ticks', 1, 10_000_000), csharp: o.csharp });
      printJson(result);
      if (!o.json) process.stdout.write(`\n${formatTable(result)}\n`);
    });
}
