import type { Command } from 'commander';
import { parseInteger, printJson } from '../util.js';

/** `brainstem bench dialogue`: onTick cost with the dialogue tier on (slow model) vs off, same run. */
export function registerBenchDialogue(bench: Command): void {
  bench
    .command('dialogue')
    .description('cost of DialogueTier.onTick per call, dialogue on (model answering after --latency-ms) vs off, in one run')
    .option('--agents <n>', 'characters ticked per round', '300')
    .option('--seconds <s>', 'real seconds per variant', '6')
    .option('--latency-ms <ms>', 'model server latency', '2000')
    .option('--json', 'print only JSON')
    .action(async (o: { agents: string; seconds: string; latencyMs: string; json?: boolean }) => {
      const { formatTable, runDialogueBench } = await import('../../../bench/dialogue/run.js');
      const result = await runDialogueBench({
        agents: parseInteger(o.agents, '--agents', 1, 100_000),
        seconds: parseInteger(o.seconds, '--seconds', 1, 3600),
        latencyMs: parseInteger(o.latencyMs, '--latency-ms', 0, 600_000),
      });
      printJson(result);
      if (!o.json) process.stdout.write(`\n${formatTable(result)}\n`);
    });
}
