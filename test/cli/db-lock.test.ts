import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_SUFFIX, lockDatabase } from '../../src/cli/db-lock.js';
import { cli, tempDir } from '../helpers/paths.js';
import { spawnCli, stop } from '../stack/helpers.js';

test('lockDatabase: one holder at a time, the holder named; released, it can be taken again', () => {
  const dir = tempDir();
  try {
    const db = join(dir.path, 'sub', 'x.db');
    const lock = lockDatabase(db);
    assert.equal(statSync(lock.file).mode & 0o777, 0o600);
    // The test process itself holds it: another live pid asking is refused with ours in the message.
    assert.throws(() => lockDatabase(db, 'up', process.pid + 1), new RegExp(`in use by another brainstem up \\(pid ${process.pid}\\)`));
    lock.release();
    assert.equal(existsSync(db + LOCK_SUFFIX), false);
    lockDatabase(db, 'up', process.pid + 1).release();
  } finally {
    dir.dispose();
  }
});

test('lockDatabase: a lock left by a process that is gone is taken over', () => {
  const dir = tempDir();
  try {
    const db = join(dir.path, 'x.db');
    // A pid that cannot be alive (above the kernel's pid_max).
    writeFileSync(db + LOCK_SUFFIX, '99999999\n');
    const lock = lockDatabase(db);
    lock.release();
    writeFileSync(db + LOCK_SUFFIX, 'garbage');
    lockDatabase(db).release();
  } finally {
    dir.dispose();
  }
});

// Two `up` stacks on one database both started and shared one sidecar state directory.
test("issue 14: a second brainstem up on the same database refuses to start, naming the first one's pid", async () => {
  const cwd = tempDir();
  const env = { SERVICE_ADMIN_TOKEN: '', SERVICE_BRAIN_ADDR: '127.0.0.1:0' };
  const first = await spawnCli(['up', '--addr', '127.0.0.1:0', '--json'], /^\{/, { cwd: cwd.path, env });
  try {
    const second = spawn(process.execPath, [cli, 'up', '--addr', '127.0.0.1:0', '--json'], {
      cwd: cwd.path,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BRAINSTEM_LOG: 'warn', SERVICE_BRAIN_TOKEN: '', SERVICE_LLM_BASE_URL: '', ...env },
    });
    let stderr = '';
    second.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => second.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => second.on('exit', resolve));
    clearTimeout(timer);
    assert.equal(code, 1);
    assert.match(stderr.trim(), new RegExp(`^brainstem: \\S+brainstem\\.db is in use by another brainstem up \\(pid ${first.child.pid}\\)`));
    assert.equal(stderr.trim().split('\n').length, 1);
  } finally {
    await stop(first.child);
  }
  // Stopped, its lock is gone and a new stack starts on the same database.
  assert.equal(existsSync(join(cwd.path, 'brainstem.db' + LOCK_SUFFIX)), false);
  const again = await spawnCli(['up', '--addr', '127.0.0.1:0', '--json'], /^\{/, { cwd: cwd.path, env });
  await stop(again.child);
  cwd.dispose();
});

test('a bad flag of up is named even while another stack holds the database: flags are read before the lock', async () => {
  const cwd = tempDir();
  // This test process holds the lock, as a running stack would.
  const lock = lockDatabase(join(cwd.path, 'brainstem.db'));
  try {
    for (const [flag, value] of [
      ['--conversation-idle', 'soon'],
      ['--conversation-retention', '0'],
    ]) {
      const r = spawn(process.execPath, [cli, 'up', '--addr', '127.0.0.1:0', flag!, value!], {
        cwd: cwd.path,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, BRAINSTEM_LOG: 'warn', SERVICE_ADMIN_TOKEN: '', SERVICE_BRAIN_TOKEN: '', SERVICE_BRAIN_ADDR: '127.0.0.1:0' },
      });
      let stderr = '';
      r.stderr.on('data', (c: Buffer) => (stderr += c));
      const code = await new Promise<number | null>((resolve) => r.on('exit', resolve));
      assert.equal(code, 1, stderr);
      assert.match(stderr, new RegExp(flag!), stderr);
      assert.doesNotMatch(stderr, /in use by another/);
    }
  } finally {
    lock.release();
    cwd.dispose();
  }
});
