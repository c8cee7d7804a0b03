import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, tempDir } from '../../helpers/paths.js';
import { ADMIN, call, spawnCli, stop } from '../../stack/helpers.js';

const run = promisify(execFile);
const bin = join(repoRoot, 'bin', 'brainstem');

test('serve --limits: a bad file exits 1 with one line naming the fix', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'limits.json');
    writeFileSync(file, '{"sesion": 1200}');
    await assert.rejects(
      run(process.execPath, [bin, 'serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'b.db'), '--limits', file]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /unknown limit "sesion"; did you mean "session"\?/);
        return true;
      },
    );
  } finally {
    dir.dispose();
  }
});

test('serve --limits: the limits of the file apply (a session limit of 2 refuses the third request)', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'limits.json');
  writeFileSync(file, JSON.stringify({ session: 2 }));
  const serve = await spawnCli(
    ['serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'b.db'), '--data', join(dir.path, 'data'), '--limits', file],
    /listening on (http:\/\/\S+)/,
  );
  try {
    const url = serve.match[1]!;
    const tenant = await call(url, 'POST', '/v1/admin/tenants', { token: ADMIN, body: { name: 't', plan: 'pro' } });
    await call(url, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, { token: ADMIN, body: { email: 'a@example.com', password: 'long enough' } });
    const { token } = (await call(url, 'POST', '/v1/auth/login', { body: { email: 'a@example.com', password: 'long enough' } })).body;
    assert.equal((await call(url, 'GET', '/v1/auth/me', { token })).status, 200);
    assert.equal((await call(url, 'GET', '/v1/auth/me', { token })).status, 200);
    const third = await call(url, 'GET', '/v1/auth/me', { token });
    assert.equal(third.status, 429);
    assert.match(third.body.error.message, /2 requests per minute per session/);
  } finally {
    await stop(serve.child);
    dir.dispose();
  }
});
