import type Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './files.js';
import { makeDirSync } from './make-dir.js';

export type Db = Database.Database;

/**
 * The driver, loaded on the first open. Every command's option parsing reaches this module
 * (through the database URL helpers), and most commands never open a database; better-sqlite3
 * is CommonJS, so a synchronous require keeps `openDatabase` synchronous.
 */
let driver: typeof Database | undefined;
function sqliteDriver(): typeof Database {
  driver ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  return driver;
}

/**
 * Opens the one SQLite file every embedded service shares. WAL lets readers run beside the
 * writer; synchronous=NORMAL keeps every committed transaction through a process crash
 * (only an OS crash or power loss can drop the last few), which is the durability the
 * services promise; busy_timeout covers a second process (`brainstem admin`) on the file.
 */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') {
    makeDirSync(dirname(file), PRIVATE_DIR_MODE);
    // Created here with the private mode before SQLite opens it (SQLite would create it 0644),
    // and SQLite gives the -wal and -shm files the database file's mode. An existing file keeps its mode.
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  }
  const db = new (sqliteDriver())(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return db;
}

export interface Migration {
  /** Versions of one component start at 1 and only grow; an applied migration is never edited. */
  version: number;
  sql: string;
  /**
   * Runs with foreign keys off (they cannot be switched inside a transaction), as SQLite's
   * table-rebuild procedure needs; every key is checked before the commit.
   */
  rebuildsTable?: boolean;
}

/**
 * Applies a component's pending migrations in order, each in its own transaction. Components
 * (identity, controlplane, video, webhooks) version their schemas independently in one table.
 */
export function migrate(db: Db, component: string, migrations: readonly Migration[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    component TEXT NOT NULL,
    version INTEGER NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (component, version)
  )`);
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations WHERE component = ?').all(component) as { version: number }[]).map((r) => r.version),
  );
  const record = db.prepare('INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)');
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`${component} migrations must be numbered 1..n without gaps; found ${m.version} at position ${i + 1}`);
  });
  for (const m of sorted) {
    if (applied.has(m.version)) continue;
    if (m.rebuildsTable) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        db.exec(m.sql);
        if (m.rebuildsTable && (db.pragma('foreign_key_check') as unknown[]).length > 0)
          throw new Error(`${component} migration ${m.version} broke a foreign key`);
        record.run(component, m.version, new Date().toISOString());
      })();
    } finally {
      if (m.rebuildsTable) db.pragma('foreign_keys = ON');
    }
  }
}
