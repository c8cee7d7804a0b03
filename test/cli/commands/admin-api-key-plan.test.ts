import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, tempDir } from '../../helpers/paths.js';

const run = promisify(execFile);
const bin = join(repoRoot, 'bin', 'brainstem');

/**
 * `brainstem admin create-api-key` issued a key to a tenant below agency, a key that could
 * only ever answer 403 plan_required; POST /v1/api-keys refuses it, so the CLI does too.
 */
test('admin create-api-key refuses a tenant below agency and issues one from agency up', async () => {
  const dir = tempDir();
  try {
    const db = join(dir.path, 'b.db');
    const admin = (...args: string[]) => run(process.execPath, [bin, 'admin', '--db', db, ...args]);
    const pro = JSON.parse((await admin('create-tenant', '--name', 'Pro', '--plan', 'pro')).stdout);
    const agency = JSON.parse((await admin('create-tenant', '--name', 'Agency', '--plan', 'agency')).stdout);
    await assert.rejects(admin('create-api-key', '--tenant', String(pro.id)), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /agency plan or higher/);
      return true;
    });
    const key = JSON.parse((await admin('create-api-key', '--tenant', String(agency.id), '--name', 'platform')).stdout);
    assert.match(key.key, /^bpk_/);
  } finally {
    dir.dispose();
  }
});
