import type { Database } from '../store/database.js';
import { PostgresIdentityStore } from './postgres-store.js';
import { SqliteIdentityStore } from './sqlite-store.js';
import type { IdentityStore } from './store.js';

/** The identity store on an open database, its schema migrated. */
export async function openIdentityStore(database: Database, now: () => number = Date.now): Promise<IdentityStore> {
  return database.kind === 'sqlite' ? new SqliteIdentityStore(database.db, now) : PostgresIdentityStore.open(database.pool, now);
}
