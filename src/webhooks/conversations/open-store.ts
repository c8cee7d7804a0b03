import type { Database } from '../../store/database.js';
import { PostgresWebhookStore } from '../postgres-store.js';
import { SqliteWebhookStore } from '../sqlite-store.js';
import type { WebhookStore } from '../store.js';
import { PostgresConversationStore } from './postgres-store.js';
import { SqliteConversationStore } from './sqlite-store.js';
import type { ConversationStore } from './store.js';

/**
 * The conversation store on the database of `outbox` (the webhook store), its schema migrated.
 * The two share the database so that a conversation's change and its event commit together.
 */
export async function openConversationStore(database: Database, outbox: WebhookStore, now: () => number = Date.now): Promise<ConversationStore> {
  if (database.kind === 'sqlite') {
    if (!(outbox instanceof SqliteWebhookStore)) throw new Error('the conversation store needs the SQLite webhook store of the same database');
    return new SqliteConversationStore(database.db, outbox, now);
  }
  if (!(outbox instanceof PostgresWebhookStore)) throw new Error('the conversation store needs the PostgreSQL webhook store of the same database');
  return PostgresConversationStore.open(database.pool, outbox, now);
}
