import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BackgroundCheckpoints, FALLBACK_CHECKPOINT_PAGES } from '../../src/store/checkpointer.js';
import { openDatabaseAt } from '../../src/store/database.js';
import { openDatabase, type Db } from '../../src/store/sqlite.js';

const autocheckpoint = (db: Db) => (db.pragma('wal_autocheckpoint') as { wal_autocheckpoint: number }[])[0]!.wal_autocheckpoint;

/** Writes about `pages` pages of WAL (one row of ~3 KB a page). */
function write(db: Db, pages: number): void {
  const insert = db.prepare('INSERT INTO t (x) VALUES (randomblob(3000))');
  for (let i = 0; i < pages; i++) insert.run();
}

/** Waits for a condition the checkpoint thread brings about (no deadline of its own: the test runner's timeout bounds it). */
async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 10));
}

function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  const file = join(dir, 'a.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x BLOB)');
  return { dir, file, db };
}

test('a quiet file keeps SQLite’s own checkpoint and no thread; a busy one gets the thread, which copies the WAL into the file', async () => {
  const { dir, file, db } = fresh();
  const checkpoints = new BackgroundCheckpoints(db, file);
  try {
    write(db, 50);
    checkpoints.look();
    assert.equal(checkpoints.running, false, 'a WAL under 1,000 pages starts no thread');
    assert.equal(autocheckpoint(db), 1000);

    // Past SQLite's own checkpoint size (that checkpoint ran inside a commit): the thread starts,
    // and the writer's checkpoint becomes the fallback.
    write(db, 1100);
    checkpoints.look();
    assert.equal(checkpoints.running, true);
    assert.equal(autocheckpoint(db), FALLBACK_CHECKPOINT_PAGES);
    await checkpoints.ready;

    // Fewer pages than the fallback: only the thread can have copied them into the database file.
    const before = statSync(file).size;
    write(db, 500);
    await until(() => statSync(file).size >= before + 400 * 3000);
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    assert.equal(r!.checkpointed, r!.log);
  } finally {
    await checkpoints.stop();
    assert.equal(checkpoints.running, false);
    db.close();
  }
  // Every row is there after the thread and the writer have closed.
  const again = openDatabase(file);
  assert.equal((again.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 1650);
  again.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a checkpoint thread that fails hands checkpoints back to the writer and says so', async () => {
  const { dir, db } = fresh();
  const warnings: string[] = [];
  // The thread opens a file that is not there (and must exist): it fails at once.
  const checkpoints = new BackgroundCheckpoints(db, join(dir, 'missing.db'), (message) => warnings.push(message));
  try {
    checkpoints.start();
    assert.equal(autocheckpoint(db), FALLBACK_CHECKPOINT_PAGES);
    await until(() => !checkpoints.running);
    assert.equal(autocheckpoint(db), 1000, 'the writer checkpoints by itself again');
    assert.match(warnings.join('\n'), /checkpoint thread failed/);
  } finally {
    await checkpoints.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('closing a SQLite database opened for the services stops its checkpoint thread first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
  const file = join(dir, 'b.db');
  const database = openDatabaseAt({ kind: 'sqlite', file });
  assert.equal(database.kind, 'sqlite');
  if (database.kind !== 'sqlite') return;
  database.db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x BLOB)');
  write(database.db, 1100);
  // The database's watcher looks every second; a busy file gets its thread.
  await until(() => autocheckpoint(database.db) === FALLBACK_CHECKPOINT_PAGES);
  await database.close();
  assert.equal(database.db.open, false);
  const again = openDatabase(file);
  assert.equal((again.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 1100);
  again.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a handle closed without stop() starts no thread and throws nothing', () => {
  const { dir, file, db } = fresh();
  const checkpoints = new BackgroundCheckpoints(db, file);
  db.close();
  checkpoints.start();
  assert.equal(checkpoints.running, false);
  rmSync(dir, { recursive: true, force: true });
});
