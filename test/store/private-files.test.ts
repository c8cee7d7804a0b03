import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir, writeFileAtomic } from '../../src/sidecar/state/state-dir.js';
import { writeStateFile } from '../../src/sidecar/state/state-file.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

// The database (holding webhook signing secrets in plain text) was created 0644.
test('issue 14: the database with its -wal and -shm, and the data directory, are private to their owner', async () => {
  const dir = tempDir();
  const s = await startTestServer({ db: join(dir.path, 'nested', 'b.db'), dataDir: join(dir.path, 'data') });
  try {
    const { token } = await tenantSession(s);
    const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    assert.equal(widget.status, 201);
    const db = join(dir.path, 'nested', 'b.db');
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      assert.ok(existsSync(file), file);
      assert.equal(mode(file), '600', file);
    }
    assert.equal(mode(join(dir.path, 'nested')), '700');
    for (const sub of ['', 'photos', 'assets', 'work', 'tmp']) assert.equal(mode(join(dir.path, 'data', sub)), '700', sub);
  } finally {
    await s.stop();
    dir.dispose();
  }
});

test("the sidecar's state directory and state files are private to their owner", async () => {
  const dir = tempDir();
  try {
    const state = join(dir.path, '.brainstem', 'sidecar-1');
    await ensureDir(state);
    assert.equal(mode(state), '700');
    assert.equal(mode(join(dir.path, '.brainstem')), '700');
    await writeFileAtomic(join(state, 'bundle.json'), '{}');
    assert.equal(mode(join(state, 'bundle.json')), '600');
    async function* agents() {
      yield '{"agent":1}';
    }
    await writeStateFile(join(dir.path, 'brain-state.json'), agents());
    assert.equal(mode(join(dir.path, 'brain-state.json')), '600');
  } finally {
    dir.dispose();
  }
});
