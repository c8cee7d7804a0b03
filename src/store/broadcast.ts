import type pg from 'pg';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { openClient } from './postgres.js';

/**
 * Tells every process on one database that something changed, so that what a process keeps
 * in memory (heads, resolved keys, tenant status) follows a change made by another. A
 * message may be missed while a process is disconnected: `onResync` then runs once the
 * connection is back, and the listener must reload whatever it caches.
 */
export interface Broadcast {
  /** Sends `payload` (at most BROADCAST_MAX_PAYLOAD bytes) to every process listening on `channel`, this one included. */
  send(channel: string, payload: string): Promise<void>;
  listen(channel: string, onMessage: (payload: string) => void, onResync: () => void): void;
  close(): Promise<void>;
}

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; ours are a few ids. */
export const BROADCAST_MAX_PAYLOAD = 7999;
/** Reconnect back-off of the listening connection: from the first to the cap, doubling. */
export const BROADCAST_RECONNECT_MS = { first: 100, max: 5000 } as const;

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Broadcast over PostgreSQL LISTEN/NOTIFY: one dedicated connection listens (a pooled one
 * would be handed to other queries and lose its subscriptions); sends go through the pool.
 * When the listening connection drops it is re-opened with back-off, every channel is
 * listened to again and every listener is told to resync.
 */
export class PgBroadcast implements Broadcast {
  private readonly listeners = new Map<string, { onMessage: (payload: string) => void; onResync: () => void }[]>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private retryMs: number = BROADCAST_RECONNECT_MS.first;
  private retryTimer: NodeJS.Timeout | null = null;
  /**
   * The LISTENs sent on the open connection, one after another: node-postgres only queues a
   * statement given while another runs (and warns that pg 9 will refuse it), and channels are
   * often added several in one turn, as each service starts.
   */
  private listening: Promise<unknown> = Promise.resolve();
  private readonly logger: Logger;

  constructor(
    private readonly url: string,
    private readonly pool: Pick<pg.Pool, 'query'>,
    options: { logger?: Logger } = {},
  ) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Opens the listening connection; resolves once every channel registered so far is listened to. */
  start(): Promise<void> {
    this.connecting ??= this.connect(false).finally(() => (this.connecting = null));
    return this.connecting;
  }

  async send(channel: string, payload: string): Promise<void> {
    checkChannel(channel);
    if (Buffer.byteLength(payload) > BROADCAST_MAX_PAYLOAD) throw new Error(`a broadcast payload is at most ${BROADCAST_MAX_PAYLOAD} bytes`);
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  listen(channel: string, onMessage: (payload: string) => void, onResync: () => void): void {
    checkChannel(channel);
    const list = this.listeners.get(channel);
    if (list) list.push({ onMessage, onResync });
    else {
      this.listeners.set(channel, [{ onMessage, onResync }]);
      const client = this.client;
      if (client) this.listening = this.listening.then(() => client.query(`LISTEN ${channel}`)).catch(() => this.lost(client));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => {});
  }

  private async connect(resync: boolean): Promise<void> {
    const client = openClient(this.url);
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      for (const l of this.listeners.get(n.channel) ?? []) {
        try {
          l.onMessage(n.payload ?? '');
        } catch (err) {
          this.logger.error('broadcast: a listener failed', { channel: n.channel, error: String(err) });
        }
      }
    });
    await client.connect();
    for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`);
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = BROADCAST_RECONNECT_MS.first;
    if (resync) for (const list of this.listeners.values()) for (const l of list) l.onResync();
  }

  /** The listening connection is gone: messages may be missed until it is back, so reconnect and resync. */
  private lost(client: pg.Client | null = this.client): void {
    if (this.closed || client !== this.client || this.retryTimer) return;
    this.client = null;
    client?.end().catch(() => {});
    this.logger.warn('broadcast: lost the listening connection; reconnecting', { retryMs: this.retryMs });
    const retry = (): void => {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (this.closed) return;
        this.connect(true).catch(() => {
          this.retryMs = Math.min(this.retryMs * 2, BROADCAST_RECONNECT_MS.max);
          retry();
        });
      }, this.retryMs);
      this.retryTimer.unref();
    };
    retry();
  }
}

/**
 * A send of an empty message on `channel` for "look again": a call while one is on its way
 * is folded into one more send after it, so a burst of changes costs two messages, not one
 * each. A send that fails is dropped: listeners also look on a timer.
 */
export function announcer(broadcast: Pick<Broadcast, 'send'>, channel: string): () => void {
  let sending = false;
  let again = false;
  const send = (): void => {
    sending = true;
    again = false;
    void broadcast
      .send(channel, '')
      .catch(() => {})
      .finally(() => {
        sending = false;
        if (again) send();
      });
  };
  return () => {
    if (sending) again = true;
    else send();
  };
}

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new Error(`a broadcast channel is a lower-case identifier, got "${channel}"`);
}
