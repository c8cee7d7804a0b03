import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteIdentityStore } from '../../src/identity/sqlite-store.js';
import { SqliteControlPlaneStore } from '../../src/controlplane/sqlite-store.js';
import { INGEST_GATHER, IngestQueue, parseReport } from '../../src/controlplane/telemetry.js';
import type { ServerId } from '../../src/controlplane/types.js';
import { tempDir } from '../helpers/paths.js';
import { report } from './helpers.js';

// The telemetry route answers each report from the queue's own promise: `then` runs as the
// batch settles. One report's `then` failing must fail that report alone, a batch the store
// refuses fails every report in it, and a report is answered only once its batch is committed.

async function queueOnStore() {
  const dir = tempDir();
  const db = openDatabase(join(dir.path, 'test.db'));
  const tenant = await new SqliteIdentityStore(db).createTenant('t', 'agency');
  const store = new SqliteControlPlaneStore(db);
  const server = await store.createServer(tenant.id, 's', { version: 0 } as never, 'test');
  const stored = () => (db.prepare('SELECT COUNT(*) AS n FROM cp_reports').get() as { n: number }).n;
  return { queue: new IngestQueue(store), serverId: server.id, stored, dispose: () => (db.close(), dir.dispose()) };
}

const record = (serverId: ServerId, reportId: string) => ({ serverId, receivedAt: Date.now(), report: parseReport(report(serverId, { reportId })) });

test('a batch: each report settles with what its then makes of its outcome, after the commit; a throwing then fails only its own report', async () => {
  const q = await queueOnStore();
  try {
    const seen: number[] = [];
    const results = await Promise.allSettled([
      q.queue.push(record(q.serverId, 'a'), (o) => {
        seen.push(q.stored());
        return `a:${o.accepted}:${o.received}`;
      }),
      q.queue.push(record(q.serverId, 'b'), () => {
        throw new Error('then failed');
      }),
      q.queue.push(record(q.serverId, 'a'), (o) => Promise.resolve(`again:${o.accepted}:${o.received}`)),
      q.queue.push(record(q.serverId, 'c')),
    ]);
    assert.deepEqual(seen, [3], 'the batch was committed before the first then ran');
    assert.deepEqual(results[0], { status: 'fulfilled', value: 'a:true:2' });
    assert.equal(results[1]!.status, 'rejected');
    assert.equal((results[1] as PromiseRejectedResult).reason.message, 'then failed');
    assert.deepEqual(results[2], { status: 'fulfilled', value: 'again:false:0' });
    assert.deepEqual(results[3], { status: 'fulfilled', value: { accepted: true, received: 2 } });
    assert.equal(q.stored(), 3, 'the report whose then failed is stored all the same (its outcome was committed)');
  } finally {
    q.dispose();
  }
});

test('a batch the store refuses fails every report in it, then never runs, and the next batch is written', async () => {
  const q = await queueOnStore();
  try {
    let ran = 0;
    const results = await Promise.allSettled([
      q.queue.push(record(q.serverId, 'x'), () => ran++),
      // No such server: the foreign key refuses the whole transaction.
      q.queue.push(record(999_999 as ServerId, 'y'), () => ran++),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(ran, 0);
    assert.equal(q.stored(), 0);
    assert.deepEqual(await q.queue.push(record(q.serverId, 'z'), (o) => o), { accepted: true, received: 2 });
    assert.equal(q.stored(), 1);
  } finally {
    q.dispose();
  }
});

test('a batch gathers while reports keep coming (INGEST_GATHER): reports over consecutive turns go in one commit, a lone report is written at the first turn, and gathering stops after maxTurns', async () => {
  const q = await queueOnStore();
  try {
    const batches: number[] = [];
    const store = (q.queue as unknown as { store: { ingest(r: readonly unknown[]): Promise<unknown> } }).store;
    const ingest = store.ingest.bind(store);
    store.ingest = (records) => {
      batches.push(records.length);
      return ingest(records);
    };
    const turn = () => new Promise<void>((r) => setImmediate(r));
    // Below, a report comes with a turn: pushed once the turn's wait began, so it lands before the
    // queue's own check of that turn, as a request read from a socket does.

    // A lone report: written at the first turn after it came, as before any gathering.
    let written = false;
    const lone = q.queue.push(record(q.serverId, 'lone'), () => (written = true));
    await turn();
    await turn();
    assert.equal(written, true);
    await lone;
    assert.deepEqual(batches, [1]);

    // One report a turn for three turns, then none: one batch of three.
    const spread: Promise<unknown>[] = [];
    for (let i = 0; i < 3; i++) {
      const t = turn();
      spread.push(q.queue.push(record(q.serverId, `s${i}`)));
      await t;
    }
    await Promise.all(spread);
    assert.deepEqual(batches, [1, 3]);

    // A report every turn without end: each batch closes after INGEST_GATHER.maxTurns turns.
    const steady: Promise<unknown>[] = [];
    for (let i = 0; i < 4 * INGEST_GATHER.maxTurns; i++) {
      const t = turn();
      steady.push(q.queue.push(record(q.serverId, `t${i}`)));
      await t;
    }
    await Promise.all(steady);
    assert.ok(
      batches.slice(2).every((n) => n <= INGEST_GATHER.maxTurns + 1),
      `batches ${batches}`,
    );
    assert.equal(q.stored(), 1 + 3 + 4 * INGEST_GATHER.maxTurns);

    // A burst of maxReports in one turn is written without waiting for more.
    const burst = Array.from({ length: INGEST_GATHER.maxReports }, (_, i) => q.queue.push(record(q.serverId, `b${i}`)));
    const before = batches.length;
    await turn();
    assert.deepEqual(batches.slice(before), [INGEST_GATHER.maxReports]);
    await Promise.all(burst);
  } finally {
    q.dispose();
  }
});
