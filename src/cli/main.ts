import { Command, CommanderError } from 'commander';
import { logLevelOf } from '../log.js';
import { commands } from './commands/index.js';
import { CliError } from './util.js';

try {
  logLevelOf(process.env.BRAINSTEM_LOG);
} catch (err) {
  process.stderr.write(`brainstem: ${(err as Error).message}\n`);
  process.exit(1);
}

const program = new Command('brainstem')
  .description('Game-server brains: the brain sidecar, and the embedded control plane, property-video API and webhooks.')
  .version(process.env.npm_package_version ?? '0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

for (const register of commands) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode);
  }
  const message = err instanceof CliError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`brainstem: ${message}\n`);
  process.exit(err instanceof CliError ? err.exitCode : 1);
}
