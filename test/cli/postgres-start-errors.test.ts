import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/paths.js';
import { clusterUrl } from '../helpers/postgres.js';

test('a PostgreSQL server that refuses the password, or has no such database: one line naming the fix, never the password', async () => {
  const good = new URL(await clusterUrl('postgres'));
  const wrongPassword = new URL(good);
  wrongPassword.password = 'not-the-password';
  const noDatabase = new URL(good);
  noDatabase.pathname = '/no_such_database';
  const [refused, missing] = await Promise.all([
    runCli(['admin', '--database', wrongPassword.href, 'create-tenant', '--name', 't']),
    runCli(['admin', '--database', noDatabase.href, 'create-tenant', '--name', 't']),
  ]);
  for (const r of [refused, missing]) {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, new RegExp(good.password));
    assert.doesNotMatch(r.stderr, /not-the-password/);
  }
  assert.match(refused.stderr, /; check the user and password in --database \(or DATABASE_URL\)$/m);
  assert.match(missing.stderr, /; create the database first \(createdb\), or name an existing one in --database \(or DATABASE_URL\)$/m);
});
