import { createRequire } from 'node:module';
import type pg from 'pg';
import { seededRandom } from '../random.js';

/**
 * The `pg` driver, loaded on the first pool or client. Every store module imports this one,
 * and most processes (a SQLite stack, each test file) never open PostgreSQL, so loading the
 * driver eagerly cost each of them its start-up time for nothing. `pg` is CommonJS, so a
 * synchronous require keeps `openPool` synchronous.
 */
let driver: typeof pg | undefined;
function pgDriver(): typeof pg {
  driver ??= createRequire(import.meta.url)('pg') as typeof pg;
  return driver;
}

/** Anything a query runs on: the pool (one statement, autocommit) or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;
export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** Connections one process keeps open to PostgreSQL at most (pg's default is 10). */
export const DEFAULT_POOL_SIZE = 10;

/** How long a query waits for a free connection before it fails, rather than queueing forever. */
export const POOL_CONNECT_TIMEOUT_MS = 10_000;

/** Largest integer JavaScript and JSON hold exactly; 64-bit columns saturate here. */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Types of this pool's results. int8 (bigint, COUNT) arrives as a JS number: every 64-bit
 * value the stores keep (ids, epoch ms, counters) is held below 2^53 by the stores
 * themselves (counters saturate in SQL), so the conversion is exact. numeric (SUM of
 * bigints, which cannot overflow) arrives as a number too, after the SQL saturates it.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    const { builtins, getTypeParser } = pgDriver().types;
    if (oid === builtins.INT8 || oid === builtins.NUMERIC) return (v: string) => Number(v);
    return getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PoolOptions {
  /** Connections at most; default DEFAULT_POOL_SIZE. */
  max?: number;
  /** Told about errors of idle connections (a restarted server, a dropped network), which would otherwise crash the process. */
  onError?: (err: Error) => void;
}

/**
 * A connection pool on a `postgres://` (or `postgresql://`) URL. Every statement is
 * parameterised; a query that fails for want of a connection fails after
 * POOL_CONNECT_TIMEOUT_MS instead of hanging a request.
 */
export function openPool(url: string, options: PoolOptions = {}): pg.Pool {
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    max: options.max ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
    types,
    application_name: 'brainstem',
  });
  pool.on('error', (err) => options.onError?.(err));
  return pool;
}

/** A single connection outside the pool, for LISTEN (a pooled client would be handed back and lose its subscriptions). */
export function openClient(url: string): pg.Client {
  return new (pgDriver().Client)({ connectionString: url, types, application_name: 'brainstem' });
}

/** The rows of one parameterised statement. */
export async function queryRows<T>(q: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await q.query(sql, params)).rows as T[];
}

/** The first row of one parameterised statement, or undefined. */
export async function queryRow<T>(q: Queryable, sql: string, params: unknown[] = []): Promise<T | undefined> {
  return (await q.query(sql, params)).rows[0] as T | undefined;
}

/** How many rows one parameterised statement wrote. */
export async function queryCount(q: Queryable, sql: string, params: unknown[] = []): Promise<number> {
  return (await q.query(sql, params)).rowCount ?? 0;
}

export type Isolation = 'read committed' | 'repeatable read' | 'serializable';

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
/** Attempts of a transaction that keeps losing serialization or deadlock races. */
export const TRANSACTION_ATTEMPTS = 10;
/**
 * Before attempt n a loser waits up to n × RETRY_STEP_MS, at a random point: racers that
 * retried at once would meet again, and one of them could lose every attempt.
 */
export const RETRY_STEP_MS = 5;
const jitter = seededRandom(process.pid);

/**
 * Runs `fn` in one transaction on one pooled connection: committed when it resolves, rolled
 * back when it throws. A serialization failure or deadlock (which PostgreSQL reports at any
 * statement, the COMMIT included) runs the whole function again, up to TRANSACTION_ATTEMPTS
 * times, so `fn` must do nothing outside the database it cannot repeat.
 */
export async function transaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, isolation: Isolation = 'read committed'): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query(`BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`);
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        // The connection itself failed: it must not go back into the pool.
        broken = true;
      }
      if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? '')) throw err;
    } finally {
      client.release(broken);
    }
    await new Promise((resolve) => setTimeout(resolve, jitter() * attempt * RETRY_STEP_MS));
  }
}

/**
 * Runs one statement, which PostgreSQL commits on its own (one round trip, no BEGIN or COMMIT),
 * again after a serialization failure or deadlock, like `transaction`. A `name` prepares it
 * once per connection: later runs skip parsing and planning (for a statement run per flush).
 */
export async function statement<R extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params: unknown[], name?: string): Promise<pg.QueryResult<R>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pool.query<R>(name === undefined ? { text: sql, values: params } : { name, text: sql, values: params });
    } catch (err) {
      if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? '')) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, jitter() * attempt * RETRY_STEP_MS));
  }
}

/** The SQLSTATE of a PostgreSQL error (e.g. '23505' unique violation), else undefined. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export const UNIQUE_VIOLATION = '23505';

export interface PgMigration {
  /** Versions of one component start at 1 and only grow; an applied migration is never edited. */
  version: number;
  sql: string;
}

/** Every process that migrates takes this advisory lock first, so replicas starting at once apply each migration once. */
const MIGRATION_LOCK = 0x6272_6e73; // "brns"

/**
 * Applies a component's pending PostgreSQL migrations in order, each in its own transaction,
 * recorded in `schema_migrations` (component, version) like the SQLite ones. Replicas that
 * start together serialise on an advisory lock; the later ones find nothing left to do.
 */
export async function migratePg(pool: pg.Pool, component: string, migrations: readonly PgMigration[]): Promise<void> {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${component} migrations must be numbered 1..n without gaps; found ${m.version} at position ${i + 1}`);
  });
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        component TEXT NOT NULL,
        version INTEGER NOT NULL,
        applied_at TEXT NOT NULL,
        PRIMARY KEY (component, version)
      )`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations WHERE component = $1', [component]);
      const applied = new Set(rows.map((r) => r.version));
      for (const m of sorted) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (component, version, applied_at) VALUES ($1, $2, $3)', [
            component,
            m.version,
            new Date().toISOString(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`${component} migration ${m.version} failed: ${(err as Error).message}`, { cause: err });
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** What a quota lock counts (see lockQuota); each kind has its own lock space. */
export const QUOTA_LOCKS = { servers: 1, widgets: 2, personalTokens: 3 } as const;

/**
 * Holds, until the transaction ends, the lock of one owner's quota of one kind (a tenant's
 * servers, a user's tokens), so that two transactions that count the owner's rows before
 * adding one, on any replica, run one after the other and cannot both see room for the last.
 */
export async function lockQuota(c: pg.PoolClient, kind: (typeof QUOTA_LOCKS)[keyof typeof QUOTA_LOCKS], ownerId: number): Promise<void> {
  await c.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', [kind, ownerId]);
}
