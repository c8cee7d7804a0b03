import { randomBytes } from 'node:crypto';
import { askServices } from './services.js';

/**
 * One real PostgreSQL server for the test process, asked for on first use (tests that never
 * ask for one pay nothing) from scripts/test-services.mjs (test/helpers/services.ts): under
 * scripts/run-tests.mjs one server for every test file of the run. Each suite gets a fresh
 * database on it, so suites never see one another's rows.
 */
let cluster: Promise<URL> | null = null;
let databases = 0;
/** Database names unique across the test processes that share one server. */
const prefix = `t${process.pid}_${randomBytes(3).toString('hex')}`;

async function start(): Promise<URL> {
  return new URL((await askServices<{ url: string }>('/postgres')).url);
}

/** The URL of the test cluster's maintenance database (for tests that create or inspect databases). */
export async function clusterUrl(database = 'postgres'): Promise<string> {
  cluster ??= start();
  const url = new URL(await cluster);
  url.pathname = `/${database}`;
  return url.href;
}

/**
 * One connection to the maintenance database for all of this process's CREATE DATABASEs, not one
 * each: a connection costs the server a fork, a backend start and a password check. Unref'd when
 * idle (allowExitOnIdle), so it never keeps a finished test file's process alive.
 */
let admin: Promise<import('pg').Pool> | null = null;

async function adminPool(): Promise<import('pg').Pool> {
  // Loaded here, not at the top: the SQLite twins of the store contract suites import this module and never ask.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: await clusterUrl(), max: 1, allowExitOnIdle: true });
  // An idle connection that drops is only replaced at the next ask; unheard, its error would end the process.
  pool.on('error', () => {});
  return pool;
}

/** A new, empty database on the test cluster; its `postgres://` URL. */
export async function freshDatabase(): Promise<string> {
  admin ??= adminPool();
  const name = `${prefix}_${++databases}`;
  // FILE_COPY, not PostgreSQL's default WAL_LOG: WAL_LOG writes every page of the template through the
  // WAL, which the server's WAL writer and background writer then handle too; a file copy (and its
  // checkpoint, cheap with fsync off) costs the server well under half the CPU per database.
  await (await admin).query(`CREATE DATABASE ${name} STRATEGY FILE_COPY`);
  return clusterUrl(name);
}
