import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../../helpers/paths.js';
import { ADMIN, call, spawnCli, stop } from '../../stack/helpers.js';

test('serve --database sqlite:FILE opens that file; the line it prints names the database', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'via-url.db');
  const serve = await spawnCli(['serve', '--addr', '127.0.0.1:0', '--database', `sqlite:${file}`, '--data', join(dir.path, 'data')], /listening on (http:\/\/\S+) \(database (\S+),/);
  try {
    assert.equal(serve.match[2], `sqlite:${file}`);
    assert.equal((await call(serve.match[1]!, 'POST', '/v1/admin/tenants', { token: ADMIN, body: { name: 't', plan: 'pro' } })).status, 201);
    assert.ok(existsSync(file));
  } finally {
    await stop(serve.child);
    dir.dispose();
  }
});

test('serve, admin: a bad --database, or --database with --db, exits 1 with one line', async () => {
  for (const args of [
    ['serve', '--addr', '127.0.0.1:0', '--database', 'mysql://u:secret@h/db'],
    ['admin', '--database', 'nonsense', 'create-tenant', '--name', 't'],
    ['serve', '--addr', '127.0.0.1:0', '--database', 'sqlite:a.db', '--db', 'b.db'],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 1, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /secret/);
  }
});

test('admin reads DATABASE_URL when no flag is given', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'env.db');
    const r = await runCli(['admin', 'create-tenant', '--name', 't'], { DATABASE_URL: `sqlite:${file}` });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).name, 't');
    assert.ok(existsSync(file));
  } finally {
    dir.dispose();
  }
});
