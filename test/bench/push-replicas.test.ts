import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pushReplicaTable, runPushReplicaBench } from '../../bench/config-push/replicas.js';
import { clusterUrl } from '../helpers/postgres.js';

// A smoke run of the config push across replicas at the smallest size, on the test
// PostgreSQL: every publish seen on every stream, each figure present. The latencies
// themselves are measured by `brainstem bench config-push --database`, never asserted here.

test('bench config-push --database: a publish through one replica reaches every stream on the others, none missed', async () => {
  const r = await runPushReplicaBench({
    database: await clusterUrl(),
    replicas: 2,
    sidecars: 6,
    publishes: 2,
    connectBatch: 6,
    serverCpu: undefined,
    // Missed means never seen: the test waits as long as a loaded machine needs.
    timeoutMs: 600_000,
    log: () => {},
  });
  assert.equal(r.missed, 0);
  // Sidecars 0, 2, 4 on the publishing replica, 1, 3, 5 on the other; each sees both publishes.
  assert.deepEqual([r.samePush.samples, r.otherPush.samples, r.sameApplied.samples, r.otherApplied.samples], [6, 6, 6, 6]);
  assert.match(pushReplicaTable(r), /the other replicas/);
});
