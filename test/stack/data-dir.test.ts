import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, runCli, tempDir } from '../helpers/paths.js';
import { spawnCli, stop } from './helpers.js';

/** Every path under `dir`, relative, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const rel = prefix ? `${prefix}/${name}` : name;
      return statSync(join(dir, name)).isDirectory() ? [rel, ...tree(join(dir, name), rel)] : [rel];
    });
}

test('up --db elsewhere keeps the database, video files and sidecar state beside it; nothing lands in the working directory', async () => {
  const cwd = tempDir('brainstem-cwd-');
  const data = tempDir('brainstem-data-');
  try {
    const db = join(data.path, 'stack', 'mine.db');
    const run = await spawnCli(['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--db', db, '--json'], /^\{/, {
      cwd: cwd.path,
      env: { SERVICE_ADMIN_TOKEN: '' },
    });
    const info = JSON.parse(run.match.input);
    assert.equal(info.dataDir, join(data.path, 'stack'));
    assert.equal(await stop(run.child, 'SIGINT'), 0);
    assert.deepEqual(tree(cwd.path), []);
    assert.ok(existsSync(db));
    assert.ok(existsSync(join(data.path, 'stack', 'data')));
    assert.ok(existsSync(join(data.path, 'stack', '.brainstem', 'sidecar-1', 'bundle.json')));
    assert.ok(existsSync(join(data.path, 'stack', '.brainstem', 'sidecar-1', 'brain-state.json')));
  } finally {
    cwd.dispose();
    data.dispose();
  }
});

test('up --data-dir (or BRAINSTEM_DATA_DIR) puts brainstem.db, data/ and the sidecar state in that one directory, created 0700', async () => {
  const cwd = tempDir('brainstem-cwd-');
  const data = tempDir('brainstem-data-');
  try {
    const dir = join(data.path, 'stack');
    const run = await spawnCli(['up', '--addr', '127.0.0.1:0', '--sidecar-addr', '127.0.0.1:0', '--json'], /^\{/, {
      cwd: cwd.path,
      env: { SERVICE_ADMIN_TOKEN: '', BRAINSTEM_DATA_DIR: dir },
    });
    const info = JSON.parse(run.match.input);
    assert.equal(info.db, join(dir, 'brainstem.db'));
    assert.equal(await stop(run.child, 'SIGINT'), 0);
    assert.deepEqual(tree(cwd.path), []);
    assert.equal((statSync(dir).mode & 0o777).toString(8), '700');
    const top = readdirSync(dir).sort();
    for (const name of ['.brainstem', 'brainstem.db', 'data']) assert.ok(top.includes(name), `${name} in ${top.join(', ')}`);
    // admin finds the same database through the same variable.
    const admin = await runCli(['admin', 'create-tenant', '--name', 'Second', '--plan', 'pro'], { BRAINSTEM_DATA_DIR: dir, BRAINSTEM_LOG: 'silent' });
    assert.equal(admin.code, 0, admin.stderr);
    const { openDatabase } = await import('../../src/store/sqlite.js');
    const db = openDatabase(join(dir, 'brainstem.db'));
    try {
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM tenants').get() as { n: number }).n, 2);
    } finally {
      db.close();
    }
  } finally {
    cwd.dispose();
    data.dispose();
  }
});

test('sidecar --bundle DIR --data-dir D: the brain state goes to D; nothing lands in the bundle directory or the working directory', async () => {
  const cwd = tempDir('brainstem-cwd-');
  const data = tempDir('brainstem-data-');
  const bundle = join(data.path, 'bundle');
  try {
    cpSync(join(repoRoot, 'bundles', 'default'), bundle, { recursive: true });
    const before = tree(bundle);
    const dir = join(data.path, 'sidecar');
    const run = await spawnCli(['sidecar', '--bundle', bundle, '--addr', '127.0.0.1:0', '--data-dir', dir], /listening on (http:\/\/\S+)/, { cwd: cwd.path });
    const res = await fetch(`${run.match[1]}/tick`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        snapshot: {
          agent: 1,
          time_s: 1,
          self_state: { pos: { x: 0, y: 0, z: 0 }, heading_deg: 0, health: 100, blood: 5000, hunger: 0, thirst: 0, has_weapon: false, ammo: 0 },
          targets: [],
        },
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(await stop(run.child), 0);
    assert.deepEqual(tree(cwd.path), []);
    assert.deepEqual(tree(bundle), before);
    assert.ok(existsSync(join(dir, '.brainstem', 'brain-state.json')));
  } finally {
    cwd.dispose();
    data.dispose();
  }
});
