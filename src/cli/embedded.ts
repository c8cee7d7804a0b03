import { HttpServer } from '../http/server.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { openDatabase, type Db } from '../store/sqlite.js';
import { Authenticator } from '../identity/auth.js';
import { SqliteIdentityStore } from '../identity/store.js';
import { mountIdentityRoutes } from '../identity/routes.js';

export interface EmbeddedOptions {
  host?: string;
  port?: number;
  db: string;
  adminToken?: string | undefined;
  logger?: Logger;
  now?: () => number;
  tls?: { certFile: string; keyFile: string };
}

export interface Embedded {
  port: number;
  url: string;
  db: Db;
  close(): Promise<void>;
}

/**
 * The embedded server: every service on one HttpServer and one SQLite file. The services
 * never import one another; this is where they meet.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<Embedded> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const db = openDatabase(options.db);
  const server = new HttpServer({ logger, ...(options.tls ? { tls: options.tls } : {}) });

  const identity = new SqliteIdentityStore(db, now);
  const auth = new Authenticator(identity, { adminToken: options.adminToken, now });
  mountIdentityRoutes(server, { store: identity, auth, now });

  const host = options.host ?? '127.0.0.1';
  const port = await server.listen(host, options.port ?? 8080);
  const scheme = options.tls ? 'https' : 'http';
  return {
    port,
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    db,
    async close() {
      await server.close();
      db.close();
    },
  };
}
