import type { Command } from 'commander';
import { conversationFlags } from './conversation-flags.js';
import { createLogger } from '../../log.js';
import { ROLES, type Role } from '../../embedded/roles.js';
import { describeDatabase } from '../../store/database.js';
import { join, resolve } from 'node:path';
import { DATA_DIR_VIDEO, stackDataDir, withDataDirOption } from '../data-dir.js';
import { lockDatabase } from '../db-lock.js';
import {
  ACCESS_LOG_FLAG_HELP,
  accessLogFlag,
  BILLING_FLAG_HELP,
  billingFlag,
  CliError,
  connectionFlags,
  MAX_CONNECTIONS_HELP,
  MAX_CONNECTIONS_PER_ADDRESS_HELP,
  LIMITS_FLAG_HELP,
  limitsFlag,
  DEFAULT_EMBEDDED_ADDR,
  parseAddr,
  parseInteger,
  startError,
  addressFlag,
  untilSignal,
  withDatabaseOptions,
} from '../util.js';
import { MAX_LEASE_MS, MIN_LEASE_MS } from '../../store/lease.js';
import { DELIVERY_CONCURRENCY, DELIVERY_CONCURRENCY_MAX, DELIVERY_CONCURRENCY_PER_ENDPOINT } from '../../webhooks/schedule.js';
import { DEFAULT_CONNECTION_CAPS } from '../../http/connections.js';

interface ServeFlags {
  addr: string;
  database?: string;
  db?: string;
  tlsCert?: string;
  tlsKey?: string;
  data?: string;
  dataDir?: string;
  objectStore?: string;
  ffmpeg?: string;
  renderConcurrency?: string;
  ffmpegMemory?: string;
  allowPrivateWebhooks?: boolean;
  conversationIdle?: string;
  conversationRetention?: string;
  limits?: string;
  insecureHttp?: boolean;
  role: string;
  accessLog?: boolean;
  jobLease?: string;
  webhookConcurrency?: string;
  webhookEndpointConcurrency?: string;
  maxConnections?: string;
  maxConnectionsPerAddress?: string;
  billing?: string;
}

function roleFlag(text: string): Role {
  if (!ROLES.includes(text as Role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}, got "${text}"`);
  return text as Role;
}

/** Where the property-video files go and how renders run: --object-store, --render-concurrency, --ffmpeg, --ffmpeg-memory. */
function videoFlags(flags: ServeFlags) {
  return {
    ...(flags.objectStore ? { objectStore: flags.objectStore } : {}),
    ...(flags.renderConcurrency ? { renderConcurrency: parseInteger(flags.renderConcurrency, '--render-concurrency', 1, 64) } : {}),
    ...(flags.ffmpeg ? { ffmpegPath: flags.ffmpeg } : {}),
    ...(flags.ffmpegMemory ? { ffmpegAddressSpaceBytes: parseInteger(flags.ffmpegMemory, '--ffmpeg-memory', 64, 1024 * 1024) * 1024 * 1024 } : {}),
  };
}

/** --webhook-concurrency and --webhook-endpoint-concurrency: the dispatcher's limits, when either is given. */
function webhookConcurrencyFlags(flags: ServeFlags): { webhookConcurrency?: { total: number; perEndpoint: number } } {
  if (flags.webhookConcurrency === undefined && flags.webhookEndpointConcurrency === undefined) return {};
  const total =
    flags.webhookConcurrency === undefined
      ? DELIVERY_CONCURRENCY
      : parseInteger(flags.webhookConcurrency, '--webhook-concurrency', 1, DELIVERY_CONCURRENCY_MAX);
  const perEndpoint =
    flags.webhookEndpointConcurrency === undefined
      ? Math.min(DELIVERY_CONCURRENCY_PER_ENDPOINT, total)
      : parseInteger(flags.webhookEndpointConcurrency, '--webhook-endpoint-concurrency', 1, DELIVERY_CONCURRENCY_MAX);
  if (perEndpoint > total) throw new CliError(`--webhook-endpoint-concurrency (${perEndpoint}) must not exceed --webhook-concurrency (${total})`);
  return { webhookConcurrency: { total, perEndpoint } };
}

/** The `serve` command and its flags. */
function serveCommand(program: Command): Command {
  return withDataDirOption(
    withDatabaseOptions(
      program
        .command('serve')
        .description('embedded mode: control plane, property-video API, webhooks and dashboard on one SQLite file or a PostgreSQL database')
        .option('--addr <host:port>', 'bind address', DEFAULT_EMBEDDED_ADDR)
        .option('--role <role>', 'api (HTTP only, no background jobs), worker (background jobs; answers only /health and /metrics) or all', 'all'),
    ),
    "where the database (brainstem.db, unless --database or --db names one) and the property-video files go; default: the SQLite file's directory",
  )
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM); needs --tls-key')
    .option('--tls-key <file>', 'private key (PEM) for --tls-cert')
    .option('--data <dir>', 'property-video files: photos, rendered videos, posters (default: data/ in the data directory)')
    .option(
      '--object-store <url>',
      'keep photos, rendered videos and posters in S3-compatible storage, s3://bucket/prefix (AWS_* environment; AWS_ENDPOINT_URL for MinIO or R2); default the --data directory',
    )
    .option('--ffmpeg <path>', 'ffmpeg binary for renders (default: FFMPEG_PATH, else ffmpeg on PATH, else @ffmpeg-installer/ffmpeg)')
    .option('--render-concurrency <n>', 'video renders at once (default: half the CPU cores, at least 1)')
    .option('--ffmpeg-memory <MiB>', 'address space each ffmpeg render may map, enforced with prlimit (default: 2048)')
    .option('--insecure-http', 'serve plain HTTP on an address that is not loopback (only behind a TLS-terminating proxy); loopback never needs it')
    .option('--allow-private-webhooks', 'admit callback/webhook URLs on loopback or private addresses, and plain http (development only)')
    .option('--limits <file>', LIMITS_FLAG_HELP)
    .option('--conversation-idle <minutes>', 'a chat-widget conversation without a message for this long ends (default: 30)')
    .option('--conversation-retention <days>', 'days chat transcripts and lead details are kept after a conversation ends (default: 90)')
    .option('--access-log', ACCESS_LOG_FLAG_HELP)
    .option('--max-connections <n>', `${MAX_CONNECTIONS_HELP}; also connectionsTotal in the limits file`)
    .option('--max-connections-per-address <n>', `${MAX_CONNECTIONS_PER_ADDRESS_HELP}; also connectionsPerAddress in the limits file`)
    .option('--billing <provider>', BILLING_FLAG_HELP)
    .option(
      '--webhook-concurrency <n>',
      `webhook deliveries in flight at once, over all endpoints (default: ${DELIVERY_CONCURRENCY}; 1 to ${DELIVERY_CONCURRENCY_MAX})`,
    )
    .option(
      '--webhook-endpoint-concurrency <n>',
      `webhook deliveries in flight at once to one endpoint, so a slow receiver cannot hold every slot (default: ${DELIVERY_CONCURRENCY_PER_ENDPOINT}, or --webhook-concurrency if lower; at most --webhook-concurrency)`,
    )
    .option(
      '--job-lease <seconds>',
      `how long a claimed background job (webhook delivery, render, video callback) stays with the process that claimed it before another may take it (default: 60; ${MIN_LEASE_MS / 1000} to ${MAX_LEASE_MS / 1000})`,
    );
}

export function registerServe(program: Command): void {
  serveCommand(program).action(async (flags: ServeFlags) => {
    // Every flag's value is checked before anything is created or locked.
    const { host, port } = parseAddr(flags.addr, '--addr', DEFAULT_EMBEDDED_ADDR);
    const limits = limitsFlag(flags.limits);
    const role = roleFlag(flags.role);
    const webhookConcurrency = webhookConcurrencyFlags(flags);
    if (Boolean(flags.tlsCert) !== Boolean(flags.tlsKey)) throw new CliError('--tls-cert and --tls-key go together');
    const video = videoFlags(flags);
    const conversations = conversationFlags(flags);
    const jobLease = flags.jobLease ? { jobLeaseMs: parseInteger(flags.jobLease, '--job-lease', MIN_LEASE_MS / 1000, MAX_LEASE_MS / 1000) * 1000 } : {};
    const connections = connectionFlags(flags, {
      perAddress: limits.limits?.connectionsPerAddress ?? DEFAULT_CONNECTION_CAPS.perAddress,
      total: limits.limits?.connectionsTotal ?? DEFAULT_CONNECTION_CAPS.total,
    });
    const billing = flags.billing !== undefined ? { billing: billingFlag(flags.billing) } : {};
    // Loaded once the flags are good: the server's modules are most of what a CLI start costs.
    const { startEmbedded } = await import('../../embedded/start.js');
    const { dir, database } = stackDataDir(flags);
    const videoDir = flags.data === undefined ? join(dir, DATA_DIR_VIDEO) : resolve(flags.data);
    // One process runs a SQLite file's background jobs: a second would take back the first's
    // renders and deliveries in flight at its start. An `api` process runs none.
    const lock = database.kind === 'sqlite' && role !== 'api' ? lockDatabase(database.file, 'serve') : null;
    // Also on the way out of a failed start (main exits the process on the error).
    if (lock) process.once('exit', lock.release);
    const logger = createLogger();
    const adminToken = process.env.SERVICE_ADMIN_TOKEN;
    let server;
    try {
      server = await startEmbedded({
        host,
        port,
        database,
        role,
        adminToken,
        logger,
        dataDir: videoDir,
        ...video,
        allowPrivateWebhooks: flags.allowPrivateWebhooks === true,
        conversations,
        ...webhookConcurrency,
        ...jobLease,
        ...limits,
        connections,
        ...billing,
        insecureHttp: flags.insecureHttp === true,
        accessLog: accessLogFlag(flags.accessLog),
        ...(flags.tlsCert && flags.tlsKey ? { tls: { certFile: flags.tlsCert, keyFile: flags.tlsKey } } : {}),
      });
    } catch (err) {
      throw startError(err, addressFlag('--addr'));
    }
    // Warnings once the server runs: a start that fails says only why.
    if (!adminToken) logger.warn('SERVICE_ADMIN_TOKEN is not set: the /v1/admin routes and /metrics will refuse every request');
    if (flags.allowPrivateWebhooks) logger.warn('--allow-private-webhooks: webhook and callback URLs may reach private and loopback addresses over plain http');
    // Listening before the banner: whoever reacts to it with a signal at once stops the server cleanly.
    const stopped = untilSignal();
    process.stdout.write(
      `brainstem serve listening on ${server.url} (database ${describeDatabase(database)}, role ${role}, data ${videoDir}${flags.objectStore ? `, objects ${flags.objectStore}` : ''})\n`,
    );
    await stopped;
    await server.close();
  });
}
