import { join, resolve } from 'node:path';
import { conversationFlags } from './conversation-flags.js';
import type { Command } from 'commander';
import { createLogger, type Logger } from '../../log.js';
import type { LinkedSidecar } from '../../sidecar/link/control-plane-link.js';
import { defaultStateDir } from '../../sidecar/state/state-dir.js';
import { defaultStateFile } from '../../sidecar/state/state-file.js';
import { describeDatabase } from '../../store/database.js';
import type { Embedded } from '../../embedded/start.js';
import { ensureDemoWidget } from '../demo-widget.js';
import { lockDatabase } from '../db-lock.js';
import type { LocalStack } from '../local-stack.js';
import { DATA_DIR_VIDEO, stackDataDir, withDataDirOption } from '../data-dir.js';
import {
  ACCESS_LOG_FLAG_HELP,
  accessLogFlag,
  CliError,
  LIMITS_FLAG_HELP,
  limitsFlag,
  DEFAULT_EMBEDDED_ADDR,
  parseAddr,
  startError,
  addressFlag,
  untilSignal,
  withDatabaseOptions,
} from '../util.js';
import { DEFAULT_SIDECAR_ADDR, DEMO_DIALOGUE_HELP, dialogueFrom, warnAboutHalfDialogue, warnAboutModelServer } from './sidecar.js';

interface UpFlags {
  addr: string;
  sidecarAddr?: string;
  database?: string;
  db?: string;
  data?: string;
  dataDir?: string;
  json?: boolean;
  limits?: string;
  allowPrivateWebhooks?: boolean;
  conversationIdle?: string;
  conversationRetention?: string;
  insecureHttp?: boolean;
  accessLog?: boolean;
  demoDialogue?: boolean;
}

/** What the banner of a running stack shows. */
interface UpBanner {
  created: boolean;
  /** The SQLite file, or the PostgreSQL URL without its password. */
  db: string;
  dir: string;
  /** The embedded server's and the sidecar's base URLs. */
  embedded: string;
  sidecar: string;
  demoPage: string;
  token: string;
  stack: LocalStack;
  config: { version: number; source: string };
}

/** A tick a fresh sidecar answers: a survivor on patrol who sees a player. */
export const SAMPLE_TICK = {
  snapshot: {
    agent: 1,
    time_s: 10,
    self_state: { pos: { x: 0, y: 0, z: 0 }, heading_deg: 0, health: 100, blood: 5000, hunger: 20, thirst: 20, has_weapon: true, ammo: 30 },
    targets: [{ id: 42, kind: 'player', pos: { x: 12, y: 0, z: 5 }, hostile: false, visible: true, name: 'Alex' }],
    route: [
      { x: 0, y: 0, z: 0 },
      { x: 40, y: 0, z: 0 },
    ],
  },
  profile: { name: 'Mira', role: 'survivor' },
};

/**
 * `brainstem up`: the embedded server and a sidecar bound to it, in one process. The first
 * run on a DB file creates a tenant, a user, a server, a server key and an API key (see local-stack.ts);
 * later runs reuse them.
 */
export function registerUp(program: Command): void {
  withDataDirOption(
    withDatabaseOptions(
      program
        .command('up')
        .description('the whole local stack in one command: embedded server plus a sidecar on its control plane; prints URLs and a login')
        .option('--addr <host:port>', 'embedded server bind address', DEFAULT_EMBEDDED_ADDR)
        .option('--sidecar-addr <host:port>', `sidecar bind address (env SERVICE_BRAIN_ADDR, default ${DEFAULT_SIDECAR_ADDR})`),
    ),
    "where the stack keeps everything: brainstem.db (unless --db names one), data/, and the sidecar's .brainstem/ state; default: the SQLite file's directory",
  )
    .option('--data <dir>', 'property-video files (default: data/ in the data directory)')
    .option(
      '--allow-private-webhooks',
      'also admit webhook and callback URLs on private addresses, and plain http to them (loopback URLs, such as webhooks listen, are admitted without it)',
    )
    .option('--insecure-http', 'serve plain HTTP on an --addr that is not loopback (only behind a TLS-terminating proxy)')
    .option('--json', 'print the URLs and credentials as one JSON line')
    .option('--limits <file>', LIMITS_FLAG_HELP)
    .option('--conversation-idle <minutes>', 'a chat-widget conversation without a message for this long ends (default: 30)')
    .option('--conversation-retention <days>', 'days chat transcripts and lead details are kept after a conversation ends (default: 90)')
    .option('--access-log', ACCESS_LOG_FLAG_HELP)
    .option('--demo-dialogue', DEMO_DIALOGUE_HELP)
    .action(runUp);
}

/** The action of `brainstem up`: prepare the stack, start the embedded server and the sidecar, print the banner, wait for a signal. */
async function runUp(flags: UpFlags): Promise<void> {
  const api = parseAddr(flags.addr, '--addr', DEFAULT_EMBEDDED_ADDR);
  const limits = limitsFlag(flags.limits);
  // Every flag is read before the database is locked: a bad value is named as itself, not hidden behind a lock held by another stack.
  const conversations = conversationFlags(flags);
  const accessLog = accessLogFlag(flags.accessLog);
  // The sidecar's bind address env (spec 001 §4.1) holds here too, as SERVICE_BRAIN_TOKEN does.
  const envAddr = process.env.SERVICE_BRAIN_ADDR || undefined;
  const side = parseAddr(
    flags.sidecarAddr ?? envAddr ?? DEFAULT_SIDECAR_ADDR,
    flags.sidecarAddr || !envAddr ? '--sidecar-addr' : 'SERVICE_BRAIN_ADDR',
    DEFAULT_SIDECAR_ADDR,
  );
  const logger = createLogger();
  const { dir, database: location } = stackDataDir(flags);
  // Where the stack lives, as printed: the file, or the PostgreSQL URL without its password.
  const db = location.kind === 'sqlite' ? location.file : describeDatabase(location);
  // One stack at a time on a SQLite file (a file lock); a PostgreSQL database is shared by design.
  const lock = location.kind === 'sqlite' ? lockDatabase(location.file) : null;
  // Also on the way out of a failed start (main exits the process on the error).
  if (lock) process.once('exit', lock.release);
  // Loaded only when up runs: the server's and the sidecar's modules are most of what a CLI start would cost.
  const { ensureLocalStack } = await import('../local-stack.js');
  const { startEmbedded } = await import('../../embedded/start.js');
  let local;
  try {
    local = await ensureLocalStack(location, { adminToken: process.env.SERVICE_ADMIN_TOKEN, brainToken: process.env.SERVICE_BRAIN_TOKEN });
  } catch (err) {
    throw new CliError(`cannot prepare ${db}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const { stack } = local;
  let embedded;
  try {
    embedded = await startEmbedded({
      host: api.host,
      port: api.port,
      database: location,
      adminToken: stack.adminToken,
      logger,
      dataDir: flags.data === undefined ? join(dir, DATA_DIR_VIDEO) : resolve(flags.data),
      // The local stack: a receiver on this machine (`webhooks listen`) is admitted without a flag.
      allowPrivateWebhooks: flags.allowPrivateWebhooks === true ? true : 'loopback',
      conversations,
      ...limits,
      insecureHttp: flags.insecureHttp === true,
      accessLog,
    });
  } catch (err) {
    throw startError(err, addressFlag('--addr'), 'embedded server: ');
  }
  if (flags.allowPrivateWebhooks) logger.warn('--allow-private-webhooks: webhook and callback URLs may reach private and loopback addresses over plain http');
  // Always a token: a mod tried against the local stack must learn at once when it sends none or a wrong one.
  const token = stack.brainToken;
  const { sidecar } = await startUpSidecar(flags, embedded, stack, dir, side, logger);
  const demoWidget = await ensureDemoWidget(embedded, stack.tenantId);
  const demoPage = `${embedded.url}/demo/widget?widget=${demoWidget}`;
  if (sidecar.dialogue && !flags.demoDialogue) warnAboutModelServer(process.env, logger);
  else if (!sidecar.dialogue) warnAboutHalfDialogue(process.env, logger);
  // Listening before the banner: whoever reacts to it with a signal at once stops the stack cleanly.
  const stopped = untilSignal();
  const config = sidecar.status().config;
  printBanner(flags, { created: local.created, db, dir, embedded: embedded.url, demoPage, sidecar: sidecar.url, token, stack, config });
  const signal = await stopped;
  logger.info('shutting down', { signal });
  // The sidecar first: its final telemetry report goes to the server still running.
  await sidecar.close();
  await embedded.close();
  lock?.release();
}

/** The sidecar bound to the embedded server's control plane, with its state in the data directory; a failed start closes the server. */
async function startUpSidecar(
  flags: UpFlags,
  embedded: Embedded,
  stack: LocalStack,
  dir: string,
  side: { host: string; port: number },
  logger: Logger,
): Promise<LinkedSidecar> {
  // In the data directory, never the working directory (unless that is the data directory).
  const stateDir = defaultStateDir(String(stack.serverId), dir);
  const { startLinkedSidecar } = await import('../../sidecar/link/control-plane-link.js');
  try {
    return await startLinkedSidecar(
      { url: embedded.url, serverId: String(stack.serverId), serverKey: stack.serverKey, stateDir, insecureHttp: flags.insecureHttp === true },
      {
        host: side.host,
        port: side.port,
        workers: 0,
        token: stack.brainToken,
        logger,
        accessLog: accessLogFlag(flags.accessLog),
        dialogue: dialogueFrom({ demoDialogue: flags.demoDialogue === true }, process.env),
        stateFile: defaultStateFile(dir, stateDir),
      },
    );
  } catch (err) {
    await embedded.close();
    throw startError(err, addressFlag('--sidecar-addr'), 'sidecar: ');
  }
}

/** The URLs and credentials of the running stack: one JSON line with --json, else a block for a person. */
function printBanner(flags: UpFlags, up: UpBanner): void {
  const { created, db, dir, embedded, demoPage, sidecar, token, stack, config } = up;
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({
        created,
        db,
        dataDir: dir,
        dashboard: `${embedded}/`,
        api: `${embedded}/v1`,
        chatDemo: demoPage,
        sidecar,
        brainToken: token,
        serverId: stack.serverId,
        bundleVersion: config.version,
        email: stack.email,
        password: stack.password,
        apiKey: stack.apiKey,
        adminToken: stack.adminToken,
      })}\n`,
    );
  } else
    process.stdout.write(
      [
        `brainstem up: local stack running (${created ? 'created' : 'reused'} in ${db})`,
        `  dashboard    ${embedded}/`,
        `  API          ${embedded}/v1`,
        `  chat demo    ${demoPage}  (the chat widget on a demo page; conversations in the dashboard under Widgets)`,
        `  sidecar      ${sidecar}  (server ${stack.serverId}, bundle v${config.version} from ${config.source}; status at ${sidecar}/status)`,
        `  brain token  ${token}  (send it as Authorization: Bearer, X-Brain-Token or ?token=)`,
        ...(flags.demoDialogue ? ['  dialogue     scripted demo lines (--demo-dialogue): characters greet a player within 20 m on their next tick'] : []),
        `  login        ${stack.email}  /  ${stack.password}`,
        `  API key      ${stack.apiKey}  (property-video API: Authorization: Bearer <API key>)`,
        `  admin token  ${stack.adminToken}`,
        `  try:         curl -s -X POST ${sidecar}/tick -H 'content-type: application/json' -H 'authorization: Bearer ${token}' -d '${JSON.stringify(SAMPLE_TICK)}'`,
        'Ctrl-C stops both.',
        '',
      ].join('\n'),
    );
}
