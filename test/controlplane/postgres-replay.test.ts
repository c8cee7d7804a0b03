import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { PgReplayLedger, REPLAY_BATCH, REPLAY_GATHER_TURNS } from '../../src/controlplane/postgres-replay.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import type { Pool, PoolClient } from '../../src/store/postgres.js';
import { postgresTestDatabase } from '../helpers/databases.js';

interface TwoReplicas {
  /** The ledgers of two replicas on one fresh database with the control-plane schema. */
  a: PgReplayLedger;
  b: PgReplayLedger;
  /** The first replica's pool, to look at the table. */
  pool: Pool;
  /** The current unix second: signatures inside the window (older ones are pruned, their timestamps refuse them). */
  s: number;
  dispose(): Promise<void>;
}

async function twoReplicas(): Promise<TwoReplicas> {
  const t = await postgresTestDatabase();
  if (t.database.kind !== 'postgres') throw new Error('postgres expected');
  await openIdentityStore(t.database);
  await openControlPlaneStore(t.database);
  const second = t.second();
  if (second.kind !== 'postgres') throw new Error('postgres expected');
  const now = Date.now();
  return {
    a: new PgReplayLedger(t.database.pool, 300, () => now),
    b: new PgReplayLedger(second.pool, 300, () => now),
    pool: t.database.pool,
    s: Math.floor(now / 1000),
    dispose: () => t.dispose(),
  };
}

/** `pool` for a ledger, calling `count` for each statement sent on a connection the ledger checks out. */
function countingPool(pool: Pool, count: () => void): Pool {
  const wrapped = new WeakSet<PoolClient>();
  return {
    query: pool.query.bind(pool),
    connect: async () => {
      const client = await pool.connect();
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query.bind(client) as (...a: unknown[]) => unknown;
        client.query = ((...args: unknown[]) => (count(), query(...args))) as PoolClient['query'];
      }
      return client;
    },
  } as unknown as Pool;
}

const stored = async (pool: Pool, ts: number): Promise<number> =>
  Number((await pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM cp_replay WHERE ts = $1', [ts])).rows[0]!.n);

test('a signature recorded through one replica is a replay through another; one burst, one winner each', async () => {
  const { a, b, s, dispose } = await twoReplicas();
  try {
    assert.equal(await a.record(s, 42), true);
    assert.equal(await b.record(s, 42), false);
    assert.equal(await b.record(s + 1, 42), true, 'another second is another signature');
    // The same signature many times at once, through both: exactly one use.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).record(s + 2, 7)));
    assert.equal(burst.filter(Boolean).length, 1);
  } finally {
    await dispose();
  }
});

test('group commit: concurrent signatures share one flush; replays sent to two replicas at once are accepted by exactly one each', async () => {
  const { a, b, s, pool, dispose } = await twoReplicas();
  try {
    // More than one flush holds, so the burst goes in several statements one after another.
    const n = REPLAY_BATCH + 500;
    const [onA, onB] = await Promise.all([
      Promise.all(Array.from({ length: n }, (_, i) => a.record(s, i))),
      Promise.all(Array.from({ length: n }, (_, i) => b.record(s, i))),
    ]);
    for (let i = 0; i < n; i++) assert.equal(Number(onA[i]) + Number(onB[i]), 1, `signature ${i}: accepted by exactly one replica`);
    assert.equal(await stored(pool, s), n);
  } finally {
    await dispose();
  }
});

test('a flush that fails answers every request waiting on it with the error and stores none of its signatures', async () => {
  const { a, s, pool, dispose } = await twoReplicas();
  try {
    // One signature PostgreSQL refuses (not an integer) fails the statement its flush is.
    const waiting = [a.record(s, 1), a.record(s, 2), a.record(s + 0.5, 3), a.record(s, 4)];
    const outcomes = await Promise.allSettled(waiting);
    for (const o of outcomes) assert.equal(o.status, 'rejected');
    assert.equal(await stored(pool, s), 0, 'nothing of the failed flush is stored');
    // The ledger goes on: the same signatures are new afterwards.
    assert.deepEqual(await Promise.all([a.record(s, 1), a.record(s, 2), a.record(s, 4)]), [true, true, true]);
    assert.equal(await stored(pool, s), 3);
  } finally {
    await dispose();
  }
});

test(`after a flush returns, the next waits up to REPLAY_GATHER_TURNS (${REPLAY_GATHER_TURNS}) turns of the event loop for signatures to join it, and no longer`, async () => {
  const { pool, s, dispose } = await twoReplicas();
  try {
    let statements = 0;
    // The ledger's pool, counting the statements sent on the connections it checks out.
    const counting = countingPool(pool, () => statements++);
    const ledger = new PgReplayLedger(counting, 300, () => s * 1000);
    assert.deepEqual(await Promise.all([1, 2, 3, 4, 5].map((i) => ledger.record(s, i))), [true, true, true, true, true]);
    const before = statements;
    // Two now and three a turn later (the clients just answered, arriving one by one): one flush.
    const early = [ledger.record(s, 6), ledger.record(s, 7)];
    const late = await new Promise<Promise<boolean>[]>((resolve) => setImmediate(() => resolve([8, 9, 10].map((i) => ledger.record(s, i)))));
    assert.deepEqual(await Promise.all([...early, ...late]), [true, true, true, true, true]);
    assert.equal(statements - before, 1, 'the signatures of the next turn went in the same flush');
    // A lone signature after a larger flush is not held past the turns: it is answered, and a replay is still refused.
    assert.equal(await ledger.record(s, 11), true);
    assert.equal(await ledger.record(s, 11), false);
  } finally {
    await dispose();
  }
});

test('a busy ledger keeps one connection across its flushes; when that connection is lost, the next flush takes another', async () => {
  const { pool, s, dispose } = await twoReplicas();
  try {
    let checkouts = 0;
    let last: PoolClient | undefined;
    const watching = {
      query: pool.query.bind(pool),
      connect: async () => {
        checkouts++;
        return (last = await pool.connect());
      },
    } as unknown as Pool;
    const ledger = new PgReplayLedger(watching, 300, () => s * 1000);
    // Three flushes back to back (the first in flight while the next two fill): one checkout.
    const first = [1, 2, 3].map((i) => ledger.record(s, i));
    const later = await new Promise<Promise<boolean>[]>((resolve) => setImmediate(() => resolve([4, 5, 6, 7].map((i) => ledger.record(s, i)))));
    assert.deepEqual(await Promise.all([...first, ...later]), [true, true, true, true, true, true, true]);
    assert.equal(checkouts, 1);
    // The ledger's backend is killed (a failover, an administrator): nothing crashes, and the
    // signatures that follow are recorded on a new connection, replays still refused.
    const pid = (last as unknown as { processID: number }).processID;
    await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    const after = await Promise.allSettled([8, 9].map((i) => ledger.record(s, i)));
    const retried = await Promise.all(after.map((o, i) => (o.status === 'fulfilled' ? Promise.resolve(o.value) : ledger.record(s, 8 + i))));
    assert.deepEqual(retried, [true, true]);
    assert.deepEqual(await Promise.all([ledger.record(s, 8), ledger.record(s, 1)]), [false, false]);
    assert.notEqual((last as unknown as { processID: number }).processID, pid);
  } finally {
    await dispose();
  }
});

test("a request's continuation runs when its flush returns and settles its request alone; a failed insert runs every request's `failed` and none of the continuations", async () => {
  const { a, b, s, dispose } = await twoReplicas();
  try {
    const seen = (fresh: boolean) => (fresh ? 'first use' : 'replay');
    assert.equal(await a.record(s, 21, seen), 'first use');
    assert.equal(await b.record(s, 21, seen), 'replay');
    // One flush: a continuation that throws rejects its own request only, and its signature
    // was recorded all the same (the statement stored the whole flush).
    const mixed = await Promise.allSettled([
      a.record(s, 22, () => {
        throw new Error('refused after the record');
      }),
      a.record(s, 23, seen),
      a.record(s, 23, seen),
    ]);
    assert.equal(mixed[0]!.status, 'rejected');
    assert.match(String((mixed[0] as PromiseRejectedResult).reason), /refused after the record/);
    assert.deepEqual(
      mixed.slice(1).map((o) => (o as PromiseFulfilledResult<string>).value),
      ['first use', 'replay'],
    );
    assert.equal(await b.record(s, 22), false);
  } finally {
    await dispose();
  }

  // A database that fails every statement: each request is told, after its `failed` ran once.
  const down = new Error('the database is gone');
  const broken = {
    connect: async () => ({ query: async () => Promise.reject(down), on() {}, removeListener() {}, release() {} }),
    query: async () => ({ rows: [] }),
  } as unknown as Pool;
  const ledger = new PgReplayLedger(broken, 300, () => s * 1000);
  let failed = 0;
  let continued = 0;
  const outcomes = await Promise.allSettled(
    [1, 2, 3].map((i) =>
      ledger.record(
        s,
        i,
        () => continued++,
        () => failed++,
      ),
    ),
  );
  assert.deepEqual(
    outcomes.map((o) => o.status === 'rejected' && o.reason === down),
    [true, true, true],
  );
  assert.deepEqual([failed, continued], [3, 0]);
});
