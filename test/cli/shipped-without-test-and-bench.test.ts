import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../helpers/paths.js';

// Regression: the CLI loaded the benchmarks at start and they imported test/, so
// `brainstem --version` failed with ERR_MODULE_NOT_FOUND once dist/test was absent.
test('the CLI starts from a build without dist/test and dist/bench', () => {
  const dir = tempDir();
  try {
    for (const part of ['bin', 'package.json', join('dist', 'src'), join('dist', 'brain'), join('dist', 'plugins')]) {
      cpSync(join(repoRoot, part), join(dir.path, part), { recursive: true });
    }
    symlinkSync(join(repoRoot, 'node_modules'), join(dir.path, 'node_modules'));
    const cli = join(dir.path, 'bin', 'brainstem');
    const version = spawnSync(process.execPath, [cli, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
    for (const args of [
      ['sidecar', '--help'],
      ['bench', 'tick', '--help'],
      ['bench', 'dialogue', '--help'],
      ['sim', '--help'],
    ]) {
      const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    }
  } finally {
    dir.dispose();
  }
});
