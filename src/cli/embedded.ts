import { isLoopbackHost } from '../http/loopback.js';
import { HttpServer } from '../http/server.js';
import { text } from '../http/reply.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import type { Db } from '../store/sqlite.js';
import { openDatabaseAt, type Database, type DatabaseLocation } from '../store/database.js';
import { Authenticator } from '../identity/auth.js';
import { SqliteIdentityStore } from '../identity/store.js';
import { mountIdentityRoutes } from '../identity/routes.js';
import { createWebhooks, type Webhooks, type WebhooksOptions } from '../webhooks/index.js';
import { mountVideo, type VideoService, type VideoServiceOptions } from '../video/index.js';
import { dirname, join } from 'node:path';
import { mountControlPlane, SqliteControlPlaneStore } from '../controlplane/index.js';
import { providerFromEnv, type PaymentProvider } from '../controlplane/billing/provider.js';
import { mountDashboard } from '../dashboard/static.js';
import { limitsWith, type Limits } from '../http/limits.js';
import { MemoryRateLimiter } from '../http/ratelimit.js';
import { metricsHandler } from '../http/metrics.js';
import { combineObservers, type RequestObserver } from '../http/observe.js';
import { serveMetrics } from './serve-metrics.js';

export interface EmbeddedOptions {
  host?: string;
  port?: number;
  /** Where every service keeps its data (`--database`); `db` is the SQLite shorthand (`--db FILE`). One of the two is required. */
  database?: DatabaseLocation;
  db?: string;
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
  /** `--object-store s3://bucket/prefix`: photos, videos and posters in S3-compatible storage; default the data directory. */
  objectStore?: string;
  /** ffmpeg for renders; default FFMPEG_PATH, else ffmpeg on PATH, else @ffmpeg-installer/ffmpeg. */
  ffmpegPath?: string;
  /** Video renders at once; default half the CPU cores, at least 1. */
  renderConcurrency?: number;
  /** Address space of each ffmpeg process (prlimit --as); default 2 GiB. */
  ffmpegAddressSpaceBytes?: number;
  /** Tuning of the property-video API for tests and benchmarks (render timings, preset). */
  video?: Pick<VideoServiceOptions, 'timings' | 'preset' | 'callbackPollMs' | 'fontFile' | 'jsonUploadBudget' | 'prlimitPath' | 'renderWallClock' | 'resolve'>;
  /** Rate limits and quotas that differ from DEFAULT_LIMITS (`--limits FILE`; tests and benchmarks that need more). */
  limits?: Partial<Limits>;
  /** Webhook dispatcher tuning and test hooks (transport, DNS, jitter). */
  webhooks?: Pick<WebhooksOptions, 'dispatcher' | 'resolve' | 'send' | 'retentionMs'>;
  /** Payment provider for billing checkouts; default from the environment (Stripe when STRIPE_SECRET_KEY is set, else offline). */
  payments?: PaymentProvider;
  /** Public origin used in billing links (SERVICE_PUBLIC_URL); default from the request's Host header. */
  publicUrl?: string;
  /** Signing secret of the Stripe webhook endpoint; default STRIPE_WEBHOOK_SECRET. */
  stripeWebhookSecret?: string;
  /** `--access-log`: told of every finished request (see accessLogLine). */
  accessLog?: RequestObserver | null;
}

export interface Embedded {
  port: number;
  url: string;
  database: Database;
  /** The SQLite handle, for tests and benchmarks on a SQLite database (throws on PostgreSQL). */
  readonly db: Db;
  webhooks: Webhooks;
  /** Every route the server answers (pattern and methods). */
  routes(): { pattern: string; methods: string[] }[];
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
  const location = locationOf(options);
  if (location.kind === 'postgres') throw new Error('serve on PostgreSQL needs the PostgreSQL stores of every service');
  const database = openDatabaseAt(location);
  if (database.kind !== 'sqlite') throw new Error('unreachable');
  const db = database.db;
  const metrics = serveMetrics();
  const server = new HttpServer({ logger, observe: combineObservers([metrics.observe, options.accessLog]), ...(options.tls ? { tls: options.tls } : {}) });

  const identity = new SqliteIdentityStore(db, now);
  // One limiter for every route class: sessions, API keys, server keys, widget keys, logins.
  const auth = new Authenticator(identity, { adminToken: options.adminToken, now, limiter: new MemoryRateLimiter(), limits: limitsWith(options.limits) });
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

  let video: VideoService;
  try {
    video = await mountVideo(server, {
      db,
      auth,
      dataDir: options.dataDir ?? join(location.kind === 'sqlite' ? dirname(location.file) : process.cwd(), 'data'),
      objectStore: options.objectStore,
      ffmpegPath: options.ffmpegPath,
      renderConcurrency: options.renderConcurrency,
      ffmpegAddressSpaceBytes: options.ffmpegAddressSpaceBytes,
      allowPrivateCallbacks: options.allowPrivateWebhooks,
      publicUrl: options.publicUrl ?? process.env.SERVICE_PUBLIC_URL,
      urlSigningKey: process.env.SERVICE_URL_SIGNING_KEY,
      scheme: options.tls ? 'https' : 'http',
      getTenant: (id) => identity.getTenant(id),
      now,
      logger,
      ...options.video,
    });
  } catch (err) {
    // A storage that does not answer (a wrong bucket or credential) stops the start cleanly.
    db.close();
    throw err;
  }
  // For load balancers and supervisors: answers while the process serves, touches no storage.
  server.get('/health', () => text(200, 'ok'), { headers: [] });
  metrics.attach({
    webhookAttempts: () => webhooks.dispatcher.attempts,
    webhooksInFlight: () => webhooks.dispatcher.stats.inFlight,
    renders: () => video.renders(),
  });
  // Prometheus text format, for the admin token only: route names and volumes are operator business.
  server.get('/metrics', metricsHandler(metrics.registry, (req) => auth.admin(req)));
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
    database,
    get db(): Db {
      if (database.kind !== 'sqlite') throw new Error('the embedded server runs on PostgreSQL, not SQLite');
      return database.db;
    },
    webhooks,
    routes: () => server.routes(),
    async close() {
      await server.close();
      await video.close();
      await webhooks.stop();
      db.close();
    },
  };
}

function locationOf(options: EmbeddedOptions): DatabaseLocation {
  if (options.database) return options.database;
  if (options.db !== undefined) return { kind: 'sqlite', file: options.db };
  throw new Error('startEmbedded needs a database (database or db)');
}
