import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tempDir } from '../helpers/paths.js';
import { freshDatabase } from '../helpers/postgres.js';
import { call, spawnCli, stop } from './helpers.js';

test('up --database postgres://…: the local stack on PostgreSQL, made once and reused; the password of the URL is never printed', async () => {
  const url = await freshDatabase();
  const cwd = tempDir('brainstem-up-pg-');
  const env = { SERVICE_ADMIN_TOKEN: '', SERVICE_BRAIN_ADDR: '127.0.0.1:0' };
  try {
    const first = await spawnCli(['up', '--addr', '127.0.0.1:0', '--database', url, '--json'], /^\{/, { cwd: cwd.path, env });
    const a = JSON.parse(first.match.input);
    await stop(first.child);
    assert.equal(a.created, true);
    assert.doesNotMatch(first.match.input, /brainstem-test/);
    assert.match(a.db, /^postgres:\/\/postgres:\*\*\*@/);

    const second = await spawnCli(['up', '--addr', '127.0.0.1:0', '--database', url, '--json'], /^\{/, { cwd: cwd.path, env });
    try {
      const b = JSON.parse(second.match.input);
      assert.equal(b.created, false);
      assert.deepEqual([b.email, b.serverId, b.adminToken, b.brainToken], [a.email, a.serverId, a.adminToken, a.brainToken]);
      const login = await call(b.api.replace(/\/v1$/, ''), 'POST', '/v1/auth/login', { body: { email: b.email, password: b.password } });
      assert.equal(login.status, 200);
      const status = await call(b.sidecar, 'GET', '/status', { token: b.brainToken });
      assert.equal(status.body.source, 'control-plane');
    } finally {
      await stop(second.child);
    }
  } finally {
    cwd.dispose();
  }
});
