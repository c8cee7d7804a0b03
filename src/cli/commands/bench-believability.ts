import type { Command } from 'commander';
import { progress, type Progress } from '../progress.js';
import { CliError } from '../util.js';

/** `brainstem bench believability`: the behaviour table's figures on the standard simulator scenarios. */
export function registerBenchBelievability(bench: Command): void {
  bench
    .command('believability')
    .description('run the standard scenarios (crowd, waves, quiet, ambush-30, a one-hostile probe) and report every believability figure beside its goal')
    .option('--scale <f>', 'shrink populations and durations, 0 < f <= 1 (1 = 50 characters, 5 min, 10 min, 3 h, 200 probes)', '1')
    .option('--only <names>', 'comma-separated runs to measure (crowd,waves,quiet,ambush-30); the probe always runs')
    .option('--json', 'print only the JSON result')
    .action(async (flags: { scale: string; only?: string; json?: boolean }) => {
      const scale = Number(flags.scale);
      if (!(scale > 0 && scale <= 1)) throw new CliError(`--scale must be a number in (0, 1], got ${flags.scale}`);
      const only = flags.only
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const { runBelievability, formatTable, RUNS } = await import('../../../bench/sim/believability.js');
      const unknown = only?.filter((n) => !(RUNS as readonly string[]).includes(n)) ?? [];
      if (unknown.length > 0) throw new CliError(`--only: unknown run ${unknown.join(', ')}; known: ${RUNS.join(', ')}`);
      // One progress line per run (crowd, waves, …), each ended when the next begins.
      let shown: { run: string; meter: Progress } | null = null;
      const result = await runBelievability(scale, only, (run, done, steps) => {
        if (shown?.run !== run) {
          shown?.meter.finish();
          shown = { run, meter: progress({ label: `bench believability ${run}`, total: steps, unit: 'steps', json: flags.json === true }) };
        }
        shown.meter.update(done);
      });
      (shown as { meter: Progress } | null)?.meter.finish();
      process.stdout.write(`${JSON.stringify(result)}\n`);
      if (!flags.json) process.stdout.write(`${formatTable(result)}\n`);
    });
}
