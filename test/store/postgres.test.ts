import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migratePg, openPool, transaction, sqlState, UNIQUE_VIOLATION } from '../../src/store/postgres.js';
import { freshDatabase } from '../helpers/postgres.js';

test('migratePg applies each migration once, even from replicas starting together', async () => {
  const url = await freshDatabase();
  const pools = [openPool(url), openPool(url), openPool(url)];
  try {
    const migrations = [
      { version: 1, sql: 'CREATE TABLE t (id BIGINT PRIMARY KEY, n BIGINT NOT NULL)' },
      { version: 2, sql: 'ALTER TABLE t ADD COLUMN note TEXT' },
    ];
    await Promise.all(pools.map((p) => migratePg(p, 'x', migrations)));
    const { rows } = await pools[0]!.query('SELECT version FROM schema_migrations WHERE component = $1 ORDER BY version', ['x']);
    assert.deepEqual(
      rows.map((r) => r.version),
      [1, 2],
    );
    await migratePg(pools[1]!, 'x', migrations);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
});

test('migratePg refuses gaps and rolls a failing migration back whole', async () => {
  const pool = openPool(await freshDatabase());
  try {
    await assert.rejects(migratePg(pool, 'x', [{ version: 2, sql: 'SELECT 1' }]), /numbered 1..n/);
    await assert.rejects(migratePg(pool, 'y', [{ version: 1, sql: 'CREATE TABLE y (a INT); SELECT nonsense_column FROM y' }]), /y migration 1 failed/);
    const { rows } = await pool.query("SELECT to_regclass('y') AS t");
    assert.equal(rows[0].t, null);
  } finally {
    await pool.end();
  }
});

test('transaction commits on success, rolls back on a throw; bigint arrives as a number', async () => {
  const pool = openPool(await freshDatabase());
  try {
    await pool.query('CREATE TABLE t (id BIGINT PRIMARY KEY)');
    await transaction(pool, async (c) => c.query('INSERT INTO t VALUES (1)'));
    await assert.rejects(
      transaction(pool, async (c) => {
        await c.query('INSERT INTO t VALUES (2)');
        await c.query('INSERT INTO t VALUES (1)');
      }),
      (err) => sqlState(err) === UNIQUE_VIOLATION,
    );
    const { rows } = await pool.query('SELECT id, COUNT(*) OVER () AS n FROM t');
    assert.deepEqual(rows, [{ id: 1, n: 1 }]);
  } finally {
    await pool.end();
  }
});

test('a serializable transaction that loses a race runs again', async () => {
  const pool = openPool(await freshDatabase());
  try {
    await pool.query('CREATE TABLE c (k INT PRIMARY KEY, n BIGINT NOT NULL)');
    await pool.query('INSERT INTO c VALUES (1, 0)');
    await Promise.all(
      Array.from({ length: 8 }, () =>
        transaction(
          pool,
          async (c) => {
            const { rows } = await c.query('SELECT n FROM c WHERE k = 1');
            await c.query('UPDATE c SET n = $1 WHERE k = 1', [rows[0].n + 1]);
          },
          'serializable',
        ),
      ),
    );
    const { rows } = await pool.query('SELECT n FROM c');
    assert.equal(rows[0].n, 8);
  } finally {
    await pool.end();
  }
});
