import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { repoRoot } from '../helpers/paths.js';

// Issue 29: after `npm start` and the client examples, `brainstem.db.lock` and
// `clients/csharp/Example.exe` were left untracked in a fresh clone.
const WRITTEN = [
  'brainstem.db',
  'brainstem.db-wal',
  'brainstem.db-shm',
  'brainstem.db.lock',
  'data/photos/1.jpg',
  '.brainstem/brain-state.json',
  'clients/csharp/Example.exe',
  'clients/python/__pycache__/brainstem.cpython-311.pyc',
];

function notAGitCheckout(): string | false {
  const r = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: repoRoot, encoding: 'utf8' });
  if (r.error) return `needs git to read .gitignore the way git does (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})`;
  return r.stdout.trim() === 'true' ? false : 'needs a git checkout of the repository (this copy has no .git)';
}

test('issue 29: .gitignore covers what the stack and the client examples write', { skip: notAGitCheckout() }, () => {
  const r = spawnSync('git', ['check-ignore', '--no-index', ...WRITTEN], { cwd: repoRoot, encoding: 'utf8' });
  const ignored = new Set(r.stdout.split('\n').filter(Boolean));
  assert.deepEqual(
    WRITTEN.filter((p) => !ignored.has(p)),
    [],
  );
});
