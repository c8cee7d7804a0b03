import { isLoopbackHost } from '../http/loopback.js';
import type { ConfigStreamLimits } from '../controlplane/config-stream.js';
import type { ControlPlane } from '../controlplane/index.js';
import { HttpServer, type CredentialCheck } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import type { ConnectionCaps } from '../http/connections.js';
import { text } from '../http/reply.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import type { Db } from '../store/sqlite.js';
import type { Database, DatabaseLocation } from '../store/database.js';
import { Authenticator } from '../identity/auth.js';
import { mountIdentityRoutes } from '../identity/routes.js';
import { createWebhooks, type Webhooks, type WebhooksOptions } from '../webhooks/index.js';
import type { PrivateUrls } from '../net/ssrf.js';
import { createConversations, type ConversationsOptions } from '../webhooks/conversations/index.js';
import type { ConversationService } from '../webhooks/conversations/service.js';
import { mountWidgetScript } from '../dashboard/widget-script.js';
import { mountVideo, type VideoService, type VideoServiceOptions } from '../video/index.js';
import { dirname, join } from 'node:path';
import { mountControlPlane } from '../controlplane/index.js';
import { providerFromEnv, type PaymentProvider } from '../controlplane/billing/provider.js';
import { mountDashboard } from '../dashboard/static.js';
import { limitsWith, type Limits } from '../http/limits.js';
import { metricsHandler } from '../http/metrics.js';
import { combineObservers, type RequestObserver } from '../http/observe.js';
import { serveMetrics } from './metrics.js';
import { openBackend, type Backend } from './backend.js';
import { announcer } from '../store/broadcast.js';
import { createVoiceOver } from './voiceover.js';
import type { Role } from './roles.js';

/** The channel on which an API replica tells the workers a video was queued. */
const VIDEO_QUEUED_CHANNEL = 'brainstem_video_queued';
/** Webhook deliveries were queued by a process that does not deliver them (`--role api`): workers look now rather than at their next poll. */
const WEBHOOKS_DUE_CHANNEL = 'brainstem_webhooks_due';
/** A process with the background role also looks for queued videos this often (ms). */
export const WORKER_RENDER_POLL_MS = 5000;

export interface EmbeddedOptions {
  /** Default 'all'. */
  role?: Role;
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
  allowPrivateWebhooks?: PrivateUrls;
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
  /** Caps on open connections, per client address and in all (default 1,000 and 20,000; `--max-connections…`). */
  connections?: ConnectionCaps;
  /** Limits of the config push streams that differ from CONFIG_STREAM_LIMITS (tests and benchmarks). */
  streamLimits?: Partial<ConfigStreamLimits>;
  /** Rate limits and quotas that differ from DEFAULT_LIMITS (`--limits FILE`; tests and benchmarks that need more). */
  limits?: Partial<Limits>;
  /** `--job-lease`: the lease of every background job (webhook deliveries, renders, video callbacks); default each one's own constant. */
  jobLeaseMs?: number;
  /** `--webhook-concurrency`, `--webhook-endpoint-concurrency`: webhook deliveries in flight at once, in all and to one endpoint. */
  webhookConcurrency?: { total: number; perEndpoint: number };
  /** Webhook dispatcher tuning and test hooks (transport, DNS, jitter). */
  webhooks?: Pick<WebhooksOptions, 'dispatcher' | 'resolve' | 'send' | 'retentionMs'>;
  /** The chat-widget service: idle timeout, sweep interval, retention, the server's model (default from SERVICE_LLM_*), model time limits. */
  conversations?: Pick<ConversationsOptions, 'idleMs' | 'sweepMs' | 'retentionDays' | 'model' | 'firstTokenTimeoutMs' | 'replyTimeoutMs'>;
  /** Payment provider for billing checkouts; default from the environment (Stripe when STRIPE_SECRET_KEY is set, else offline). */
  /** The payment provider; null for none. Default: from `billing` and the environment (see providerFromEnv). */
  payments?: PaymentProvider | null;
  /** `--billing`: the provider asked for by name (offline grants plans without payment, so it is the default only on loopback). */
  billing?: 'stripe' | 'offline';
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
  conversations: ConversationService;
  /** The control plane's live parts: its config streams and the signing keys (tests and benchmarks). */
  controlPlane: Pick<ControlPlane, 'streams' | 'refreshKeys'>;
  /** Every route the server answers (pattern, methods, and the scope each declared). */
  routes(): ReturnType<HttpServer['routes']>;
  close(): Promise<void>;
}

/**
 * The embedded server: every service on one HttpServer and one database (a SQLite file, or
 * PostgreSQL shared by any number of replicas). The services never import one another; this
 * is where they meet.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<Embedded> {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const host = options.host ?? '127.0.0.1';
  refusePlainHttp(options, host);
  const role = options.role ?? 'all';
  const location = locationOf(options);
  const metrics = serveMetrics();
  // Before the database is opened: a certificate that cannot be used stops the start with nothing to close.
  // Every route with a body checks its credential before reading it (see Authenticator.beforeBody);
  // the authenticator is made once the database is open.
  let beforeBody: CredentialCheck = () => {
    throw new HttpError('unavailable', 'The server is starting.');
  };
  const limits = limitsWith(options.limits);
  const server = new HttpServer({
    logger,
    observe: combineObservers([metrics.observe, options.accessLog]),
    credentials: (req) => beforeBody(req),
    connections: options.connections ?? { perAddress: limits.connectionsPerAddress, total: limits.connectionsTotal },
    ...(options.tls ? { tls: options.tls } : {}),
  });
  const backend = await openBackend(location, { now, logger });
  // A worker answers /health alone: the services' routes go on a server that never listens,
  // so every service is built the same way whatever the role.
  const routes = role === 'worker' ? new HttpServer({ logger, credentials: (req) => beforeBody(req) }) : server;
  const background = role !== 'api';

  // One limiter for every route class: sessions, API keys, server keys, widget keys, logins.
  const auth = new Authenticator(backend.stores.identity, { adminToken: options.adminToken, now, limiter: backend.limiter, limits });
  beforeBody = (req) => auth.beforeBody(req);
  const step: Step = { options, logger, now, host, routes, backend, auth, background };
  const { controlPlane, webhooks } = mountAccountServices(step);
  const conversations = mountConversations(step, webhooks);
  const voiceOver = createVoiceOver(logger);
  const video = await mountVideoService(step, location, voiceOver);
  mountOperatorRoutes(server, role, { auth, metrics, webhooks, video, logger });

  let port: number;
  try {
    port = await server.listen(host, options.port ?? 8080);
  } catch (err) {
    await video.close();
    await voiceOver?.close();
    await backend.close();
    throw err;
  }
  const renderPoll = background ? await startBackground(backend.cluster, webhooks, conversations, video) : null;
  const scheme = options.tls ? 'https' : 'http';
  const { database } = backend;
  return {
    port,
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    database,
    get db(): Db {
      if (database.kind !== 'sqlite') throw new Error('the embedded server runs on PostgreSQL, not SQLite');
      return database.db;
    },
    webhooks,
    conversations,
    controlPlane,
    routes: () => server.routes(),
    async close() {
      if (renderPoll) clearInterval(renderPoll);
      // Live streams first (chat conversations, config streams): they are not requests in flight,
      // the server's close would wait out its grace for them; widgets reconnect, sidecars fall back to polling.
      conversations.stop();
      controlPlane.close();
      await server.close();
      await video.close();
      await voiceOver?.close();
      if (background) await webhooks.stop();
      await backend.close();
    },
  };
}

/** What every step of the start shares once the database is open. */
interface Step {
  options: EmbeddedOptions;
  logger: Logger;
  now: () => number;
  host: string;
  /** Where the services' routes go (a server that never listens on a worker). */
  routes: HttpServer;
  backend: Backend;
  auth: Authenticator;
  background: boolean;
}

function refusePlainHttp(options: EmbeddedOptions, host: string): void {
  if (!options.tls && !options.insecureHttp && !isLoopbackHost(host)) {
    throw new Error(
      `refusing plain HTTP on ${host}, which is not a loopback address: the control plane is HTTPS only. Give --tls-cert and --tls-key, or --insecure-http when a TLS-terminating proxy is in front`,
    );
  }
}

/** The control plane (with billing), identity and the webhook emitter: each needs something of another, given here as a function. */
function mountAccountServices({ options, logger, now, host, routes, backend, auth, background }: Step): { controlPlane: ControlPlane; webhooks: Webhooks } {
  const { stores, cluster } = backend;
  const identity = stores.identity;
  const controlPlane = mountControlPlane(routes, {
    store: stores.controlPlane,
    auth,
    identity,
    now,
    payments: options.payments !== undefined ? options.payments : providerFromEnv(process.env, options.billing, isLoopbackHost(host)),
    publicUrl: options.publicUrl ?? process.env.SERVICE_PUBLIC_URL,
    stripeWebhookSecret: options.stripeWebhookSecret ?? process.env.STRIPE_WEBHOOK_SECRET,
    countWidgets: (tenantId) => webhooks.service.store.countWidgets(tenantId),
    tls: Boolean(options.tls),
    logger,
    ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}),
    ...(cluster ? { cluster } : {}),
  });
  mountIdentityRoutes(routes, {
    store: identity,
    auth,
    now,
    insights: controlPlane.insights,
    onTenantChange: async (id) => {
      await controlPlane.tenantChanged(id);
      await webhooks.service.tenantChanged(id);
    },
  });
  const webhooks = createWebhooks({
    store: stores.webhooks,
    ...(cluster && !background ? { onEnqueued: announcer(cluster.broadcast, WEBHOOKS_DUE_CHANNEL) } : {}),
    ...(cluster ? { broadcast: cluster.broadcast } : {}),
    server: routes,
    auth,
    getTenant: (id) => identity.getTenant(id),
    plans: controlPlane.plans,
    allowPrivate: options.allowPrivateWebhooks ?? false,
    now,
    logger,
    ...options.webhooks,
    dispatcher: {
      ...options.webhooks?.dispatcher,
      ...(options.jobLeaseMs ? { leaseMs: options.jobLeaseMs } : {}),
      ...(options.webhookConcurrency ? { concurrency: options.webhookConcurrency.total, perEndpoint: options.webhookConcurrency.perEndpoint } : {}),
    },
  });
  return { controlPlane, webhooks };
}

function mountConversations({ options, logger, now, routes, backend, auth }: Step, webhooks: Webhooks): ConversationService {
  const { stores, cluster } = backend;
  return createConversations({
    store: stores.conversations,
    webhooks: webhooks.service,
    server: routes,
    auth,
    getTenant: (id) => stores.identity.getTenant(id),
    // The conversation agent's own outbound calls keep the all-or-nothing flag: `up`'s loopback mode is about webhook receivers.
    allowPrivate: options.allowPrivateWebhooks === true,
    scheme: options.tls ? 'https' : 'http',
    publicUrl: options.publicUrl ?? process.env.SERVICE_PUBLIC_URL,
    model: {
      baseUrl: process.env.SERVICE_LLM_BASE_URL || undefined,
      model: process.env.SERVICE_LLM_MODEL || undefined,
      apiKey: process.env.SERVICE_LLM_KEY || undefined,
    },
    ...(options.webhooks?.resolve ? { resolve: options.webhooks.resolve } : {}),
    ...(cluster ? { relay: cluster.broadcast } : {}),
    ...(options.connections ? { connectionsTotal: options.connections.total } : {}),
    now,
    logger,
    ...options.conversations,
  });
}

async function mountVideoService(
  { options, logger, now, routes, backend, auth, background }: Step,
  location: DatabaseLocation,
  voiceOver: ReturnType<typeof createVoiceOver>,
): Promise<VideoService> {
  const { stores, cluster } = backend;
  const announceQueued = cluster ? () => void cluster.broadcast.send(VIDEO_QUEUED_CHANNEL, '').catch(() => {}) : undefined;
  try {
    return await mountVideo(routes, {
      speak: voiceOver?.speak ?? null,
      store: stores.video,
      background,
      ...(announceQueued ? { onQueued: announceQueued } : {}),
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
      getTenant: (id) => stores.identity.getTenant(id),
      now,
      logger,
      ...(options.jobLeaseMs ? { leaseMs: options.jobLeaseMs } : {}),
      ...options.video,
    });
  } catch (err) {
    // A storage that does not answer (a wrong bucket or credential) stops the start cleanly.
    await voiceOver?.close();
    await backend.close();
    throw err;
  }
}

/** /health, /metrics, and (except on a worker) the widget script and the dashboard. */
function mountOperatorRoutes(
  server: HttpServer,
  role: Role,
  {
    auth,
    metrics,
    webhooks,
    video,
    logger,
  }: { auth: Authenticator; metrics: ReturnType<typeof serveMetrics>; webhooks: Webhooks; video: VideoService; logger: Logger },
): void {
  const anyone = server.scoped('public');
  const admin = server.scoped('admin');
  // For load balancers and supervisors: answers while the process serves, touches no storage.
  anyone.get('/health', () => text(200, 'ok'), { headers: [] });
  metrics.attach({
    webhookAttempts: () => webhooks.dispatcher.attempts,
    webhooksInFlight: () => webhooks.dispatcher.stats.inFlight,
    renders: () => video.renders(),
  });
  // Prometheus text format, for the admin token only: route names and volumes are operator business.
  admin.get(
    '/metrics',
    metricsHandler(metrics.registry, (req) => auth.admin(req)),
  );
  // Last, so that no API route is shadowed by the page's static routes.
  if (role !== 'worker') {
    mountWidgetScript(server, { logger });
    mountDashboard(server, { logger });
  }
}

/** The background role's loops: the webhook outbox, conversation sweeps, and looking for queued videos. */
async function startBackground(
  cluster: Backend['cluster'],
  webhooks: Webhooks,
  conversations: ConversationService,
  video: VideoService,
): Promise<NodeJS.Timeout> {
  await webhooks.start();
  conversations.start();
  // Videos queued by other processes on the database: told at once on PostgreSQL, and looked
  // for now and then in any case (an API-only process on the same SQLite file, a missed message).
  cluster?.broadcast.listen(
    VIDEO_QUEUED_CHANNEL,
    () => video.kick(),
    () => video.kick(),
  );
  cluster?.broadcast.listen(
    WEBHOOKS_DUE_CHANNEL,
    () => webhooks.dispatcher.notify(),
    () => webhooks.dispatcher.notify(),
  );
  const renderPoll = setInterval(() => video.kick(), WORKER_RENDER_POLL_MS);
  renderPoll.unref();
  return renderPoll;
}

function locationOf(options: EmbeddedOptions): DatabaseLocation {
  if (options.database) return options.database;
  if (options.db !== undefined) return { kind: 'sqlite', file: options.db };
  throw new Error('startEmbedded needs a database (database or db)');
}
