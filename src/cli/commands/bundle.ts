import type { Command } from 'commander';
import { bundleDirOf, loadBundleDir } from '../../bundles.js';
import { CliError, printJson } from '../util.js';

export function registerBundle(program: Command): void {
  const bundle = program.command('bundle').description('work with configuration bundle directories');
  bundle
    .command('validate')
    .description('validate a bundle directory with the same rules as a publish (exit 1 and every reason when invalid)')
    .argument('<dir>', 'bundle directory (holds bundle.json), or the bundle.json file itself')
    .option('--json', 'print the result as JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      let bundleDir: string;
      try {
        bundleDir = bundleDirOf(dir);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      const result = await loadBundleDir(bundleDir);
      if (opts.json) printJson(result.ok ? { ok: true, version: result.bundle.version } : { ok: false, problems: result.problems });
      else if (result.ok) process.stdout.write(`${dir}: valid (version ${result.bundle.version})\n`);
      else for (const p of result.problems) process.stderr.write(`${dir}: ${p.path || '(bundle)'}: ${p.message}\n`);
      if (!result.ok) process.exitCode = 1;
    });
}
