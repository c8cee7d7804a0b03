import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PgBroadcast } from '../../src/store/broadcast.js';
import { openPool } from '../../src/store/postgres.js';
import { freshDatabase } from '../helpers/postgres.js';

const next = (list: string[], n: number): Promise<void> =>
  new Promise((resolve) => {
    const check = setInterval(() => {
      if (list.length >= n) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });

test('a broadcast reaches every process listening on the channel, the sender included', async () => {
  const url = await freshDatabase();
  const pool = openPool(url);
  const a = new PgBroadcast(url, pool);
  const b = new PgBroadcast(url, pool);
  try {
    const heardA: string[] = [];
    const heardB: string[] = [];
    a.listen(
      'chan_x',
      (p) => heardA.push(p),
      () => {},
    );
    b.listen(
      'chan_x',
      (p) => heardB.push(p),
      () => {},
    );
    b.listen(
      'chan_y',
      () => heardB.push('wrong channel'),
      () => {},
    );
    await Promise.all([a.start(), b.start()]);
    await a.send('chan_x', 'hello');
    await Promise.all([next(heardA, 1), next(heardB, 1)]);
    assert.deepEqual([heardA, heardB], [['hello'], ['hello']]);
  } finally {
    await a.close();
    await b.close();
    await pool.end();
  }
});

test('a listener whose connection is cut reconnects, listens again and is told to resync', async () => {
  const url = await freshDatabase();
  const pool = openPool(url);
  const a = new PgBroadcast(url, pool);
  try {
    const heard: string[] = [];
    const resyncs: string[] = [];
    a.listen(
      'chan_r',
      (p) => heard.push(p),
      () => resyncs.push('resync'),
    );
    await a.start();
    // Another session ends the listening connection, as a database restart or a network cut would.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    );
    await admin.end();
    await next(resyncs, 1);
    await a.send('chan_r', 'after');
    await next(heard, 1);
    assert.deepEqual(heard, ['after']);
  } finally {
    await a.close();
    await pool.end();
  }
});

test('channels are identifiers and payloads fit a NOTIFY', async () => {
  const url = await freshDatabase();
  const pool = openPool(url);
  const a = new PgBroadcast(url, pool);
  try {
    assert.throws(
      () =>
        a.listen(
          'bad; DROP',
          () => {},
          () => {},
        ),
      /lower-case identifier/,
    );
    await assert.rejects(a.send('ok', 'x'.repeat(8000)), /at most 7999 bytes/);
  } finally {
    await a.close();
    await pool.end();
  }
});

test('channels added after the start are listened to one statement at a time, and each is heard', async () => {
  const url = await freshDatabase();
  const pool = openPool(url);
  const a = new PgBroadcast(url, pool);
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    await a.start();
    const heard: string[] = [];
    // Several in one turn, as services do when they start: node-postgres warns of (and pg 9 refuses) a statement sent while one runs.
    for (const c of ['chan_1', 'chan_2', 'chan_3', 'chan_4']) {
      a.listen(
        c,
        (p) => heard.push(`${c}:${p}`),
        () => {},
      );
    }
    // The LISTENs are in flight; a message is heard once its channel's LISTEN has run.
    const deadline = Date.now() + 10_000;
    while (heard.length < 4 && Date.now() < deadline) {
      for (const c of ['chan_1', 'chan_2', 'chan_3', 'chan_4']) if (!heard.some((h) => h.startsWith(`${c}:`))) await a.send(c, 'hi');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual([...new Set(heard)].sort(), ['chan_1:hi', 'chan_2:hi', 'chan_3:hi', 'chan_4:hi']);
    assert.deepEqual(
      warnings.filter((w) => w.includes('already executing')),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    await a.close();
    await pool.end();
  }
});
