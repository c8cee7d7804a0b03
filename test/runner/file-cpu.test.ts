import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot, tempDir } from '../helpers/paths.js';

// `scripts/run-tests.mjs --cpu`: each test file's process records its own CPU and its reaped
// children's (scripts/file-cpu.mjs, preloaded through run-files.mjs's exec arguments), and the
// runner prints them per file, the most first.

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  // As a top-level run: not as a test file's child, which node:test marks in NODE_TEST_CONTEXT.
  const { NODE_TEST_CONTEXT: _, ...base } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8', env: { ...base, ...env }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test("a test file's record holds its own CPU and its children's, which it spawned and reaped", async () => {
  const tmp = tempDir();
  try {
    // The child spins until it has used 300 ms of CPU by its own count, so its share is there on any machine.
    const spin = 'const s = process.cpuUsage(); for (;;) { const u = process.cpuUsage(s); if (u.user + u.system > 300000) break; }';
    const file = join(tmp.path, 'spawns.test.mjs');
    writeFileSync(
      file,
      `import test from 'node:test';\nimport { execFileSync } from 'node:child_process';\n` +
        `test('spawns', () => { execFileSync(process.execPath, ['-e', ${JSON.stringify(spin)}]); });\n`,
    );
    const record = join(tmp.path, 'cpu.tsv');
    const preload = `--import=${pathToFileURL(join(repoRoot, 'scripts', 'file-cpu.mjs')).href}`;
    const r = await run([preload, join(repoRoot, 'scripts', 'run-files.mjs'), '1', '60000', '-', file], { BRAINSTEM_TEST_CPU: record });
    assert.equal(r.code, 0, r.stdout);
    const lines = readFileSync(record, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1, 'one line, from the test file alone (not from the runner)');
    const [pid, own, children, wall, path] = lines[0]!.split('\t');
    assert.equal(path, file);
    assert.ok(Number(pid) > 0 && Number(own) > 0 && Number(wall) > 0, lines[0]);
    assert.ok(Number(children) >= 300, `the child's 300 ms of CPU: ${lines[0]}`);
  } finally {
    tmp.dispose();
  }
});

test('run-tests.mjs --cpu prints a row per file, the files’ sum, the shared services’ and the whole run’s', async () => {
  const r = await run([join(repoRoot, 'scripts', 'run-tests.mjs'), '--cpu', 'test/http/limits.test']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /CPU per file \(user \+ system, s\), the most first: 1 files/);
  assert.match(r.stdout, /^ +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d  test\/http\/limits\.test\.ts$/m);
  assert.match(r.stdout, /^ +\d+\.\d +\d+\.\d +\d+\.\d +\d+\.\d +all files$/m);
  assert.match(
    r.stdout,
    /^ +\d+\.\d shared services in all: PostgreSQL \d+\.\d s \(\d+\.\d s of it charged to files above\), Chromium -?\d+\.\d s, their starter \d+\.\d s$/m,
  );
  assert.match(r.stdout, /^ +\d+\.\d the whole run: this runner and everything it reaped$/m);
  const unknown = await run([join(repoRoot, 'scripts', 'run-tests.mjs'), '--cpus']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown option --cpus; the options are --unit, --fast, --timings, --cpu and --alone/);
});
