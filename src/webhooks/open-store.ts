import type { Database } from '../store/database.js';
import { PostgresWebhookStore } from './postgres-store.js';
import { SqliteWebhookStore } from './sqlite-store.js';
import type { WebhookStore } from './store.js';

/** The webhook store on an open database, its schema migrated. */
export async function openWebhookStore(database: Database, now: () => number = Date.now): Promise<WebhookStore> {
  return database.kind === 'sqlite' ? new SqliteWebhookStore(database.db, now) : PostgresWebhookStore.open(database.pool, now);
}
