import { join } from 'node:path';
import { openDatabaseAt, type Database, type DatabaseLocation } from '../../src/store/database.js';
import { tempDir } from './paths.js';
import { freshDatabase } from './postgres.js';

/**
 * The contract-suite pattern: a store's behaviour is one suite function taking a factory
 * (`runXStoreSuite(name, open)` in test/<service>/store-contract.ts), and each backend's test
 * file runs it on a TestDatabase of its kind, so SQLite and PostgreSQL answer the same tests.
 */
export interface TestDatabase {
  readonly location: DatabaseLocation;
  /** The first handle on the storage. */
  readonly database: Database;
  /** Another handle on the same storage (a second process or replica), closed by dispose. */
  second(): Database;
  /** Closes every handle and removes the storage. */
  dispose(): Promise<void>;
}

function track(location: DatabaseLocation, cleanup: () => void): TestDatabase {
  const handles = [openDatabaseAt(location)];
  return {
    location,
    database: handles[0]!,
    second() {
      const h = openDatabaseAt(location);
      handles.push(h);
      return h;
    },
    async dispose() {
      for (const h of handles) await h.close();
      cleanup();
    },
  };
}

/** A SQLite file in a fresh temp directory. */
export async function sqliteTestDatabase(): Promise<TestDatabase> {
  const dir = tempDir();
  return track({ kind: 'sqlite', file: join(dir.path, 'test.db') }, dir.dispose);
}

/** A fresh database on this process's embedded PostgreSQL (started on first use). */
export async function postgresTestDatabase(): Promise<TestDatabase> {
  return track({ kind: 'postgres', url: await freshDatabase() }, () => {});
}

export const BACKENDS = { sqlite: sqliteTestDatabase, postgres: postgresTestDatabase } as const;
export type Backend = keyof typeof BACKENDS;
