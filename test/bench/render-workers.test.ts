import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkerBench, workersTable } from '../../bench/video/workers.js';
import { clusterUrl } from '../helpers/postgres.js';

// A smoke run of the render-workers benchmark at the smallest size, on the test PostgreSQL:
// every render made, each figure present. The figures themselves are measured by
// `brainstem bench video --database`, never asserted here.

test("bench video --database: two workers render every video, each ffmpeg inside its worker's quota", async () => {
  // One worker count, to stay well inside a test file's time on a loaded machine: the bench runs
  // each count the same way, and two workers exercise the quotas, the claims and the counting.
  const r = await runWorkerBench({
    database: await clusterUrl(),
    workers: [2],
    renders: 2,
    photos: 1,
    format: '1:1',
    objectStore: null,
    replicaCpu: 1,
    log: () => {},
  });
  assert.equal(r.runs.length, 1);
  const run = r.runs[0]!;
  assert.deepEqual([run.workers, run.renders, run.failed, run.cpuSecondsPerWorker.length], [2, 2, 0, 2]);
  assert.ok(run.rendersPerMinute > 0 && run.cpuSecondsPerRender > 0, JSON.stringify(run));
  // Every ffmpeg seen under a worker ran in that worker's group (when this machine has quotas).
  if (r.settings.replicaCpu !== null) assert.equal(run.ffmpeg.inQuota, run.ffmpeg.seen);
  assert.equal(r.scaling, 1);
  assert.match(workersTable(r), /2 workers ÷ 2: 1× renders per minute/);
});
