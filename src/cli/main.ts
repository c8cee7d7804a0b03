import { Command, CommanderError } from 'commander';
import { logLevelOf } from '../log.js';
import { commandsFor } from './commands/index.js';
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

for (const register of await commandsFor(process.argv.slice(2))) register(program);

/**
 * Exits once everything written so far has left: on a pipe, stdout and stderr are written
 * asynchronously, and process.exit() drops what is still queued (a reader under load saw a
 * command print nothing at all).
 */
async function exitFlushed(code: number): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write('', () => resolve()))));
  process.exit(code);
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) await exitFlushed(err.exitCode);
  const message = err instanceof CliError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`brainstem: ${message}\n`);
  await exitFlushed(err instanceof CliError ? err.exitCode : 1);
}
