import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../helpers/paths.js';

// scripts/run-files.mjs, which scripts/run-tests.mjs runs the test files with: they start in the
// order given (slowest first), not sorted by name as `node --test` sorts them, a failing file
// fails the run, and --timings' file gets one line per top-level test.

function runFiles(args: string[]): Promise<{ code: number; stdout: string }> {
  // As run-tests.mjs starts it: not as a test file's child, which node:test marks in NODE_TEST_CONTEXT.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [join(repoRoot, 'scripts', 'run-files.mjs'), ...args], { encoding: 'utf8', env }, (err, stdout) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout });
    });
  });
}

/** A test file that appends its name to the shared log when it runs, then passes or throws. */
function testFile(dir: string, name: string, log: string, fails = false): string {
  const file = join(dir, `${name}.test.mjs`);
  writeFileSync(
    file,
    `import test from 'node:test';\nimport { appendFileSync } from 'node:fs';\n` +
      `test(${JSON.stringify(name)}, () => { appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(`${name}\n`)}); ${fails ? "throw new Error('red');" : ''} });\n`,
  );
  return file;
}

test('files start in the order given, the timings file gets each top-level test, and a failing file fails the run', async () => {
  const tmp = tempDir();
  try {
    const log = join(tmp.path, 'order.log');
    const timings = join(tmp.path, 'times.tsv');
    const files = ['zeta', 'mu', 'alpha'].map((name) => testFile(tmp.path, name, log));
    const green = await runFiles(['1', '60000', timings, ...files]);
    assert.equal(green.code, 0, green.stdout);
    assert.equal(readFileSync(log, 'utf8'), 'zeta\nmu\nalpha\n');
    const lines = readFileSync(timings, 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.map((line) => line.split('\t')[1]),
      files,
    );
    assert.ok(lines.every((line) => Number(line.split('\t')[0]) >= 0));

    const red = await runFiles(['1', '60000', '-', testFile(tmp.path, 'red', log, true), files[2]!]);
    assert.equal(red.code, 1);
    assert.match(red.stdout, /not ok 1 - red/);
  } finally {
    tmp.dispose();
  }
});
