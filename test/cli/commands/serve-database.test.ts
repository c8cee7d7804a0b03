import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../../helpers/paths.js';
import { ADMIN, call, spawnCli, stop } from '../../stack/helpers.js';
import { freshDatabase } from '../../helpers/postgres.js';

test('serve --database sqlite:FILE opens that file; the line it prints names the database', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'via-url.db');
  const serve = await spawnCli(
    ['serve', '--addr', '127.0.0.1:0', '--database', `sqlite:${file}`, '--data', join(dir.path, 'data')],
    /listening on (http:\/\/\S+) \(database (\S+),/,
  );
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

test('serve on a PostgreSQL server that cannot be reached exits 1 naming the database, never its password', async () => {
  const r = await runCli(['serve', '--addr', '127.0.0.1:0', '--database', 'postgres://u:secret@127.0.0.1:1/x'], { SERVICE_ADMIN_TOKEN: 'bsa_x' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /database postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/x: connect ECONNREFUSED/);
  assert.doesNotMatch(r.stderr, /secret/);
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

test('admin --database postgres://…: the same records on PostgreSQL, and serve on that database sees them', async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  try {
    const tenant = await runCli(['admin', '--database', url, 'create-tenant', '--name', 'pg', '--plan', 'agency']);
    assert.equal(tenant.code, 0, tenant.stderr);
    const t = JSON.parse(tenant.stdout);
    const server = await runCli(['admin', 'create-server', '--tenant', String(t.id), '--name', 'alpha'], { DATABASE_URL: url });
    assert.equal(server.code, 0, server.stderr);
    assert.equal(JSON.parse(server.stdout).configVersion, 1);
    const serve = await spawnCli(
      ['serve', '--addr', '127.0.0.1:0', '--database', url, '--data', join(dir.path, 'data')],
      /listening on (http:\/\/\S+) \(database (\S+),/,
    );
    try {
      assert.doesNotMatch(serve.match[2]!, /brainstem-test/, 'the password is not printed');
      const got = await call(serve.match[1]!, 'GET', `/v1/admin/tenants/${t.id}`, { token: ADMIN });
      assert.equal(got.status, 200);
      assert.equal(got.body.servers.length, 1);
    } finally {
      await stop(serve.child);
    }
  } finally {
    dir.dispose();
  }
});
