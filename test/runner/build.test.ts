import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../helpers/paths.js';

// scripts/build.mjs (`npm run build`, npm's `prepare`): a build is skipped only when dist/ is the
// last successful build of the sources as they are; anything changed since, in the sources or in
// dist/, builds again. Run on a copy in a temp tree whose `tsc` is a stand-in that logs each
// project it is asked for and writes one output (the real one would rewrite this run's dist/).

function tree(): { root: string; log: string; build(args?: string[]): Promise<{ code: number; out: string }>; projects(): string[]; dispose(): void } {
  const tmp = tempDir();
  const root = tmp.path;
  const log = join(root, 'tsc.log');
  for (const dir of ['scripts', 'src', 'test', 'dashboard', 'widget', 'node_modules/.bin', 'node_modules/typescript'])
    mkdirSync(join(root, dir), { recursive: true });
  copyFileSync(join(repoRoot, 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'dashboard', 'page.ts'), 'export const p = 1;\n');
  writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  writeFileSync(join(root, 'package.json'), '{}\n');
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
  writeFileSync(join(root, 'node_modules', 'typescript', 'package.json'), '{"version":"7.0.2"}\n');
  // `tsc -p PROJECT`: logs PROJECT's last part and writes dist/PART.js; fails when the source says so.
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  writeFileSync(
    tsc,
    `#!/bin/sh\nname=$(basename "$2")\necho "$name" >> ${JSON.stringify(log)}\n` +
      `if grep -q FAIL ${JSON.stringify(join(root, 'src', 'a.ts'))}; then echo "a.ts: error" >&2; exit 2; fi\n` +
      `mkdir -p ${JSON.stringify(join(root, 'dist'))} && echo built > ${JSON.stringify(join(root, 'dist'))}/"$name".js\n`,
  );
  chmodSync(tsc, 0o755);
  return {
    root,
    log,
    build: (args = []) =>
      new Promise((resolve) => {
        execFile(process.execPath, [join(root, 'scripts', 'build.mjs'), ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
        });
      }),
    projects() {
      let text = '';
      try {
        text = readFileSync(log, 'utf8');
      } catch {
        // nothing built
      }
      rmSync(log, { force: true });
      return text.split('\n').filter(Boolean);
    },
    dispose: tmp.dispose,
  };
}

test('a build is skipped when dist/ is the build of the same sources; a source or a dist/ file changed builds again', async () => {
  const t = tree();
  try {
    const all = [t.root.split('/').pop()!, 'dashboard', 'widget'];
    assert.equal((await t.build()).code, 0);
    assert.deepEqual(t.projects(), all, 'the first build runs tsc on the three projects');
    const again = await t.build();
    assert.equal(again.code, 0);
    assert.deepEqual(t.projects(), [], 'nothing changed: no tsc');
    assert.match(again.out, /dist\/ is the build of these sources already/);

    writeFileSync(join(t.root, 'dashboard', 'page.ts'), 'export const p = 2;\n');
    assert.equal((await t.build()).code, 0);
    assert.deepEqual(t.projects(), all, 'a source changed');
    await t.build();
    assert.deepEqual(t.projects(), []);

    writeFileSync(join(t.root, 'src', 'b.ts'), 'export const b = 1;\n');
    await t.build();
    assert.deepEqual(t.projects(), all, 'a source added');

    rmSync(join(t.root, 'dist', 'widget.js'));
    await t.build();
    assert.deepEqual(t.projects(), all, 'an output deleted');
    assert.equal(readFileSync(join(t.root, 'dist', 'widget.js'), 'utf8'), 'built\n');

    utimesSync(join(t.root, 'dist', 'dashboard.js'), new Date(), new Date(Date.UTC(2020, 0, 1)));
    await t.build();
    assert.deepEqual(t.projects(), all, 'an output touched');

    writeFileSync(join(t.root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    await t.build();
    assert.deepEqual(t.projects(), all, 'other packages installed');

    await t.build(['--force']);
    assert.deepEqual(t.projects(), all, '--force');
  } finally {
    t.dispose();
  }
});

test('a failed build leaves no stamp: the next build runs tsc again, and fails again', async () => {
  const t = tree();
  try {
    assert.equal((await t.build()).code, 0);
    t.projects();
    writeFileSync(join(t.root, 'src', 'a.ts'), 'export const a: number = "FAIL";\n');
    const failed = await t.build();
    assert.equal(failed.code, 2);
    assert.match(failed.out, /a\.ts: error/);
    assert.deepEqual(t.projects(), [t.root.split('/').pop()!], 'stopped at the first project that failed');
    assert.equal((await t.build()).code, 2);
    assert.equal(t.projects().length, 1, 'tried again');
  } finally {
    t.dispose();
  }
});
