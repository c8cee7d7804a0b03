/** Issue 29: migrate-store copied every table without saying how far it was. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { migrateStore } from '../../src/cli/migrate-store.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { runCli, tempDir } from '../helpers/paths.js';
import { freshDatabase } from '../helpers/postgres.js';

test('migrate-store reports the rows copied against the rows in all as it goes, ending at the total; --json prints nothing but the report', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'source.db');
  try {
    const source = await startTestServer({ db: file });
    const { token } = await tenantSession(source, 'agency');
    for (let i = 0; i < 3; i++) assert.equal((await source.call('POST', '/v1/servers', { token, body: { name: `s${i}` } })).status, 201);
    await source.close();
    const seen: [number, number][] = [];
    const report = await migrateStore(file, await freshDatabase(), { onRows: (done, total) => seen.push([done, total]) });
    const rows = report.tables.reduce((n, t) => n + t.rows, 0);
    assert.ok(seen.length > 0);
    assert.deepEqual(seen.at(-1), [rows, rows]);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]![0] > seen[i - 1]![0] && seen[i]![1] === rows);
    const cli = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', await freshDatabase(), '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.stderr, '', 'nothing extra with --json');
    assert.equal((JSON.parse(cli.stdout) as { tables: unknown[] }).tables.length, report.tables.length);
  } finally {
    dir.dispose();
  }
});
