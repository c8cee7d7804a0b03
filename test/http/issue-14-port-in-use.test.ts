import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { cli, tempDir } from '../helpers/paths.js';
import { spawnCli, stop } from '../stack/helpers.js';

// A second sidecar or serve on a port already in use printed "listening", and the two
// processes then shared the port's traffic (uWS's default SO_REUSEPORT).

/** Runs `brainstem ...args` to its exit (killed after 30 s, which fails the test). */
function runToExit(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BRAINSTEM_LOG: 'error', SERVICE_BRAIN_TOKEN: '', SERVICE_LLM_BASE_URL: '', SERVICE_LLM_MODEL: '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A port held by a plain node:net server (no SO_REUSEPORT), for the life of `body`. */
async function withTakenPort(body: (port: number) => Promise<void>): Promise<void> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  try {
    await body((holder.address() as { port: number }).port);
  } finally {
    holder.close();
  }
}

/** What serve and sidecar add: the flag that picks another address. */
const TAKEN_FIX = '; stop what holds it (another brainstem?), or give --addr HOST:PORT';

test('a second serve on the port of a running serve exits 1 with one clear line', async () => {
  const dir = tempDir();
  const first = await spawnCli(
    ['serve', '--addr', '127.0.0.1:0', '--db', join(dir.path, 'a.db'), '--data', join(dir.path, 'da')],
    /listening on (http:\/\/\S+)/,
  );
  try {
    const port = Number(new URL(first.match[1]!).port);
    const second = await runToExit(['serve', '--addr', `127.0.0.1:${port}`, '--db', join(dir.path, 'b.db'), '--data', join(dir.path, 'db')]);
    assert.equal(second.code, 1);
    assert.equal(second.stdout, '');
    assert.equal(second.stderr.trim(), `brainstem: address 127.0.0.1:${port} is already in use${TAKEN_FIX}`);
    // The first still has the port to itself.
    for (let i = 0; i < 4; i++) assert.equal(await (await fetch(`${first.match[1]}/health`)).text(), 'ok');
  } finally {
    await stop(first.child);
    dir.dispose();
  }
});

test('a second sidecar on the port of a running sidecar exits 1 with one clear line', async () => {
  const first = await spawnCli(['sidecar', '--addr', '127.0.0.1:0', '--workers', '0'], /listening on (http:\/\/\S+)/);
  try {
    const port = Number(new URL(first.match[1]!).port);
    const second = await runToExit(['sidecar', '--addr', `127.0.0.1:${port}`, '--workers', '0']);
    assert.equal(second.code, 1);
    assert.equal(second.stderr.trim(), `brainstem: address 127.0.0.1:${port} is already in use${TAKEN_FIX}`);
  } finally {
    await stop(first.child);
  }
});

test('serve, sidecar and webhooks listen on a port another program holds exit 1 with the same line, each naming its own flag (webhooks listen: --port)', () =>
  withTakenPort(async (port) => {
    const dir = tempDir();
    try {
      const serve = await runToExit(['serve', '--addr', `127.0.0.1:${port}`, '--db', join(dir.path, 'c.db'), '--data', join(dir.path, 'dc')]);
      assert.equal(serve.code, 1);
      assert.equal(serve.stderr.trim(), `brainstem: address 127.0.0.1:${port} is already in use${TAKEN_FIX}`);
      const sidecar = await runToExit(['sidecar', '--addr', `127.0.0.1:${port}`, '--workers', '0']);
      assert.equal(sidecar.code, 1);
      assert.equal(sidecar.stderr.trim(), `brainstem: address 127.0.0.1:${port} is already in use${TAKEN_FIX}`);
      const listen = await runToExit(['webhooks', 'listen', '--port', String(port)], { BRAINSTEM_WEBHOOK_SECRET: 'whsec_x' });
      assert.equal(listen.code, 1);
      assert.equal(
        listen.stderr.trim(),
        `brainstem: address 127.0.0.1:${port} is already in use; stop what holds it (another brainstem?), or give --port PORT (0 picks a free one)`,
      );
    } finally {
      dir.dispose();
    }
  }));
