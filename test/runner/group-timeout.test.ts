import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir } from '../helpers/paths.js';
import { runFiles, write } from './group-files.js';

// A file that hangs in a group (scripts/run-group.mjs) is named: by its suite's timeout when a
// test hangs, by the runner (scripts/run-files.mjs) when its top-level code does and the per-file
// timeout cuts the group's process. A file of its own: it waits out a 40 s budget.

test("a grouped file that hangs fails by its name; when the runner's timeout cuts the group, the run names the file it was in and those not run", async () => {
  const tmp = tempDir();
  try {
    const first = write(tmp.path, 'first.test.mjs', `test('passes', () => {});`);
    // A test that waits for a timer far beyond the budget: its suite's timeout fails it, and the group goes on.
    const waits = write(tmp.path, 'waits.test.mjs', `test('waits', () => new Promise((r) => setTimeout(r, 600_000)));`);
    // Top-level code that never ends: no suite timeout covers it, the runner's cut of the process does.
    const stuck = write(tmp.path, 'stuck.test.mjs', `await new Promise((r) => setTimeout(r, 600_000));\ntest('never made', () => {});`);
    const last = write(tmp.path, 'last.test.mjs', `test('never run', () => {});`);
    const r = await runFiles(['1', '40000', '-', `group:${[first, waits, stuck, last].join(':')}`]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /ok 1 - passes/);
    assert.match(r.stdout, /not ok 1 - waits[\s\S]*not ok 2 - \S*waits\.test\.mjs\n[\s\S]*failureType: 'testTimeoutFailure'/);
    assert.match(r.stderr, /group-1\.test\.mjs ended during \S*stuck\.test\.mjs; not run: \S*last\.test\.mjs\n/);
    assert.doesNotMatch(r.stdout, /never run/);
  } finally {
    tmp.dispose();
  }
});
