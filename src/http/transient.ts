/**
 * Failures of a dependency that is down or overloaded for a while (the database refusing or
 * dropping connections, its pool empty for its whole wait, a lock held past the busy timeout),
 * as opposed to a fault of this server. The client is told 503 with Retry-After, so it tries
 * again rather than treating a 500 as a bug on its side or giving up on what it sent.
 *
 * Recognised by the error's own code and message, so that transport imports no storage
 * driver: Node's network error codes, PostgreSQL's SQLSTATE classes for connections,
 * resources and operator intervention, node-postgres's pool and connection messages, and
 * SQLite's busy and locked codes.
 */

/** Network errors a connection to a dependency ends with while it is unreachable. */
const NETWORK_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a database that cannot serve now: 08 (connection exception), 53 (insufficient
 * resources: too many connections, out of memory, disk full), 57P01–57P03 (shutting down,
 * crashed, starting), 57014 (a statement cancelled by its timeout), and 40001/40P01
 * (serialization failure, deadlock) left after a transaction's own retries.
 */
function transientSqlState(code: string): boolean {
  if (code.length !== 5) return false;
  const cls = code.slice(0, 2);
  return cls === '08' || cls === '53' || code === '57P01' || code === '57P02' || code === '57P03' || code === '57014' || code === '40001' || code === '40P01';
}

/** node-postgres's own messages for a pool that gave no connection in time and a connection that went away. */
const PG_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/** True when `err` says a dependency is unavailable for now rather than that this server failed. */
export function isTransientFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code.startsWith('SQLITE_BUSY_') || code.startsWith('SQLITE_LOCKED_')) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && transientSqlState(code)) return true;
  }
  return PG_MESSAGES.some((m) => err.message.startsWith(m));
}

/** Seconds a client is asked to wait before it tries again. */
export const TRANSIENT_RETRY_AFTER_S = 1;
