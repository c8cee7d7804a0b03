import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, tempDir } from '../../helpers/paths.js';

const run = promisify(execFile);
const bin = join(repoRoot, 'bin', 'brainstem');

test('serve --limits: a bad file exits 1 with one line naming the fix', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'limits.json');
    writeFileSync(file, '{"sesion": 1200}');
    await assert.rejects(run(process.execPath, [bin, 'serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'b.db'), '--limits', file]), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /unknown limit "sesion"; did you mean "session"\?/);
      return true;
    });
  } finally {
    dir.dispose();
  }
});

test('serve --limits: the limits of the file apply (a session limit of 2 refuses the third request)', async () => {
  const dir = tempDir();
  const file = join(dir.path, 'limits.json');
  writeFileSync(file, JSON.stringify({ session: 2 }));
  const admin = 'bsa_serve_limits_test';
  const child = spawn(process.execPath, [bin, 'serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'b.db'), '--data', join(dir.path, 'data'), '--limits', file], {
    env: { ...process.env, SERVICE_ADMIN_TOKEN: admin, BRAINSTEM_LOG: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    });
    const call = async (method: string, path: string, token: string | null, body?: unknown) => {
      const res = await fetch(url + path, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const tenant = await call('POST', '/v1/admin/tenants', admin, { name: 't', plan: 'pro' });
    await call('POST', `/v1/admin/tenants/${tenant.body.id}/users`, admin, { email: 'a@example.com', password: 'long enough' });
    const { token } = (await call('POST', '/v1/auth/login', null, { email: 'a@example.com', password: 'long enough' })).body;
    assert.equal((await call('GET', '/v1/auth/me', token)).status, 200);
    assert.equal((await call('GET', '/v1/auth/me', token)).status, 200);
    const third = await call('GET', '/v1/auth/me', token);
    assert.equal(third.status, 429);
    assert.match(third.body.error.message, /2 requests per minute per session/);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    dir.dispose();
  }
});
