import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { configuredPlugins } from '../../dialogue/create.js';
import { createLogger, type Logger } from '../../log.js';
import { BundleDirSource } from '../../sidecar/bundle-dir-source.js';
import type { ConfigSource } from '../../sidecar/config-source.js';
import { DefaultsSource } from '../../sidecar/defaults-source.js';
import { startSidecar, type SidecarOptions } from '../../sidecar/service.js';
import { STATE_FILE } from '../../sidecar/state-file.js';
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
  /** Brain state file; default `<bundle dir>/.brainstem-state.json` with --bundle, none otherwise. */
  state?: string;
  /** Seconds between state saves. */
  stateEvery?: string;
  /** Where synthesised lines and voice clips go (voice out / voice in). */
  audioDir?: string;
}

/** Where the brains' memory is kept: --state, else beside a self-hosted bundle, else nowhere. */
export function stateFileFrom(opts: SidecarCliOptions): string | null {
  if (opts.state !== undefined) return opts.state === '' ? null : resolve(opts.state);
  return opts.bundle ? join(resolve(opts.bundle), STATE_FILE) : null;
}

/**
 * The dialogue tier's options from the environment: null unless SERVICE_LLM_BASE_URL and
 * SERVICE_LLM_MODEL are set. Voice out runs only when speech is configured
 * (SERVICE_TTS_ENGINE other than off, or SERVICE_TTS_BASE_URL), voice in when
 * SERVICE_STT_* is; both need an audio directory (--audio-dir, SERVICE_AUDIO_DIR, else a
 * directory under the system temp dir).
 */
export function dialogueFrom(opts: SidecarCliOptions, env: NodeJS.ProcessEnv): SidecarOptions['dialogue'] {
  const plugins = configuredPlugins(env);
  if (!plugins.dialogue) return null;
  const set = (k: string): boolean => (env[k] ?? '').trim() !== '';
  const tts = (set('SERVICE_TTS_ENGINE') && env.SERVICE_TTS_ENGINE!.trim() !== 'off') || set('SERVICE_TTS_BASE_URL');
  const voice = tts || plugins['voice-in'];
  const audioDir = opts.audioDir ?? (set('SERVICE_AUDIO_DIR') ? env.SERVICE_AUDIO_DIR : undefined) ?? (voice ? join(tmpdir(), `brainstem-audio-${process.pid}`) : undefined);
  const tierEnv = tts ? env : { ...env, SERVICE_TTS_ENGINE: 'off' };
  return audioDir ? { env: tierEnv, audioDir: resolve(audioDir) } : { env: tierEnv };
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
  const stateFile = stateFileFrom(opts);
  const stateEveryMs = opts.stateEvery === undefined ? 30_000 : parseInteger(opts.stateEvery, '--state-every', 1, 86_400) * 1000;
  const dialogue = dialogueFrom(opts, env);
  let sidecar;
  try {
    sidecar = await startSidecar({ host, port, source, workers, token: token || null, logger, dialogue, stateFile, stateEveryMs });
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  const config = source.status();
  const mode = workers === 0 ? 'inline' : `${workers} worker${workers === 1 ? '' : 's'}`;
  process.stdout.write(
    `brainstem sidecar listening on ${sidecar.url} (bundle v${config.version} from ${config.source}, ${mode}${token ? ', bearer token required' : ''}${dialogue ? ', dialogue on' : ''}${stateFile ? `, state ${stateFile}` : ''})\n`,
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
    .option('--state <file>', `brain memory file, restored at start and saved periodically and on shutdown (default with --bundle: DIR/${STATE_FILE}; '' = none)`)
    .option('--state-every <s>', 'seconds between brain memory saves (default 30)')
    .option('--audio-dir <dir>', 'directory for synthesised lines and voice clips (env SERVICE_AUDIO_DIR)')
    .action(async (opts: SidecarCliOptions) => runSidecar(opts));
}
