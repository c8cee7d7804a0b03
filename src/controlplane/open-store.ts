import type { Database } from '../store/database.js';
import { PostgresControlPlaneStore } from './postgres-store.js';
import { SqliteControlPlaneStore } from './sqlite-store.js';
import type { ControlPlaneStore } from './store.js';

/** The control-plane store on an open database, its schema migrated (the identity schema must be there first: servers belong to tenants). */
export async function openControlPlaneStore(database: Database, now: () => number = Date.now): Promise<ControlPlaneStore> {
  return database.kind === 'sqlite' ? new SqliteControlPlaneStore(database.db, now) : PostgresControlPlaneStore.open(database.pool, now);
}
