import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { cli, tempDir } from '../../helpers/paths.js';

function admin(db: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [cli, 'admin', '--db', db, ...args], { encoding: 'utf8' });
}

test('brainstem admin create-tenant prints the spec Tenant (id, name, plan, serverCount, monthlySpendUsd, status, createdAt)', () => {
  const dir = tempDir();
  const run = admin(join(dir.path, 'admin.db'), 'create-tenant', '--name', 'Acme', '--plan', 'pro');
  dir.dispose();
  assert.equal(run.status, 0, run.stderr);
  const tenant = JSON.parse(run.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(tenant), ['id', 'name', 'plan', 'serverCount', 'monthlySpendUsd', 'status', 'createdAt']);
  assert.equal(tenant.name, 'Acme');
  assert.equal(tenant.plan, 'pro');
  assert.equal(tenant.serverCount, 0);
  assert.equal(tenant.monthlySpendUsd, 0);
  assert.equal(tenant.status, 'active');
  assert.match(String(tenant.createdAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
});

test('brainstem admin create-tenant with a bad plan exits 1 with one line', () => {
  const dir = tempDir();
  const run = admin(join(dir.path, 'admin.db'), 'create-tenant', '--name', 'Acme', '--plan', 'gold');
  dir.dispose();
  assert.equal(run.status, 1);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, /--plan must be one of/);
});
