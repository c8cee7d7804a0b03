import { HttpServer } from '../http/server.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { openDatabase, type Db } from '../store/sqlite.js';
import { Authenticator } from '../identity/auth.js';
import { SqliteIdentityStore, type IdentityStore } from '../identity/store.js';
import { mountIdentityRoutes } from '../identity/routes.js';
import type { TenantId } from '../identity/types.js';
import { mountControlPlane, SqliteControlPlaneStore } from '../controlplane/index.js';
import { providerFromEnv, type PaymentProvider } from '../controlplane/billing/provider.js';

export interface EmbeddedOptions {
  host?: string;
  port?: number;
  db: string;
  adminToken?: string | undefined;
  logger?: Logger;
  now?: () => number;
  tls?: { certFile: string; keyFile: string };
  /** Payment provider for billing checkouts; default from the environment (Stripe when STRIPE_SECRET_KEY is set, else offline). */
  payments?: PaymentProvider;
  /** Public origin used in billing links (SERVICE_PUBLIC_URL); default from the request's Host header. */
  publicUrl?: string;
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
  const controlPlane = mountControlPlane(server, {
    store: new SqliteControlPlaneStore(db, now),
    auth,
    identity,
    now,
    payments: options.payments ?? providerFromEnv(),
    publicUrl: options.publicUrl ?? process.env.SERVICE_PUBLIC_URL,
    tls: Boolean(options.tls),
  });
  const watched = onTenantChange(identity, (id) => controlPlane.tenantChanged(id));
  mountIdentityRoutes(server, { store: watched, auth, now, insights: controlPlane.insights });

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

/** The identity store, telling `changed` after every tenant status or plan change (caches of other services drop it). */
function onTenantChange(store: IdentityStore, changed: (id: TenantId) => void): IdentityStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'setTenantStatus' || prop === 'setTenantPlan') {
        return async (id: TenantId, value: never) => {
          const result = await target[prop](id, value);
          changed(id);
          return result;
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
