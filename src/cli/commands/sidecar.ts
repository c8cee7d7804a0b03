import type { Command } from 'commander';
import { createLogger, type Logger } from '../../log.js';
import { BundleDirSource } from '../../sidecar/bundle-dir-source.js';
import type { ConfigSource } from '../../sidecar/config-source.js';
import { DefaultsSource } from '../../sidecar/defaults-source.js';
import { startSidecar } from '../../sidecar/service.js';
import { CliError, parseAddr, parseInteger, untilSignal } from '../util.js';

export const DEFAULT_SIDECAR_ADDR = '127.0.0.1:8088';

/**
 * Inline evaluation measured faster than worker shards on the 2-core reference machine for
 * the reactive brain (bench/results/sidecar.md); workers pay only when a tick's own work is
 * well above the cost of a worker round trip.
 */
export const DEFAULT_WORKERS = 0;

/** The parsed command line of `brainstem sidecar`: one place to add config sources and tiers. */
export interface SidecarCliOptions {
  bundle?: string;
  addr?: string;
  token?: string;
  workers?: string;
}

/** Picks the config source from the options: a bundle directory, else the built-in defaults. */
export function configSourceFrom(opts: SidecarCliOptions, logger: Logger): ConfigSource {
  if (opts.bundle) return new BundleDirSource(opts.bundle, { logger });
  return new DefaultsSource();
}

export async function runSidecar(opts: SidecarCliOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger();
  const { host, port } = parseAddr(opts.addr ?? env.SERVICE_BRAIN_ADDR ?? DEFAULT_SIDECAR_ADDR, opts.addr ? '--addr' : 'SERVICE_BRAIN_ADDR');
  const workers = opts.workers === undefined ? DEFAULT_WORKERS : parseInteger(opts.workers, '--workers', 0, 64);
  const token = opts.token ?? env.SERVICE_BRAIN_TOKEN ?? '';
  const source = configSourceFrom(opts, logger);
  let sidecar;
  try {
    sidecar = await startSidecar({ host, port, source, workers, token: token || null, logger });
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  const config = source.status();
  const mode = workers === 0 ? 'inline' : `${workers} worker${workers === 1 ? '' : 's'}`;
  process.stdout.write(
    `brainstem sidecar listening on ${sidecar.url} (bundle v${config.version} from ${config.source}, ${mode}${token ? ', bearer token required' : ''})\n`,
  );
  const signal = await untilSignal();
  logger.info('shutting down', { signal });
  await sidecar.close();
}

export function registerSidecar(program: Command): void {
  program
    .command('sidecar')
    .description('run the brain sidecar: POST /tick answers a character snapshot with intents')
    .option('--bundle <dir>', 'self-hosted config bundle directory (watched and reloaded); default: the built-in bundle')
    .option('--addr <host:port>', `bind address (env SERVICE_BRAIN_ADDR, default ${DEFAULT_SIDECAR_ADDR})`)
    .option('--token <token>', 'bearer token required on /tick (env SERVICE_BRAIN_TOKEN)')
    .option('--workers <n>', `worker threads evaluating ticks, agents sharded over them; 0 = on the main thread (default ${DEFAULT_WORKERS})`)
    .action(async (opts: SidecarCliOptions) => runSidecar(opts));
}
