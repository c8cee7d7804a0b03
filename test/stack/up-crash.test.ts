import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { call, spawnCli, stop } from './helpers.js';

test('brainstem up killed with kill -9 starts again on the same directory: its lock is taken over, the login, server and config are kept', async () => {
  const cwd = tempDir('brainstem-up-crash-');
  try {
    const args = ['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--json'];
    const env = { SERVICE_ADMIN_TOKEN: '' };
    const first = await spawnCli(args, /^\{/, { cwd: cwd.path, env });
    const one = JSON.parse(first.match.input) as { api: string; email: string; password: string; serverId: number; created: boolean };
    const base = one.api.replace(/\/v1$/, '');
    const token = (await call(base, 'POST', '/v1/auth/login', { body: { email: one.email, password: one.password } })).body.token as string;
    const bundle = (await call(base, 'GET', `/v1/servers/${one.serverId}/config`, { token })).body;
    const published = await call(base, 'PUT', `/v1/servers/${one.serverId}/config`, { token, body: bundle });
    assert.equal(published.status, 200);
    const lock = join(cwd.path, 'brainstem.db.lock');
    assert.equal(readFileSync(lock, 'utf8').trim(), `${first.child.pid} up`);
    assert.equal(await stop(first.child, 'SIGKILL'), null);
    assert.ok(existsSync(lock), 'a killed process leaves its lock behind');

    const second = await spawnCli(args, /^\{/, { cwd: cwd.path, env });
    try {
      const two = JSON.parse(second.match.input) as typeof one;
      assert.equal(two.created, false);
      assert.equal(two.email, one.email);
      assert.equal(two.serverId, one.serverId);
      assert.equal(readFileSync(lock, 'utf8').trim(), `${second.child.pid} up`);
      const base2 = two.api.replace(/\/v1$/, '');
      const login = await call(base2, 'POST', '/v1/auth/login', { body: { email: one.email, password: one.password } });
      assert.equal(login.status, 200);
      const head = await call(base2, 'GET', `/v1/servers/${one.serverId}/config`, { token: login.body.token });
      assert.equal(head.body.version, published.body.version, 'the publish answered before the kill is the head');
    } finally {
      assert.equal(await stop(second.child), 0);
    }
    assert.ok(!existsSync(lock), 'a clean stop removes the lock');
  } finally {
    cwd.dispose();
  }
});
