import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countsDelta, probeArgs, probeCounts } from '../../bench/control-plane/replicas.js';
import { clusterUrl } from '../helpers/postgres.js';

// The replica benchmarks report PostgreSQL statements and notifications per request from a
// probe loaded into each serve process. What matters: it counts what the process sends
// (pooled and prepared statements alike) and the notifications it receives, exactly between
// two snapshots the benchmark asks for.

test('the statement probe counts statements and notifications between two snapshots', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-probe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const url = await clusterUrl();
  // A child like a serve process: a pool, a listening client; it runs its statements on each line of stdin.
  const script = `
    import pg from 'pg';
    const pool = new pg.Pool({ connectionString: ${JSON.stringify(url)} });
    const listener = new pg.Client({ connectionString: ${JSON.stringify(url)} });
    await listener.connect();
    await listener.query('LISTEN probe_test');
    process.stdin.on('data', async () => {
      // Listened for before the notify: it may arrive before the notifying query's own answer.
      listener.once('notification', () => process.stdout.write('done\\n'));
      await pool.query('SELECT 1');
      await pool.query({ name: 'probe-prepared', text: 'SELECT $1::int AS n', values: [2] });
      await pool.query("SELECT pg_notify('probe_test', 'x')");
    });
    process.stdout.write('ready\\n');
  `;
  const child = spawn(process.execPath, [...probeArgs(), '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    env: { ...process.env, BRAINSTEM_BENCH_PROBE_DIR: dir },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill());
  const lines: string[] = [];
  const next = (want: string) =>
    new Promise<void>((resolve) => {
      const look = () =>
        lines.includes(want) ? resolve() : child.stdout.once('data', (d: Buffer) => (lines.push(...d.toString().trim().split('\n')), look()));
      look();
    });
  await next('ready');
  const before = await probeCounts(dir, [child.pid!]);
  child.stdin.write('go\n');
  await next('done');
  const [delta] = countsDelta(before, await probeCounts(dir, [child.pid!]));
  assert.equal(delta!.statements, 3);
  assert.equal(delta!.notifications, 1);
  assert.equal(delta!.byStatement['probe-prepared'], 1);
  assert.equal(delta!.byStatement['SELECT 1'], 1);
});
