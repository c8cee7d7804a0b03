import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot, tempDir } from '../helpers/paths.js';

// A test file's spawned processes die with it (test/helpers/children.ts): when the runner cuts
// the file at its per-file timeout, and when the file ends with a child still running. Before,
// a file cut by the timeout left its servers running under init for the rest of the run.

function runFiles(timeoutMs: number, file: string): Promise<{ code: number; stdout: string }> {
  // As run-tests.mjs starts it: not as a test file's child, which node:test marks in NODE_TEST_CONTEXT.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [join(repoRoot, 'scripts', 'run-files.mjs'), '1', String(timeoutMs), '-', file], { encoding: 'utf8', env }, (err, stdout) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout });
    });
  });
}

/**
 * A test file that spawns a child which spawns a grandchild (both run until killed), writes
 * their pids to `pids`, then either waits forever (for the runner's timeout) or ends.
 */
function spawningFile(dir: string, pids: string, hang: boolean): string {
  const helper = pathToFileURL(join(repoRoot, 'dist', 'test', 'helpers', 'children.js')).href;
  const child =
    "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });" +
    'console.log(c.pid); setInterval(() => {}, 1000);';
  const file = join(dir, `${hang ? 'hangs' : 'ends'}.test.mjs`);
  writeFileSync(
    file,
    `import test from 'node:test';\nimport { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\nimport ${JSON.stringify(helper)};\n` +
      `test('spawns', async () => {\n` +
      `  const child = spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: ['ignore', 'pipe', 'ignore'] });\n` +
      `  const grandchild = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));\n` +
      `  writeFileSync(${JSON.stringify(pids)}, JSON.stringify([child.pid, grandchild]));\n` +
      (hang ? `  await new Promise(() => {});\n` : `  child.stdout.destroy();\n  child.unref();\n`) +
      `});\n`,
  );
  return file;
}

/** Whether `pid` still runs (a zombie not yet reaped by init counts as gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Waits for SIGKILL, sent before the file's process ended, to take effect. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && running(pid); i++) await sleep(50);
  return !running(pid);
}

for (const hang of [true, false]) {
  test(
    hang ? 'a file cut by the per-file timeout takes its children and theirs with it' : 'a file that ends with a child still running takes it with it',
    { skip: process.platform !== 'linux' && 'reads /proc' },
    async () => {
      const tmp = tempDir();
      const pids = join(tmp.path, 'pids.json');
      let spawned: number[] = [];
      try {
        const result = await runFiles(hang ? 5_000 : 60_000, spawningFile(tmp.path, pids, hang));
        assert.equal(result.code, hang ? 1 : 0, result.stdout);
        spawned = JSON.parse(readFileSync(pids, 'utf8')) as number[];
        assert.equal(spawned.length, 2);
        for (const pid of spawned) assert.ok(await gone(pid), `process ${pid} outlived its test file`);
      } finally {
        for (const pid of spawned) if (running(pid)) process.kill(pid, 'SIGKILL');
        tmp.dispose();
      }
    },
  );
}
