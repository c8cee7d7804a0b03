import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';

// For the tests of groups of files in one process (groups, group-timeout).

export function runFiles(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // As run-tests.mjs starts it: not as a test file's child, which node:test marks in NODE_TEST_CONTEXT.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, [join(repoRoot, 'scripts', 'run-files.mjs'), ...args], { encoding: 'utf8', env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A test file importing node:test's test and hooks and appendFileSync, then BODY. */
export function write(dir: string, name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `import { test, before, after, beforeEach } from 'node:test';\nimport { appendFileSync } from 'node:fs';\n${body}\n`);
  return file;
}
