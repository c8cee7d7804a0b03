import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { logLevelOf } from '../../src/log.js';
import { cli, repoRoot } from '../helpers/paths.js';

const validate = (level: string) =>
  spawnSync(process.execPath, [cli, 'bundle', 'validate', join(repoRoot, 'bundles', 'default')], {
    encoding: 'utf8',
    env: { ...process.env, BRAINSTEM_LOG: level },
  });

test('regression: BRAINSTEM_LOG=bogus is refused in one line naming the levels (it was accepted silently)', () => {
  const run = validate('bogus');
  assert.equal(run.status, 1);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, /BRAINSTEM_LOG must be one of silent, error, warn, info, debug, got "bogus"/);
});

test('every documented level is accepted; unset or empty means info', () => {
  for (const level of ['silent', 'error', 'warn', 'info', 'debug']) {
    assert.equal(logLevelOf(level), level);
    assert.equal(validate(level).status, 0, level);
  }
  assert.equal(logLevelOf(undefined), 'info');
  assert.equal(logLevelOf(''), 'info');
});
