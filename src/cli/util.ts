import {
  DEFAULT_CONNECTION_CAPS,
  DEFAULT_CONNECTIONS_PER_ADDRESS,
  DEFAULT_CONNECTIONS_TOTAL,
  MAX_CONNECTION_CAP,
  type ConnectionCaps,
} from '../http/connections.js';
import type { Command } from 'commander';
import { readLimitsFile, type Limits } from '../http/limits.js';
import { accessLogLine, type RequestObserver } from '../http/observe.js';
import { chooseDatabase, DEFAULT_DATABASE, parseDatabaseUrl, type DatabaseLocation } from '../store/database.js';

/** An expected failure of a command: printed as one line, no stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export type RegisterCommand = (program: Command) => void;

/** Where serve and up bind the embedded server unless told otherwise. */
export const DEFAULT_EMBEDDED_ADDR = '127.0.0.1:8080';

/** Parses "host:port" (or ":port", or "[::1]:port"); a bad value is a CliError naming the flag, with the flag's own default as the example. */
export function parseAddr(value: string, flag: string, example: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new CliError(`${flag} must look like HOST:PORT (for example ${example}), got "${value}"`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/**
 * The flags that pick another address, as a fix names them: one `--addr HOST:PORT` for both
 * (addressFlag), or `--port` and `--host` apart (`webhooks listen`).
 */
export interface AddressFlags {
  port: string;
  host: string;
}

/** One flag that takes HOST:PORT (`--addr`, `--sidecar-addr`). */
export function addressFlag(flag: string): AddressFlags {
  return { port: `${flag} HOST:PORT`, host: `${flag} HOST:PORT` };
}

/**
 * A server that could not start, as one line: a taken address, a port this user may not bind,
 * or a host that is not an address of this machine also names the flag that picks another.
 */
export function startError(err: unknown, flags: AddressFlags, what = ''): CliError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  let fix = '';
  if (code === 'EADDRINUSE') fix = `; stop what holds it (another brainstem?), or give ${flags.port}`;
  else if (code === 'EACCES') fix = `; give ${flags.port} with a port above 1023`;
  else if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    fix = `; give ${flags.host} with an address of this machine (127.0.0.1, or 0.0.0.0 for every interface)`;
  return new CliError(`${what}${message}${fix}`);
}

/**
 * An integer flag in plain decimal digits. Number() alone also reads `''` and `' '` as 0 (so
 * `--port "$PORT"` with PORT unset listened on a random port), and `0x10`, `1e1`, `+5` as integers.
 */
export function parseInteger(value: string, flag: string, min: number, max: number): number {
  const n = /^-?\d{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError(`${flag} must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

/** `--limits FILE`: the limits it sets (a bad file is a CliError naming the fix); none without the flag. */
export function limitsFlag(file: string | undefined): { limits?: Limits } {
  if (file === undefined) return {};
  try {
    return { limits: readLimitsFile(file) };
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/** --max-connections and --max-connections-per-address (sidecar and serve): the caps, or `base` when neither is given. */
export function connectionFlags(
  flags: { maxConnections?: string; maxConnectionsPerAddress?: string },
  base: ConnectionCaps = DEFAULT_CONNECTION_CAPS,
): ConnectionCaps {
  const total = flags.maxConnections === undefined ? base.total : parseInteger(flags.maxConnections, '--max-connections', 1, MAX_CONNECTION_CAP);
  const perAddress =
    flags.maxConnectionsPerAddress === undefined
      ? Math.min(base.perAddress, total)
      : parseInteger(flags.maxConnectionsPerAddress, '--max-connections-per-address', 1, MAX_CONNECTION_CAP);
  if (perAddress > total) throw new CliError(`--max-connections-per-address (${perAddress}) must not exceed --max-connections (${total})`);
  return { perAddress, total };
}

export const MAX_CONNECTIONS_HELP = `connections holding a request open at once, in all; past it a request is answered 503 and its connection closed (default ${DEFAULT_CONNECTIONS_TOTAL})`;
export const MAX_CONNECTIONS_PER_ADDRESS_HELP = `connections holding a request open at once from one client address; past it 429 and the connection closed (default ${DEFAULT_CONNECTIONS_PER_ADDRESS})`;

export const BILLING_FLAG_HELP =
  'payment provider: stripe (needs STRIPE_SECRET_KEY) or offline (checkout links that grant a plan without payment; the default only on a loopback address); default stripe when STRIPE_SECRET_KEY is set';

/** --billing: the provider named, as the embedded server takes it. */
export function billingFlag(value: string): 'stripe' | 'offline' {
  if (value !== 'stripe' && value !== 'offline') throw new CliError(`--billing must be stripe or offline, got "${value}"`);
  return value;
}

export const LIMITS_FLAG_HELP =
  'a JSON file of rate limits and quotas that differ from the defaults, e.g. {"session": 1200, "serverKey": {"limit": 600, "windowSeconds": 60}}';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Resolves when the process is asked to stop (SIGINT or SIGTERM). Later signals are ignored
 * while it stops: Ctrl-C on `npm start` reaches brainstem twice (from the terminal, and again
 * from npm, which passes it on), and the default action of the second would kill the process
 * in the middle of its shutdown, before it saved what it holds and released its lock.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let stopping = false;
    const on = (sig: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

export const ACCESS_LOG_FLAG_HELP = 'one JSON line per request on stderr: method, route pattern, status, microseconds (never a path, query, token or body)';

/** `--access-log`: the observer writing its lines to stderr; null without the flag. */
export function accessLogFlag(on: boolean | undefined): RequestObserver | null {
  return on === true ? (record) => process.stderr.write(accessLogLine(record)) : null;
}

/** `--database URL` and `--db FILE`, on every command that opens the services' database. */
export function withDatabaseOptions(command: Command): Command {
  return command
    .option('--database <url>', `sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE (env DATABASE_URL; default ${DEFAULT_DATABASE})`)
    .option('--db <file>', 'SQLite database file (the same as --database sqlite:FILE)');
}

/** The database the flags (or DATABASE_URL) name; a bad URL is a CliError naming the forms understood. */
export function databaseFlag(flags: { database?: string | undefined; db?: string | undefined }, env: NodeJS.ProcessEnv = process.env): DatabaseLocation {
  try {
    return chooseDatabase(flags, env);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/** `--replica-cpu F` of a replica benchmark: a share of one core per process (0.05–16), or "none" for no quotas. */
export function replicaCpuFlag(value: string): number | null {
  if (value.trim().toLowerCase() === 'none') return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0.05 || n > 16) throw new CliError(`--replica-cpu must be a share of a core from 0.05 to 16 (or "none"), got "${value}"`);
  return n;
}

/** `--database URL --replicas LIST` of a replica benchmark: a PostgreSQL URL and the replica counts to run. */
export function replicaBenchFlags(database: string, replicas: string, flag = '--replicas'): { url: string; replicas: number[] } {
  let location;
  try {
    location = parseDatabaseUrl(database);
  } catch (err) {
    throw new CliError(`--database: ${(err as Error).message}`);
  }
  if (location.kind !== 'postgres') throw new CliError('--database must be a postgres:// URL (SQLite always runs beside it)');
  return { url: location.url, replicas: replicas.split(',').map((r) => parseInteger(r.trim(), flag, 1, 16)) };
}
