import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot, tempDir } from '../helpers/paths.js';

interface TestFiles {
  SLOW_SUITES: string[];
  UNIT_SUITES: string[];
  selectTests(root: string, options?: { fast?: boolean; unit?: boolean; filter?: string[]; slowestFirst?: boolean }): string[];
}
const load = async () => (await import(pathToFileURL(join(repoRoot, 'scripts', 'test-files.mjs')).href)) as TestFiles;

test('a compiled test whose source is gone is not run (regression: stale dist/test files kept running)', async () => {
  const { selectTests } = await load();
  const dir = tempDir();
  try {
    for (const f of ['test/a.test.ts', 'test/sub/b.test.ts', 'test/helper.ts']) {
      mkdirSync(join(dir.path, f, '..'), { recursive: true });
      writeFileSync(join(dir.path, f), '');
    }
    mkdirSync(join(dir.path, 'dist', 'test'), { recursive: true });
    writeFileSync(join(dir.path, 'dist', 'test', 'deleted.test.js'), '');
    assert.deepEqual(selectTests(dir.path), [join(dir.path, 'dist/test/a.test.js'), join(dir.path, 'dist/test/sub/b.test.js')]);
    assert.deepEqual(selectTests(dir.path, { filter: ['sub/'] }), [join(dir.path, 'dist/test/sub/b.test.js')]);
  } finally {
    dir.dispose();
  }
});

test('test:fast leaves out exactly the slow suites, each of which exists', async () => {
  const { SLOW_SUITES, selectTests } = await load();
  assert.ok(SLOW_SUITES.length > 0);
  for (const f of SLOW_SUITES) assert.ok(existsSync(join(repoRoot, f)), `${f} exists`);
  const all = selectTests(repoRoot);
  const fast = selectTests(repoRoot, { fast: true });
  assert.deepEqual(all.filter((f) => !fast.includes(f)).sort(), SLOW_SUITES.map((f) => join(repoRoot, 'dist', f.replace(/\.ts$/, '.js'))).sort());
});

test('test:unit runs only suites of pure modules: none imports the server, the CLI, child processes or the helpers that start servers', async () => {
  const { UNIT_SUITES, selectTests } = await load();
  const unit = selectTests(repoRoot, { unit: true });
  for (const prefix of UNIT_SUITES)
    assert.ok(existsSync(join(repoRoot, prefix)) || unit.some((f) => f.includes(`/dist/${prefix}`)), `${prefix} names suites that exist`);
  assert.ok(unit.length >= 30, `${unit.length} unit suites`);
  const impure =
    /from '[^']*(?:\/src\/http\/server|\/src\/cli\/(?!commands\/index)|helpers\/(?:embedded|postgres|databases|browser|replicas|raw-http))[^']*'|from 'node:(?:child_process|worker_threads|net|http)'/;
  const offenders = unit
    .map((f) => relative(join(repoRoot, 'dist'), f).replace(/\.js$/, '.ts'))
    .filter((f) => impure.test(readFileSync(join(repoRoot, f), 'utf8')));
  assert.deepEqual(offenders, []);
});

test('slowest first: the same files, the slow suites first in their listed order, then the rest by path', async () => {
  const { SLOW_SUITES, selectTests } = await load();
  const all = selectTests(repoRoot);
  const ordered = selectTests(repoRoot, { slowestFirst: true });
  assert.deepEqual([...ordered].sort(), [...all].sort());
  const slow = SLOW_SUITES.map((f) => join(repoRoot, 'dist', f.replace(/\.ts$/, '.js')));
  assert.deepEqual(ordered.slice(0, slow.length), slow);
  assert.deepEqual(
    ordered.slice(slow.length),
    all.filter((f) => !slow.includes(f)),
  );
});
