import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cli } from '../helpers/paths.js';
import { defaultWarmupS } from '../../bench/control-plane/replicas.js';

// The scale-out benchmarks' flags: registered, and refused with the reason when they cannot run.

test('bench video --database is registered with its flags and refuses a SQLite URL', () => {
  const video = spawnSync(process.execPath, [cli, 'bench', 'video', '--help'], { encoding: 'utf8' });
  for (const flag of ['--database', '--workers', '--renders', '--replica-cpu', '--object-store']) assert.match(video.stdout, new RegExp(flag));
  const sqlite = spawnSync(process.execPath, [cli, 'bench', 'video', '--database', 'sqlite:/tmp/x.db'], { encoding: 'utf8' });
  assert.notEqual(sqlite.status, 0);
  assert.match(sqlite.stderr, /must be a postgres:\/\/ URL/);
});

test('bench config-push --database is registered with --replicas and refuses a single replica', () => {
  const push = spawnSync(process.execPath, [cli, 'bench', 'config-push', '--help'], { encoding: 'utf8' });
  for (const flag of ['--database', '--replicas']) assert.match(push.stdout, new RegExp(flag));
  const one = spawnSync(process.execPath, [cli, 'bench', 'config-push', '--database', 'postgres://u:p@127.0.0.1:1/db', '--replicas', '1'], {
    encoding: 'utf8',
  });
  assert.notEqual(one.status, 0);
  assert.match(one.stderr, /--replicas must be one count of 2 or more/);
});

test('bench control-plane --database takes --warmup and --cpu-prof, and refuses a warm-up out of range', () => {
  const help = spawnSync(process.execPath, [cli, 'bench', 'control-plane', '--help'], { encoding: 'utf8' });
  for (const flag of ['--database', '--replicas', '--replica-cpu', '--warmup', '--cpu-prof']) assert.match(help.stdout, new RegExp(flag));
  const bad = spawnSync(process.execPath, [cli, 'bench', 'control-plane', '--database', 'postgres://u:p@127.0.0.1:1/db', '--warmup', '601'], {
    encoding: 'utf8',
  });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--warmup/);
});

test('bench control-plane --database warms each process for 2 s of CPU under its quota by default', () => {
  assert.deepEqual([defaultWarmupS(0.25), defaultWarmupS(0.3), defaultWarmupS(1), defaultWarmupS(2), defaultWarmupS(null)], [8, 7, 2, 2, 2]);
});

test('bench webhooks --database takes --warmup (per serve process) and --rounds, and refuses rounds out of range', () => {
  const help = spawnSync(process.execPath, [cli, 'bench', 'webhooks', '--help'], { encoding: 'utf8' });
  for (const flag of ['--database', '--replicas', '--replica-cpu', '--warmup', '--rounds']) assert.match(help.stdout, new RegExp(flag));
  assert.match(help.stdout, /each serve process/);
  const bad = spawnSync(process.execPath, [cli, 'bench', 'webhooks', '--database', 'postgres://u:p@127.0.0.1:1/db', '--rounds', '21'], { encoding: 'utf8' });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--rounds/);
});

test('bench control-plane --database reads --rounds too, and refuses rounds out of range', () => {
  const bad = spawnSync(process.execPath, [cli, 'bench', 'control-plane', '--database', 'postgres://u:p@127.0.0.1:1/db', '--rounds', '0'], {
    encoding: 'utf8',
  });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--rounds/);
});
