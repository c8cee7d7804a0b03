/**
 * Regression: Node's recursive mkdir (Node 20 and 22) never returns when a parent exists but
 * cannot hold the child: under /proc or /sys, mkdir answers ENOENT, Node makes the parent
 * (EEXIST) and tries the child again, forever, at 100 % CPU. `serve --data-dir /proc/x` hung
 * with no output. makeDir answers such a path with its ENOENT, and still makes what it can.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDir, makeDirSync } from '../../src/store/make-dir.js';
import { repoRoot, tempDir } from '../helpers/paths.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return undefined;
};
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: NodeJS.ErrnoException) => err.code,
  );

test(
  'makeDir and makeDirSync make every missing directory with the mode, keep existing ones, and end on a path no directory can hold',
  { skip: existsSync('/proc/self') ? false : 'needs /proc' },
  async () => {
    const dir = tempDir();
    try {
      const deep = join(dir.path, 'a', 'b', 'c');
      makeDirSync(deep, 0o700);
      assert.equal(statSync(deep).mode & 0o777, 0o700);
      assert.equal(statSync(join(dir.path, 'a')).mode & 0o777, 0o700);
      makeDirSync(deep, 0o700);
      await makeDir(join(dir.path, 'x', 'y'), 0o700);
      await makeDir(join(dir.path, 'x', 'y'), 0o700);
      assert.ok(statSync(join(dir.path, 'x', 'y')).isDirectory());
      mkdirSync(join(dir.path, 'z'));

      const file = join(dir.path, 'file');
      writeFileSync(file, 'x');
      symlinkSync(join(dir.path, 'nothing'), join(dir.path, 'dangling'));
      // Each of these hung in mkdir(…, { recursive: true }) (the first two) or must fail as it did.
      const cases: [string, string][] = [
        ['/proc/brainstem-no-such/dir', 'ENOENT'],
        ['/proc/self/brainstem', 'ENOENT'],
        [join(file, 'sub'), 'ENOTDIR'],
        [file, 'EEXIST'],
        [join(dir.path, 'dangling', 'sub'), 'EEXIST'],
      ];
      for (const [path, expected] of cases) {
        assert.equal(
          code(() => makeDirSync(path, 0o700)),
          expected,
          `sync ${path}`,
        );
        assert.equal(await codeOf(makeDir(path, 0o700)), expected, `async ${path}`);
      }
    } finally {
      dir.dispose();
    }
  },
);

test('no source file calls mkdir with { recursive: true } (it can spin forever): directories are made with makeDir', () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const code = readFileSync(path, 'utf8')
          .split('\n')
          .filter((line) => !/^\s*(?:\*|\/\/|\/\*)/.test(line));
        if (code.some((line) => /\bmkdir(?:Sync)?\([^)]*recursive:\s*true/.test(line))) offenders.push(path);
      }
    }
  };
  walk(join(repoRoot, 'src'));
  assert.deepEqual(offenders, []);
});
