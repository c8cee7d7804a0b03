import type { Command } from 'commander';
import { openDatabaseAt, type Database } from '../../store/database.js';
import type { IdentityStore } from '../../identity/store.js';
import { stackDatabase } from '../data-dir.js';
import { printJson } from '../util.js';

/**
 * Opens the services' database of an offline command's flags (migrated by opening the identity
 * store, which every other store's tables depend on), runs `fn` and prints what it returns as
 * JSON; the database is closed whatever happens. Opening errors name the database.
 */
export async function withStackDatabase(cmd: Command, fn: (database: Database, identity: IdentityStore) => Promise<unknown>): Promise<void> {
  const location = stackDatabase(cmd.optsWithGlobals() as { dataDir?: string; database?: string; db?: string });
  // Loaded only when an offline command runs, not by every CLI start.
  const { databaseError } = await import('../../embedded/backend.js');
  const { openIdentityStore } = await import('../../identity/open-store.js');
  let database;
  try {
    database = openDatabaseAt(location);
  } catch (err) {
    throw databaseError(location, err);
  }
  try {
    const identity = await openIdentityStore(database).catch((err: unknown) => {
      throw databaseError(location, err);
    });
    printJson(await fn(database, identity));
  } finally {
    await database.close();
  }
}
