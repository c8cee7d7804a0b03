import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { isLoopbackHost } from '../../src/http/loopback.js';
import { ControlPlaneClient } from '../../src/sidecar/link/control-plane-client.js';
import { startEmbedded } from '../../src/embedded/start.js';
import { repoRoot, tempDir } from '../helpers/paths.js';

const cli = join(repoRoot, 'bin', 'brainstem');

test('isLoopbackHost: localhost, 127.0.0.0/8, ::1 and mapped 127/8 only', () => {
  for (const h of ['localhost', 'app.localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]', '::ffff:127.0.0.1', 'LOCALHOST'])
    assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'cp.example', '128.0.0.1', '::ffff:10.0.0.1', 'localhost.example.com'])
    assert.equal(isLoopbackHost(h), false, h);
});

test('a sidecar refuses an http:// control plane that is not loopback (the server key is its HMAC secret); --insecure-http admits it', () => {
  const base = { serverId: '7', key: 'bsk_x' };
  assert.throws(() => new ControlPlaneClient({ url: 'http://cp.example:8080', ...base }), /refusing the plain-HTTP control plane http:\/\/cp\.example:8080/);
  assert.throws(() => new ControlPlaneClient({ url: 'http://10.1.2.3', ...base }), /--insecure-http/);
  for (const url of ['https://cp.example', 'http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080'])
    assert.doesNotThrow(() => new ControlPlaneClient({ url, ...base }), url);
  assert.doesNotThrow(() => new ControlPlaneClient({ url: 'http://cp.example:8080', ...base, insecureHttp: true }));
  const run = spawnSync(
    process.execPath,
    [cli, 'sidecar', '--addr', '127.0.0.1:0', '--control-plane', 'http://cp.example:8080', '--server-id', '7', '--server-key', 'bsk_x'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(run.status, 1);
  assert.match(run.stderr, /refusing the plain-HTTP control plane/);
});

test('serve refuses plain HTTP on a non-loopback address unless --insecure-http; loopback needs nothing', async () => {
  const dir = tempDir();
  try {
    await assert.rejects(startEmbedded({ host: '0.0.0.0', port: 0, db: join(dir.path, 'a.db') }), /refusing plain HTTP on 0\.0\.0\.0/);
    const run = spawnSync(process.execPath, [cli, 'serve', '--addr', '0.0.0.0:0', '--db', join(dir.path, 'b.db')], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, BRAINSTEM_LOG: 'silent' },
    });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /refusing plain HTTP on 0\.0\.0\.0.*--insecure-http/);
    const child = spawn(process.execPath, [cli, 'serve', '--addr', '0.0.0.0:0', '--insecure-http', '--db', join(dir.path, 'c.db')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BRAINSTEM_LOG: 'silent' },
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out);
        });
        child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
      });
      assert.match(line, /listening on http:\/\/0\.0\.0\.0:\d+/);
    } finally {
      child.kill('SIGTERM');
    }
    const local = await startEmbedded({ host: '127.0.0.1', port: 0, db: join(dir.path, 'd.db') });
    await local.close();
  } finally {
    dir.dispose();
  }
});
