import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { repoRoot, tempDir } from '../helpers/paths.js';

// scripts/test-services.mjs, which scripts/run-tests.mjs starts for a run: the PostgreSQL server
// it hands out is real, and when the runner's end of its stdin closes (however the runner ended)
// it stops the server and leaves nothing behind in the temp dir. With `run-tests.mjs --cpu`
// (BRAINSTEM_TEST_CPU), it charges each backend's CPU to the test file whose database it serves.

test('the run-wide PostgreSQL answers queries, is stopped with its files removed when stdin ends, and records CPU per test file', async () => {
  const tmp = tempDir();
  const record = tempDir();
  try {
    // As root the server runs as `postgres`, who must reach the data directory's parent.
    chmodSync(tmp.path, 0o755);
    const cpu = join(record.path, 'cpu.tsv');
    const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'test-services.mjs')], {
      env: { ...process.env, TMPDIR: tmp.path, BRAINSTEM_TEST_CPU: cpu },
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
    // A database named as test/helpers/postgres.ts names them, for the test file of pid 4242: its
    // backend's CPU is charged to that file. The connection stays open until the services stop,
    // which sample every backend before they stop the server.
    await client.query('CREATE DATABASE t4242_ab12cd_1');
    await client.end();
    const file = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: '/t4242_ab12cd_1' }).href });
    file.on('error', () => {});
    await file.connect();
    await file.query('SELECT count(*) FROM generate_series(1, 3000000)');
    assert.equal(readdirSync(tmp.path).length, 1);
    child.stdin.end();
    assert.equal(await exited, 0);
    assert.deepEqual(readdirSync(tmp.path), []);
    const lines = readFileSync(cpu, 'utf8').trim().split('\n');
    const charged = lines.filter((l) => l.startsWith('postgres\t4242\t'));
    assert.equal(charged.length, 1, lines.join('\n'));
    assert.ok(Number(charged[0]!.split('\t')[2]) > 0, charged[0]);
    const services = lines.filter((l) => l.startsWith('services\t'));
    assert.equal(services.length, 1, lines.join('\n'));
    assert.ok(Number(services[0]!.split('\t')[1]) > 0, services[0]);
  } finally {
    tmp.dispose();
    record.dispose();
  }
});
