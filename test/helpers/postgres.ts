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

/** A new, empty database on the test cluster; its `postgres://` URL. */
export async function freshDatabase(): Promise<string> {
  // Loaded here, not at the top: the SQLite twins of the store contract suites import this module and never ask.
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: await clusterUrl() });
  await admin.connect();
  try {
    const name = `${prefix}_${++databases}`;
    await admin.query(`CREATE DATABASE ${name}`);
    return clusterUrl(name);
  } finally {
    await admin.end();
  }
}
