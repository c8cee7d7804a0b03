import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import pg from 'pg';
import { repoRoot } from './paths.js';

/**
 * One real PostgreSQL server for the test process, asked for on first use (tests that never
 * ask for one pay nothing), from scripts/test-services.mjs. Under scripts/run-tests.mjs that is
 * the run's own (named by BRAINSTEM_TEST_SERVICES), one server for every test file; otherwise
 * (a file run alone with `node --test`) this process starts one for itself and ends it when its
 * tests are done (or when this process dies: it holds the other end of its stdin). Each suite
 * gets a fresh database on it, so suites never see one another's rows.
 */
let cluster: Promise<URL> | null = null;
let own: ChildProcess | null = null;
let databases = 0;
/** Database names unique across the test processes that share one server. */
const prefix = `t${process.pid}_${randomBytes(3).toString('hex')}`;

async function services(): Promise<string> {
  const shared = process.env.BRAINSTEM_TEST_SERVICES;
  if (shared) return shared;
  // Its own process group, so that a signal to this one's (Ctrl-C, a kill of the group) leaves it to clean up.
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'test-services.mjs')], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  own = child;
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`scripts/test-services.mjs exited with ${code} before it started`)));
  });
}

async function start(): Promise<URL> {
  const res = await fetch(`${await services()}/postgres`);
  if (!res.ok) throw new Error(`the test PostgreSQL did not start: ${await res.text()}`);
  return new URL(((await res.json()) as { url: string }).url);
}

after(async () => {
  const child = own;
  own = null;
  cluster = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin!.end();
  await exited;
});

/** The URL of the test cluster's maintenance database (for tests that create or inspect databases). */
export async function clusterUrl(database = 'postgres'): Promise<string> {
  cluster ??= start();
  const url = new URL(await cluster);
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
