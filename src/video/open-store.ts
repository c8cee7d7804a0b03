import type { Database } from '../store/database.js';
import { PostgresVideoStore } from './postgres-store.js';
import { SqliteVideoStore } from './sqlite-store.js';
import type { VideoStore } from './store.js';

/** The video store on an open database, its schema migrated (after the identity schema, whose tenants it references). */
export async function openVideoStore(database: Database, now: () => number = Date.now): Promise<VideoStore> {
  return database.kind === 'sqlite' ? new SqliteVideoStore(database.db, now) : PostgresVideoStore.open(database.pool, now);
}
