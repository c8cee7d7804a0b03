/**
 * Regression (issue 28): `brainstem up` ran its sidecar without a token, so every client's
 * token was silently accepted and a modder never learned their setup was wrong. The stack now
 * keeps one sidecar token (`bst_`) in its record, made once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ensureLocalStack } from '../../src/cli/local-stack.js';
import { openDatabaseAt } from '../../src/store/database.js';
import { tempDir } from '../helpers/paths.js';

test('the local stack makes its sidecar token once and keeps it; a stack made before it had one gets one on its next run', async () => {
  const dir = tempDir('brainstem-up-brain-token-');
  try {
    const location = { kind: 'sqlite', file: join(dir.path, 'brainstem.db') } as const;
    const first = await ensureLocalStack(location);
    assert.match(first.stack.brainToken, /^bst_[A-Za-z0-9_-]{43}$/);
    assert.equal((await ensureLocalStack(location)).stack.brainToken, first.stack.brainToken);
    assert.equal((await ensureLocalStack(location, { brainToken: 'given' })).stack.brainToken, 'given');
    assert.equal((await ensureLocalStack(location)).stack.brainToken, first.stack.brainToken, 'a given token does not replace the stored one');
    // A stack from before the column existed: the migration adds it empty.
    const database = openDatabaseAt(location);
    try {
      if (database.kind !== 'sqlite') throw new Error('sqlite expected');
      database.db.prepare('UPDATE local_stack SET brain_token = NULL').run();
    } finally {
      await database.close();
    }
    const upgraded = await ensureLocalStack(location);
    assert.equal(upgraded.created, false);
    assert.match(upgraded.stack.brainToken, /^bst_/);
    assert.notEqual(upgraded.stack.brainToken, first.stack.brainToken);
    assert.equal((await ensureLocalStack(location)).stack.brainToken, upgraded.stack.brainToken);
  } finally {
    dir.dispose();
  }
});
