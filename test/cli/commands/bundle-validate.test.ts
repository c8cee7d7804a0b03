import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, repoRoot, tempDir } from '../../helpers/paths.js';

const validate = (...args: string[]) => spawnSync(process.execPath, [cli, 'bundle', 'validate', ...args], { encoding: 'utf8' });
const DEFAULT_BUNDLE = join(repoRoot, 'bundles', 'default');

test('bundle validate takes the directory or its bundle.json (it used to look for dir/bundle.json/bundle.json)', () => {
  const dir = validate(DEFAULT_BUNDLE, '--json');
  assert.equal(dir.status, 0, dir.stderr);
  const file = validate(join(DEFAULT_BUNDLE, 'bundle.json'), '--json');
  assert.equal(file.status, 0, file.stderr);
  assert.deepEqual(JSON.parse(file.stdout), JSON.parse(dir.stdout));
});

test('bundle validate: another file is one clear line; an invalid bundle lists every reason with exit 1', () => {
  const tmp = tempDir();
  try {
    const other = join(tmp.path, 'mine.json');
    copyFileSync(join(DEFAULT_BUNDLE, 'bundle.json'), other);
    const wrong = validate(other);
    assert.equal(wrong.status, 1);
    assert.equal(wrong.stderr.trim().split('\n').length, 1, wrong.stderr);
    assert.match(wrong.stderr, /is a file; a bundle is a directory holding bundle\.json/);

    writeFileSync(join(tmp.path, 'bundle.json'), JSON.stringify({ version: 0, policy: { emotes: 'yes' } }));
    const bad = validate(join(tmp.path, 'bundle.json'), '--json');
    assert.equal(bad.status, 1);
    const out = JSON.parse(bad.stdout) as { ok: boolean; problems: { path: string }[] };
    assert.equal(out.ok, false);
    assert.ok(out.problems.length >= 2, JSON.stringify(out.problems));
  } finally {
    tmp.dispose();
  }
});
