import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runWorkerBench, workersTable } from '../../bench/video/workers.js';
import { pushReplicaTable, runPushReplicaBench } from '../../bench/config-push/replicas.js';
import { clusterUrl } from '../helpers/postgres.js';
import { cli } from '../helpers/paths.js';

// Smoke runs of the two scale-out benchmarks at the smallest size, on the test PostgreSQL:
// every render made and every publish seen, each figure present. The figures themselves are
// measured by `brainstem bench`, never asserted here.

test("bench video --database: one worker then two render every video, ffmpeg inside each worker's quota", async () => {
  const r = await runWorkerBench({
    database: await clusterUrl(),
    workers: [1, 2],
    renders: 2,
    photos: 1,
    format: '1:1',
    objectStore: null,
    replicaCpu: 1,
    log: () => {},
  });
  assert.deepEqual(
    r.runs.map((x) => [x.workers, x.renders, x.failed, x.cpuSecondsPerWorker.length]),
    [
      [1, 2, 0, 1],
      [2, 2, 0, 2],
    ],
  );
  for (const run of r.runs) {
    assert.ok(run.rendersPerMinute > 0 && run.cpuSecondsPerRender > 0, JSON.stringify(run));
    // Every ffmpeg seen under a worker ran in that worker's group (when this machine has quotas).
    if (r.settings.replicaCpu !== null) assert.equal(run.ffmpeg.inQuota, run.ffmpeg.seen);
  }
  assert.ok(r.scaling > 0);
  assert.match(workersTable(r), /2 workers ÷ 1: [\d.]+× renders per minute/);
});

test('bench config-push --database: a publish through one replica reaches every stream on the others, none missed', async () => {
  const r = await runPushReplicaBench({
    database: await clusterUrl(),
    replicas: 2,
    sidecars: 6,
    publishes: 2,
    connectBatch: 6,
    serverCpu: undefined,
    log: () => {},
  });
  assert.equal(r.missed, 0);
  // Sidecars 0, 2, 4 on the publishing replica, 1, 3, 5 on the other; each sees both publishes.
  assert.deepEqual([r.samePush.samples, r.otherPush.samples, r.sameApplied.samples, r.otherApplied.samples], [6, 6, 6, 6]);
  assert.match(pushReplicaTable(r), /the other replicas/);
});

test('the scale-out flags are registered and refuse what they cannot run', () => {
  const video = spawnSync(process.execPath, [cli, 'bench', 'video', '--help'], { encoding: 'utf8' });
  for (const flag of ['--database', '--workers', '--renders', '--replica-cpu', '--object-store']) assert.match(video.stdout, new RegExp(flag));
  const push = spawnSync(process.execPath, [cli, 'bench', 'config-push', '--help'], { encoding: 'utf8' });
  for (const flag of ['--database', '--replicas']) assert.match(push.stdout, new RegExp(flag));
  const sqlite = spawnSync(process.execPath, [cli, 'bench', 'video', '--database', 'sqlite:/tmp/x.db'], { encoding: 'utf8' });
  assert.notEqual(sqlite.status, 0);
  assert.match(sqlite.stderr, /must be a postgres:\/\/ URL/);
  const one = spawnSync(process.execPath, [cli, 'bench', 'config-push', '--database', 'postgres://u:p@127.0.0.1:1/db', '--replicas', '1'], {
    encoding: 'utf8',
  });
  assert.notEqual(one.status, 0);
  assert.match(one.stderr, /--replicas must be one count of 2 or more/);
});
