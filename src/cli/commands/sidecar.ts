import { tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import { canonicalPublicKey, PUBLIC_KEY_PREFIX } from '../../signing/bundle.js';
import { BundleTrust } from '../../sidecar/config/bundle-trust.js';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { configuredPlugins } from '../../dialogue/configured.js';
import { modelServerProblem } from '../../dialogue/model-check.js';
import { createLogger, type Logger } from '../../log.js';
import type { ConfigOrigin, ConfigSource } from '../../sidecar/config/config-source.js';
import type { ControlPlaneLinkOptions } from '../../sidecar/link/control-plane-link.js';
import type { Sidecar, SidecarOptions } from '../../sidecar/service.js';
import { defaultStateDir } from '../../sidecar/state/state-dir.js';
import { defaultStateFile } from '../../sidecar/state/state-file.js';
import {
  ACCESS_LOG_FLAG_HELP,
  accessLogFlag,
  CliError,
  connectionFlags,
  MAX_CONNECTIONS_HELP,
  MAX_CONNECTIONS_PER_ADDRESS_HELP,
  parseAddr,
  parseInteger,
  startError,
  addressFlag,
  untilSignal,
} from '../util.js';
import { DATA_DIR_ENV, sidecarDataDir } from '../data-dir.js';

export const DEFAULT_SIDECAR_ADDR = '127.0.0.1:8088';

/** `--demo-dialogue` of sidecar, up and sim. */
export const DEMO_DIALOGUE_HELP =
  "characters talk without a model: scripted lines from the bundle's roles and flavor themes, through the dialogue tier's limits, phrase cache and counters (SERVICE_LLM_* is then not used)";

/** Where the running bundle came from, as the start-up banner says it. */
const ORIGIN_TEXT: Record<ConfigOrigin, string> = {
  'bundle-dir': 'the bundle directory',
  'control-plane': 'the control plane',
  'disk-cache': 'the last good pull saved on disk',
  defaults: 'the built-in defaults',
};

/**
 * Inline evaluation measured faster than worker shards on the 2-core reference machine for
 * the reactive brain (bench/RESULTS.md); workers pay only when a tick's own work is
 * well above the cost of a worker round trip.
 */
export const DEFAULT_WORKERS = 0;

/** The parsed command line of `brainstem sidecar`: one place to add config sources and tiers. */
export interface SidecarCliOptions {
  bundle?: string;
  addr?: string;
  token?: string;
  workers?: string;
  /** Brain state file; default `.brainstem/brain-state.json` under the working directory (see defaultStateFile); '' for none. */
  state?: string;
  /** Seconds between state saves. */
  stateEvery?: string;
  /** Where synthesised lines and voice clips go (voice out / voice in). */
  audioDir?: string;
  /** Control-plane source (env SERVICE_CONTROL_PLANE_URL, SERVICE_SERVER_ID, SERVICE_SERVER_KEY). */
  controlPlane?: string;
  serverId?: string;
  serverKey?: string;
  /** Seconds, fractions allowed. */
  pollInterval?: string;
  telemetryInterval?: string;
  maxBackoff?: string;
  /** Control-plane state directory (last good bundle, telemetry buffer). */
  stateDir?: string;
  /** Admit an http:// control plane that is not on loopback (env SERVICE_INSECURE_HTTP=1). */
  insecureHttp?: boolean;
  /** One JSON line per request on stderr. */
  accessLog?: boolean;
  /** Where the sidecar's `.brainstem/` state goes (env BRAINSTEM_DATA_DIR); default the working directory. */
  dataDir?: string;
  /** Characters talk from the built-in scripted line source, no model needed. */
  demoDialogue?: boolean;
  maxConnections?: string;
  maxConnectionsPerAddress?: string;
  /** The bundle public key to pin: `ed25519:BASE64`, or a file holding it (or a PEM public key). */
  bundleKey?: string;
}

/** `--bundle-key`: the key text itself, or the text of the file it names. */
export function bundleKeyFrom(value: string | undefined, cwd = process.cwd()): string | undefined {
  if (value === undefined) return undefined;
  let text = value.trim();
  if (!text.startsWith(PUBLIC_KEY_PREFIX) && !text.startsWith('-----BEGIN')) {
    try {
      text = readFileSync(resolve(cwd, text), 'utf8').trim();
    } catch (err) {
      throw new CliError(
        `--bundle-key is neither a key (${PUBLIC_KEY_PREFIX}BASE64) nor a readable file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
  }
  try {
    return canonicalPublicKey(text);
  } catch (err) {
    throw new CliError(`--bundle-key: ${(err as Error).message}`);
  }
}

/** A positive number of seconds (fractions allowed), as milliseconds. */
function parseSeconds(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new CliError(`${flag} must be a number of seconds from ${min} to ${max}, got "${value}"`);
  return Math.round(n * 1000);
}

/**
 * The control-plane link from flags, else env: null when none of URL, server id and key is
 * given; a CliError when only some are, or with --bundle too.
 */
export function controlPlaneFrom(opts: SidecarCliOptions, env: NodeJS.ProcessEnv, cwd = process.cwd(), dataDir = cwd): ControlPlaneLinkOptions | null {
  const pick = (flag: string | undefined, name: string): string | undefined => {
    const v = flag ?? env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const url = pick(opts.controlPlane, 'SERVICE_CONTROL_PLANE_URL');
  const serverId = pick(opts.serverId, 'SERVICE_SERVER_ID');
  const serverKey = pick(opts.serverKey, 'SERVICE_SERVER_KEY');
  if (!url && !serverId && !serverKey) {
    for (const [flag, v] of [
      ['--poll-interval', opts.pollInterval],
      ['--telemetry-interval', opts.telemetryInterval],
      ['--state-dir', opts.stateDir],
      ['--max-backoff', opts.maxBackoff],
    ] as const) {
      if (v !== undefined) throw new CliError(`${flag} needs a control plane (--control-plane, --server-id, --server-key)`);
    }
    return null;
  }
  const missing = [
    !url && '--control-plane (SERVICE_CONTROL_PLANE_URL)',
    !serverId && '--server-id (SERVICE_SERVER_ID)',
    !serverKey && '--server-key (SERVICE_SERVER_KEY)',
  ].filter(Boolean);
  if (missing.length > 0) throw new CliError(`the control-plane source also needs ${missing.join(' and ')}`);
  if (opts.bundle) throw new CliError('--bundle and --control-plane are two config sources; give one');
  if (!/^https?:\/\/[^\s]+$/.test(url!)) throw new CliError(`--control-plane must be an http:// or https:// URL, got "${url}"`);
  if (!/^[1-9]\d{0,14}$/.test(serverId!)) throw new CliError(`--server-id must be a positive integer, got "${serverId}"`);
  return {
    url: url!,
    serverId: serverId!,
    serverKey: serverKey!,
    stateDir: opts.stateDir ? resolve(cwd, opts.stateDir) : defaultStateDir(serverId!, dataDir),
    ...(opts.pollInterval !== undefined ? { pollMs: parseSeconds(opts.pollInterval, '--poll-interval', 0.05, 86_400) } : {}),
    ...(opts.telemetryInterval !== undefined ? { telemetryMs: parseSeconds(opts.telemetryInterval, '--telemetry-interval', 0.05, 86_400) } : {}),
    ...(opts.maxBackoff !== undefined ? { maxBackoffMs: parseSeconds(opts.maxBackoff, '--max-backoff', 0.05, 86_400) } : {}),
    ...(opts.insecureHttp || env.SERVICE_INSECURE_HTTP === '1' ? { insecureHttp: true } : {}),
    ...(opts.bundleKey !== undefined ? { bundleKey: bundleKeyFrom(opts.bundleKey, cwd)! } : {}),
  };
}

/** Where the brains' memory is kept: --state ('' for nowhere), else the default in the data directory (defaultStateFile). */
export function stateFileFrom(opts: SidecarCliOptions, cwd = process.cwd(), stateDir: string | null = null, dataDir = cwd): string | null {
  if (opts.state !== undefined) return opts.state === '' ? null : resolve(cwd, opts.state);
  return defaultStateFile(dataDir, stateDir);
}

/**
 * The dialogue tier's options from the environment: null unless SERVICE_LLM_BASE_URL and
 * SERVICE_LLM_MODEL are set, or `--demo-dialogue` asks for the scripted line source (which
 * then stands in for the model). Voice out runs only when speech is configured
 * (SERVICE_TTS_ENGINE other than off, or SERVICE_TTS_BASE_URL), voice in when
 * SERVICE_STT_* is; both need an audio directory (--audio-dir, SERVICE_AUDIO_DIR, else a
 * directory under the system temp dir).
 */
export function dialogueFrom(opts: SidecarCliOptions, env: NodeJS.ProcessEnv): SidecarOptions['dialogue'] {
  const plugins = configuredPlugins(env);
  const scripted = opts.demoDialogue === true;
  if (!plugins.dialogue && !scripted) return null;
  const set = (k: string): boolean => (env[k] ?? '').trim() !== '';
  const tts = (set('SERVICE_TTS_ENGINE') && env.SERVICE_TTS_ENGINE!.trim() !== 'off') || set('SERVICE_TTS_BASE_URL');
  const voice = tts || plugins['voice-in'];
  const audioDir =
    opts.audioDir ?? (set('SERVICE_AUDIO_DIR') ? env.SERVICE_AUDIO_DIR : undefined) ?? (voice ? join(tmpdir(), `brainstem-audio-${process.pid}`) : undefined);
  const tierEnv = tts ? env : { ...env, SERVICE_TTS_ENGINE: 'off' };
  const common = scripted ? { env: tierEnv, scripted } : { env: tierEnv };
  return audioDir ? { ...common, audioDir: resolve(audioDir) } : common;
}

/** Picks the config source from the options: a bundle directory, else the built-in defaults (each loaded only when picked). */
export async function configSourceFrom(opts: SidecarCliOptions, logger: Logger): Promise<ConfigSource> {
  const key = bundleKeyFrom(opts.bundleKey);
  if (opts.bundle) {
    const { BundleDirSource } = await import('../../sidecar/config/bundle-dir-source.js');
    return new BundleDirSource(opts.bundle, { logger, ...(key ? { trust: new BundleTrust({ file: null, givenKey: key, logger }) } : {}) });
  }
  if (key) throw new CliError('--bundle-key checks a signed bundle: give --bundle DIR or --control-plane with it');
  const { DefaultsSource } = await import('../../sidecar/config/defaults-source.js');
  return new DefaultsSource();
}

export async function runSidecar(opts: SidecarCliOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger();
  const { host, port } = parseAddr(
    opts.addr ?? env.SERVICE_BRAIN_ADDR ?? DEFAULT_SIDECAR_ADDR,
    opts.addr ? '--addr' : 'SERVICE_BRAIN_ADDR',
    DEFAULT_SIDECAR_ADDR,
  );
  const workers = opts.workers === undefined ? DEFAULT_WORKERS : parseInteger(opts.workers, '--workers', 0, 64);
  const token = opts.token ?? env.SERVICE_BRAIN_TOKEN ?? '';
  const dataDir = sidecarDataDir(opts.dataDir, env);
  const link = controlPlaneFrom(opts, env, process.cwd(), dataDir);
  const stateFile = stateFileFrom(opts, process.cwd(), link?.stateDir ?? null, dataDir);
  const stateEveryMs = opts.stateEvery === undefined ? 30_000 : parseInteger(opts.stateEvery, '--state-every', 1, 86_400) * 1000;
  const dialogue = dialogueFrom(opts, env);
  // Loaded only when the sidecar starts: a CLI start that runs another command does not pay for them.
  const { startLinkedSidecar } = await import('../../sidecar/link/control-plane-link.js');
  const { startSidecar } = await import('../../sidecar/service.js');
  let sidecar: Sidecar;
  try {
    const common = {
      host,
      port,
      workers,
      token: token || null,
      logger,
      dialogue,
      stateFile,
      stateEveryMs,
      accessLog: accessLogFlag(opts.accessLog),
      connections: connectionFlags(opts),
    };
    sidecar = link ? (await startLinkedSidecar(link, common)).sidecar : await startSidecar({ ...common, source: await configSourceFrom(opts, logger) });
  } catch (err) {
    throw startError(err, addressFlag('--addr'));
  }
  // Listening before the banner: whoever reacts to it with a signal at once stops the sidecar cleanly.
  const stopped = untilSignal();
  const config = sidecar.status().config;
  const mode = workers === 0 ? 'inline' : `${workers} worker${workers === 1 ? '' : 's'}`;
  process.stdout.write(
    `brainstem sidecar listening on ${sidecar.url} (bundle v${config.version} from ${ORIGIN_TEXT[config.source]}${config.location ? ` ${config.location}` : ''}, ${mode}${token ? ', token required' : ''}${dialogue ? (dialogue.scripted ? ', dialogue on (scripted demo lines)' : ', dialogue on') : ''}${stateFile ? `, state ${stateFile}` : ''})\n`,
  );
  if (dialogue && !dialogue.scripted) warnAboutModelServer(env, logger);
  else if (!dialogue) warnAboutHalfDialogue(env, logger);
  // The banner says why the sidecar is not on the control plane's bundle, not just that it is not.
  if (link && config.lastError) process.stdout.write(`  config pull failed: ${config.lastError}; retrying with back-off (see ${sidecar.url}/status)\n`);
  const signal = await stopped;
  logger.info('shutting down', { signal });
  await sidecar.close();
}

/**
 * The dialogue tier needs both SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL: one of the
 * SERVICE_LLM_* variables set without them leaves the characters silent, which a newcomer
 * would otherwise only find out from a quiet game. One warning names what is missing.
 */
export function warnAboutHalfDialogue(env: NodeJS.ProcessEnv, logger: Logger): void {
  const set = (k: string): boolean => (env[k] ?? '').trim() !== '';
  const missing = ['SERVICE_LLM_BASE_URL', 'SERVICE_LLM_MODEL'].filter((k) => !set(k));
  if (missing.length === 0 || !['SERVICE_LLM_BASE_URL', 'SERVICE_LLM_MODEL', 'SERVICE_LLM_KEY'].some(set)) return;
  logger.warn(
    `the dialogue tier is off: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set (it needs SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL); characters stay silent`,
    {
      missing,
    },
  );
}

/**
 * Checks the dialogue tier's model server in the background, once, as the sidecar starts:
 * unreachable or without the configured model, it logs one warning naming the URL and the
 * problem. The sidecar runs either way (characters stay silent until the model answers).
 */
export function warnAboutModelServer(env: NodeJS.ProcessEnv, logger: Logger): void {
  const baseUrl = (env.SERVICE_LLM_BASE_URL ?? '').trim();
  const model = (env.SERVICE_LLM_MODEL ?? '').trim();
  if (!baseUrl || !model) return;
  modelServerProblem(baseUrl, model, env.SERVICE_LLM_KEY || undefined).then(
    (problem) => {
      if (problem)
        logger.warn(`dialogue model server ${baseUrl} ${problem}; the sidecar runs, characters stay silent until it answers`, { url: baseUrl, model });
    },
    (err: unknown) =>
      logger.warn(`dialogue model server ${baseUrl} could not be checked: ${err instanceof Error ? err.message : String(err)}`, { url: baseUrl, model }),
  );
}

export function registerSidecar(program: Command): void {
  program
    .command('sidecar')
    .description('run the brain sidecar: POST /tick answers a character snapshot with intents')
    .option('--bundle <dir>', 'self-hosted config bundle directory (watched and reloaded); default: the built-in bundle')
    .option('--addr <host:port>', `bind address (env SERVICE_BRAIN_ADDR, default ${DEFAULT_SIDECAR_ADDR})`)
    .option('--token <token>', 'token required on every route but /health, as Authorization: Bearer, X-Brain-Token or ?token= (env SERVICE_BRAIN_TOKEN)')
    .option('--workers <n>', `worker threads evaluating ticks, agents sharded over them; 0 = on the main thread (default ${DEFAULT_WORKERS})`)
    .option('--data-dir <dir>', `where the sidecar keeps its state, in .brainstem/ (env ${DATA_DIR_ENV}; default: the working directory)`)
    .option(
      '--state <file>',
      `brain memory file, restored at start and saved periodically and on shutdown (default .brainstem/brain-state.json in the data directory, with --control-plane in --state-dir; '' = none)`,
    )
    .option('--state-every <s>', 'seconds between brain memory saves (default 30)')
    .option('--audio-dir <dir>', 'directory for synthesised lines and voice clips (env SERVICE_AUDIO_DIR)')
    .option(
      '--control-plane <url>',
      'pull config from and push telemetry to this control plane (env SERVICE_CONTROL_PLANE_URL); needs --server-id and --server-key',
    )
    .option('--server-id <id>', "this game server's id on the control plane (env SERVICE_SERVER_ID)")
    .option('--server-key <key>', 'server key bsk_… issued for that server (env SERVICE_SERVER_KEY)')
    .option('--poll-interval <s>', 'seconds between config pulls, jittered ±10% (default 15)')
    .option('--telemetry-interval <s>', 'seconds between telemetry reports (default 60)')
    .option('--max-backoff <s>', 'cap of the retry back-off after control-plane errors (default 300)')
    .option(
      '--insecure-http',
      'admit an http:// control plane that is not on loopback (env SERVICE_INSECURE_HTTP=1); the server key then crosses the network unencrypted',
    )
    .option(
      '--bundle-key <key|file>',
      'pin this bundle public key (ed25519:BASE64, or a file holding it): every bundle must be signed by it or a key it endorsed; default: the control plane key on first use (--bundle: no check)',
    )
    .option('--state-dir <dir>', 'last good bundle and telemetry buffer (default .brainstem/sidecar-<server id>/ in the data directory)')
    .option('--access-log', ACCESS_LOG_FLAG_HELP)
    .option('--demo-dialogue', DEMO_DIALOGUE_HELP)
    .option('--max-connections <n>', MAX_CONNECTIONS_HELP)
    .option('--max-connections-per-address <n>', MAX_CONNECTIONS_PER_ADDRESS_HELP)
    .action(async (opts: SidecarCliOptions) => runSidecar(opts));
}
