import { openControlPlaneStore } from '../controlplane/open-store.js';
import { PgReplayLedger } from '../controlplane/postgres-replay.js';
import type { ReplayLedger } from '../controlplane/replay.js';
import type { ControlPlaneStore } from '../controlplane/store.js';
import { MemoryRateLimiter, type RateLimiter } from '../ratelimit/limiter.js';
import { openIdentityStore } from '../identity/open-store.js';
import type { IdentityStore } from '../identity/store.js';
import type { Logger } from '../log.js';
import { SIGNATURE_WINDOW_S } from '../signing/request.js';
import { PgBroadcast, type Broadcast } from '../store/broadcast.js';
import { describeDatabase, openDatabaseAt, type Database, type DatabaseLocation } from '../store/database.js';
import { PgRateLimiter } from '../store/pg-rate-limiter.js';
import { openVideoStore } from '../video/open-store.js';
import type { VideoStore } from '../video/store.js';
import { openWebhookStore } from '../webhooks/open-store.js';
import type { WebhookStore } from '../webhooks/store.js';
import { openConversationStore } from '../webhooks/conversations/open-store.js';
import type { ConversationStore } from '../webhooks/conversations/store.js';

/** Every service's store on one database. */
export interface Stores {
  identity: IdentityStore;
  controlPlane: ControlPlaneStore;
  webhooks: WebhookStore;
  /** The chat-widget conversations, on the webhook store's database (their events commit with them). */
  conversations: ConversationStore;
  video: VideoStore;
}

/**
 * What the processes on one PostgreSQL database share beyond their stores: a broadcast of
 * changes (LISTEN/NOTIFY) and the replay record of signed requests.
 */
export interface Cluster {
  broadcast: Broadcast;
  replay: ReplayLedger;
}

/** An open database with its stores, its rate limiter and (on PostgreSQL) what replicas share. */
export interface Backend {
  database: Database;
  stores: Stores;
  /** The one limiter of every route class (sessions, keys, logins); shared by the replicas on PostgreSQL. */
  limiter: RateLimiter;
  /** Null on SQLite: one process serves the file, nothing to share. */
  cluster: Cluster | null;
  close(): Promise<void>;
}

/**
 * Opens the database and every store on it, schemas migrated in dependency order (the
 * identity tables first: the others refer to tenants). On PostgreSQL it also starts the
 * broadcast listener and the shared rate limiter's background sync.
 */
export async function openBackend(location: DatabaseLocation, options: { now: () => number; logger: Logger }): Promise<Backend> {
  const named = (err: unknown) => databaseError(location, err);
  let database: Database;
  try {
    database = openDatabaseAt(location, {
      onError: (err) => options.logger.warn('database: an idle connection failed', { error: err.message }),
      warn: (message, fields) => options.logger.warn(message, fields),
    });
  } catch (err) {
    throw named(err);
  }
  try {
    const stores = await openStores(database, options.now);
    if (database.kind === 'sqlite') return { database, stores, limiter: new MemoryRateLimiter(), cluster: null, close: () => database.close() };
    const limiter = await PgRateLimiter.open(database.pool, { logger: options.logger });
    const broadcast = new PgBroadcast(database.url, database.pool, { logger: options.logger });
    try {
      await broadcast.start();
    } catch (err) {
      await limiter.close();
      throw err;
    }
    return {
      database,
      stores,
      limiter,
      cluster: { broadcast, replay: new PgReplayLedger(database.pool, SIGNATURE_WINDOW_S, options.now) },
      async close() {
        await limiter.close();
        await broadcast.close();
        await database.close();
      },
    };
  } catch (err) {
    await database.close().catch(() => {});
    throw named(err);
  }
}

export async function openStores(database: Database, now: () => number): Promise<Stores> {
  const identity = await openIdentityStore(database, now);
  const controlPlane = await openControlPlaneStore(database, now);
  const webhooks = await openWebhookStore(database, now);
  const conversations = await openConversationStore(database, webhooks, now);
  return { identity, controlPlane, webhooks, conversations, video: await openVideoStore(database, now) };
}

/** A failure to open a database, named, so an unreachable server, a wrong password or a file that is no database says which database (never the password) and what to do. */
export function databaseError(location: DatabaseLocation, err: unknown): Error {
  const hint = databaseHint(location, (err as { code?: unknown } | null)?.code);
  return new Error(`database ${describeDatabase(location)}: ${err instanceof Error ? err.message : String(err)}${hint ? `; ${hint}` : ''}`, { cause: err });
}

/** The usual fix for the usual failures to open a database, by the driver's error code. */
function databaseHint(location: DatabaseLocation, code: unknown): string | undefined {
  const flag = '--database (or DATABASE_URL)';
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return `is PostgreSQL running and reachable there? Start it, or give the right host and port in ${flag}`;
    case '28P01':
    case '28000':
      return `check the user and password in ${flag}`;
    case '3D000':
      return `create the database first (createdb), or name an existing one in ${flag}`;
    case 'SQLITE_NOTADB':
    case 'SQLITE_CORRUPT':
      return location.kind === 'sqlite' ? `give --db a brainstem SQLite file, or a path where none exists yet` : undefined;
    default:
      return undefined;
  }
}
