import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from './helpers/paths.js';

const BAD = `type Shape = { kind: 'circle'; r: number } | { kind: 'square'; side: number };
export function area(s: Shape): number {
  switch (s.kind) {
    case 'circle':
      return Math.PI * s.r * s.r;
  }
  return 0;
}
async function work(): Promise<void> {}
export function start(): void {
  work();
}
export function unused(): void {
  const left = 1;
}
`;

test('npm run lint refuses a floating promise, a non-exhaustive switch and an unused variable', () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir.path, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', types: [] }, include: ['.'] }));
    writeFileSync(join(dir.path, 'bad.ts'), BAD);
    const oxlint = join(repoRoot, 'node_modules', '.bin', 'oxlint');
    const r = spawnSync(oxlint, ['--type-aware', '--deny-warnings', '-c', join(repoRoot, '.oxlintrc.json'), '-f', 'json', dir.path], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, 'the lint fails');
    const codes = (JSON.parse(r.stdout) as { diagnostics: { code: string }[] }).diagnostics.map((d) => d.code).sort();
    assert.deepEqual(codes, ['eslint(no-unused-vars)', 'typescript(no-floating-promises)', 'typescript(switch-exhaustiveness-check)']);
  } finally {
    dir.dispose();
  }
});

test('CI runs exactly npm ci, then npm run lint, then npm test', () => {
  const steps = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('npm '));
  assert.deepEqual(steps, ['npm ci', 'npm run lint', 'npm test']);
});

test('no path is taken from a file URL undecoded: a checkout under a directory with a space or % in its name runs', () => {
  // A file URL's pathname keeps %20 for a space (npm test failed in such a clone): fileURLToPath decodes it.
  const listed = spawnSync('git', ['ls-files', 'scripts', 'src', 'bench', 'bin', 'brain', 'test', 'plugins'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  const offenders = listed.stdout
    .split('\n')
    .filter((f) => /\.(ts|mjs|js)$/.test(f))
    .filter((f) => /import\.meta\.url\)\.pathname/.test(readFileSync(join(repoRoot, f), 'utf8')));
  assert.deepEqual(offenders, []);
});

test('functions of src/, dashboard/ and widget/ stay within 80 lines; every file excused from it still needs the excuse', () => {
  // The config is JSON with line comments.
  const config = JSON.parse(
    readFileSync(join(repoRoot, '.oxlintrc.json'), 'utf8')
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n'),
  ) as { overrides: { files: string[]; rules: Record<string, unknown> }[] };
  const rule = 'max-lines-per-function';
  const held = config.overrides.find((o) => JSON.stringify(o.rules[rule]) === JSON.stringify(['error', { max: 80 }]));
  assert.deepEqual(held?.files, ['src/**', 'dashboard/**', 'widget/**']);
  const excused = config.overrides.find((o) => o.rules[rule] === 'off')?.files ?? [];
  const dir = tempDir();
  try {
    const only = join(dir.path, 'oxlintrc.json');
    writeFileSync(only, JSON.stringify({ rules: { [rule]: ['error', { max: 80 }] } }));
    const oxlint = join(repoRoot, 'node_modules', '.bin', 'oxlint');
    const r = spawnSync(oxlint, ['-c', only, '-f', 'json', ...excused], { cwd: repoRoot, encoding: 'utf8' });
    const long = new Set((JSON.parse(r.stdout) as { diagnostics: { filename: string }[] }).diagnostics.map((d) => d.filename));
    assert.deepEqual(
      excused.filter((f) => !long.has(f)),
      [],
      'these files have no function over 80 lines any more: take them off the list in .oxlintrc.json',
    );
  } finally {
    dir.dispose();
  }
});
