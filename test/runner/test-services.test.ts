import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { repoRoot, tempDir } from '../helpers/paths.js';

// scripts/test-services.mjs, which scripts/run-tests.mjs starts for a run: the PostgreSQL server
// it hands out is real, and when the runner's end of its stdin closes (however the runner ended)
// it stops the server and leaves nothing behind in the temp dir.

test('the run-wide PostgreSQL answers queries, and is stopped with its files removed when stdin ends', async () => {
  const tmp = tempDir();
  try {
    // As root the server runs as `postgres`, who must reach the data directory's parent.
    chmodSync(tmp.path, 0o755);
    const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'test-services.mjs')], {
      env: { ...process.env, TMPDIR: tmp.path },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const base = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    assert.equal((await fetch(`${base}/nothing`)).status, 404);
    const { url } = (await (await fetch(`${base}/postgres`)).json()) as { url: string };
    // Asked twice (two test files), the same server.
    assert.equal(((await (await fetch(`${base}/postgres`)).json()) as { url: string }).url, url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    assert.deepEqual((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    await client.end();
    assert.equal(readdirSync(tmp.path).length, 1);
    child.stdin.end();
    assert.equal(await exited, 0);
    assert.deepEqual(readdirSync(tmp.path), []);
  } finally {
    tmp.dispose();
  }
});
