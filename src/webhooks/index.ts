import type { TenantPlans } from '../identity/plan-limits.js';
import type { HttpServer } from '../http/server.js';
import type { Authenticator } from '../identity/auth.js';
import type { TenantId, TenantRecord } from '../identity/types.js';
import type { Logger } from '../log.js';
import { Dispatcher, type DispatcherOptions } from './dispatcher.js';
import { mountWebhookRoutes } from './routes.js';
import { createSender, type Send } from '../net/sender.js';
import { WebhookService } from './service.js';
import { SigningKeys } from './keys.js';
import type { PrivateUrls, Resolve } from '../net/ssrf.js';
import type { WebhookStore } from './store.js';
import type { Broadcast } from '../store/broadcast.js';

export interface WebhooksOptions {
  /** The outbox, endpoints and widgets, on the services' database. */
  store: WebhookStore;
  server: HttpServer;
  auth: Authenticator;
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  /** Plan limits (widgets) and trial ends, from the billing catalogue. */
  plans: TenantPlans;
  /** `--allow-private-webhooks`: private addresses and plain http:// admitted (development and tests only). */
  allowPrivate: PrivateUrls;
  now?: () => number;
  logger?: Logger;
  resolve?: Resolve;
  /** Replaces the HTTP transport (benchmarks of the outbox alone). */
  send?: Send;
  /** How long finished deliveries, their attempts and events are kept (default 30 days). */
  retentionMs?: number;
  /** Told after an event with deliveries is committed (a process that delivers nothing itself announces it to the workers). */
  onEnqueued?: () => void;
  /** Replicas on PostgreSQL: widget keys are then kept per replica and their revocations told to the others on it. */
  broadcast?: Broadcast;
  /** Dispatcher tuning: concurrency, perEndpoint, timeoutMs, pollMs, random, retryDelays, disableAfterMs, orderHoldMs. */
  dispatcher?: Partial<Omit<DispatcherOptions, 'store' | 'send' | 'allowPrivate' | 'now' | 'logger' | 'resolve' | 'keys'>>;
}

export interface Webhooks {
  service: WebhookService;
  dispatcher: Dispatcher;
  /** The installation's v1a signing keys (rotate() for an operator). */
  keys: SigningKeys;
  /** Requeues what a crash left in flight and starts delivering. */
  start(): Promise<void>;
  /** Stops delivering, waits for sends in flight, closes idle connections. */
  stop(): Promise<void>;
  /** Applies the retention now (also run hourly while started). */
  prune(): Promise<{ deliveries: number; events: number }>;
}

export const RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/** Builds the webhook emitter on the shared store and server: store, dispatcher, routes and the widget-key probe. */
export function createWebhooks(options: WebhooksOptions): Webhooks {
  const now = options.now ?? Date.now;
  const store = options.store;
  const sender = options.send ? null : createSender();
  const keys = new SigningKeys(store, now);
  const dispatcher = new Dispatcher({
    ...options.dispatcher,
    store,
    keys,
    send: options.send ?? sender!.send,
    allowPrivate: options.allowPrivate,
    now,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const service = new WebhookService({
    store,
    dispatcher,
    getTenant: options.getTenant,
    now,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onEnqueued ? { onEnqueued: options.onEnqueued } : {}),
    ...(options.broadcast ? { broadcast: options.broadcast } : {}),
  });
  options.auth.addProbe(service.probe);
  mountWebhookRoutes(options.server, {
    service,
    auth: options.auth,
    plans: options.plans,
    keys,
    allowPrivate: options.allowPrivate,
    now,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const retention = options.retentionMs ?? RETENTION_MS;
  const prune = () => store.prune(now() - retention);
  let pruner: NodeJS.Timeout | null = null;
  return {
    service,
    dispatcher,
    keys,
    prune,
    async start() {
      await dispatcher.start();
      pruner = setInterval(() => {
        prune().catch((err) => options.logger?.error('webhooks: pruning failed', { error: String(err) }));
      }, PRUNE_EVERY_MS);
      pruner.unref();
    },
    async stop() {
      if (pruner) clearInterval(pruner);
      pruner = null;
      await dispatcher.stop();
      sender?.close();
    },
  };
}
