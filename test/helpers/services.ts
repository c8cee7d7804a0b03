import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { repoRoot } from './paths.js';

/**
 * scripts/test-services.mjs, which hands out the test PostgreSQL server and Chromium. Under
 * scripts/run-tests.mjs the run's one (named by BRAINSTEM_TEST_SERVICES), shared by every test
 * file; otherwise (a file run alone with `node --test`) one started for this process on first
 * ask and ended when its tests are done, or when this process dies: it holds the other end of
 * that one's stdin.
 */
let own: ChildProcess | null = null;
let base: Promise<string> | null = null;

function startOwn(): Promise<string> {
  // Its own process group, so that a signal to this one's (Ctrl-C, a kill of the group) leaves it to clean up.
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'test-services.mjs')], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  own = child;
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`scripts/test-services.mjs exited with ${code} before it started`)));
  });
}

after(async () => {
  const child = own;
  own = null;
  base = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin!.end();
  await exited;
});

/** What the services answer at `path` (`/postgres`, `/chromium`), starting them if need be. */
export async function askServices<T>(path: string): Promise<T> {
  base ??= process.env.BRAINSTEM_TEST_SERVICES ? Promise.resolve(process.env.BRAINSTEM_TEST_SERVICES) : startOwn();
  const res = await fetch(`${await base}${path}`);
  if (!res.ok) throw new Error(`the test services could not answer ${path}: ${await res.text()}`);
  return (await res.json()) as T;
}
