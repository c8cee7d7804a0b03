import { isLoopbackHost } from '../http/loopback.js';
import { HttpServer } from '../http/server.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { openDatabase, type Db } from '../store/sqlite.js';
import { Authenticator } from '../identity/auth.js';
import { SqliteIdentityStore } from '../identity/store.js';
import { mountIdentityRoutes } from '../identity/routes.js';
import { createWebhooks, type Webhooks, type WebhooksOptions } from '../webhooks/index.js';
import { mountVideo, type VideoServiceOptions } from '../video/index.js';
import { dirname, join } from 'node:path';
import { mountControlPlane, SqliteControlPlaneStore } from '../controlplane/index.js';
import { providerFromEnv, type PaymentProvider } from '../controlplane/billing/provider.js';
import { mountDashboard } from '../dashboard/static.js';

export interface EmbeddedOptions {
  host?: string;
  port?: number;
  db: string;
  adminToken?: string | undefined;
  logger?: Logger;
  now?: () => number;
  tls?: { certFile: string; keyFile: string };
  /** `--insecure-http`: serve plain HTTP on an address that is not loopback (behind a TLS-terminating proxy). */
  insecureHttp?: boolean;
  /** `--allow-private-webhooks`: webhook URLs may be plain http:// and resolve to private addresses. */
  allowPrivateWebhooks?: boolean;
  /** Where the property-video API keeps photos and rendered assets; default `data/` beside the DB file. */
  dataDir?: string;
  /** ffmpeg for renders; default FFMPEG_PATH, else ffmpeg on PATH, else @ffmpeg-installer/ffmpeg. */
  ffmpegPath?: string;
  /** Video renders at once; default half the CPU cores, at least 1. */
  renderConcurrency?: number;
  /** Tuning of the property-video API for tests and benchmarks (render timings, preset, rate limit). */
  video?: Pick<VideoServiceOptions, 'timings' | 'preset' | 'rateLimit' | 'callbackPollMs' | 'fontFile'>;
  /** Webhook dispatcher tuning and test hooks (transport, DNS, jitter). */
  webhooks?: Pick<WebhooksOptions, 'dispatcher' | 'resolve' | 'send' | 'retentionMs'>;
  /** Payment provider for billing checkouts; default from the environment (Stripe when STRIPE_SECRET_KEY is set, else offline). */
  payments?: PaymentProvider;
  /** Public origin used in billing links (SERVICE_PUBLIC_URL); default from the request's Host header. */
  publicUrl?: string;
  /** Signing secret of the Stripe webhook endpoint; default STRIPE_WEBHOOK_SECRET. */
  stripeWebhookSecret?: string;
}

export interface Embedded {
  port: number;
  url: string;
  db: Db;
  webhooks: Webhooks;
  close(): Promise<void>;
}

/**
 * The embedded server: every service on one HttpServer and one SQLite file. The services
 * never import one another; this is where they meet.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<Embedded> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const host = options.host ?? '127.0.0.1';
  if (!options.tls && !options.insecureHttp && !isLoopbackHost(host)) {
    throw new Error(`refusing plain HTTP on ${host}, which is not a loopback address: the control plane is HTTPS only. Give --tls-cert and --tls-key, or --insecure-http when a TLS-terminating proxy is in front`);
  }
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
    stripeWebhookSecret: options.stripeWebhookSecret ?? process.env.STRIPE_WEBHOOK_SECRET,
    countWidgets: async (tenantId) => (await webhooks.service.store.listWidgets(tenantId)).length,
    tls: Boolean(options.tls),
  });
  mountIdentityRoutes(server, { store: identity, auth, now, insights: controlPlane.insights, onTenantChange: (id) => controlPlane.tenantChanged(id) });
  const webhooks = createWebhooks({
    db,
    server,
    auth,
    getTenant: (id) => identity.getTenant(id),
    plans: controlPlane.plans,
    allowPrivate: options.allowPrivateWebhooks ?? false,
    now,
    logger,
    ...options.webhooks,
  });

  const video = await mountVideo(server, {
    db,
    auth,
    dataDir: options.dataDir ?? join(dirname(options.db), 'data'),
    ffmpegPath: options.ffmpegPath,
    renderConcurrency: options.renderConcurrency,
    allowPrivateCallbacks: options.allowPrivateWebhooks,
    now,
    logger,
    ...options.video,
  });
  // Last, so that no API route is shadowed by the page's static routes.
  mountDashboard(server, { logger });

  let port: number;
  try {
    port = await server.listen(host, options.port ?? 8080);
  } catch (err) {
    await video.close();
    db.close();
    throw err;
  }
  await webhooks.start();
  const scheme = options.tls ? 'https' : 'http';
  return {
    port,
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    db,
    webhooks,
    async close() {
      await server.close();
      await video.close();
      await webhooks.stop();
      db.close();
    },
  };
}
