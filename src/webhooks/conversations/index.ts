import type { HttpServer } from '../../http/server.js';
import type { Authenticator } from '../../identity/auth.js';
import type { TenantId, TenantRecord } from '../../identity/types.js';
import type { Logger } from '../../log.js';
import type { Resolve } from '../../net/ssrf.js';
import type { Broadcast } from '../../store/broadcast.js';
import type { WebhookService } from '../service.js';
import { Agents, type ModelEnv } from './agent.js';
import { mountConversationRoutes } from './routes.js';
import { ConversationService } from './service.js';
import { VisitorStreamCaps } from './stream-caps.js';
import type { ConversationStore } from './store.js';

export interface ConversationsOptions {
  store: ConversationStore;
  webhooks: WebhookService;
  server: HttpServer;
  auth: Authenticator;
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  allowPrivate: boolean;
  scheme: 'http' | 'https';
  /** SERVICE_PUBLIC_URL: the public origin in front of a TLS-terminating proxy, the server's own pages' origin too. */
  publicUrl?: string | undefined;
  /** The server's model (SERVICE_LLM_BASE_URL, SERVICE_LLM_MODEL, SERVICE_LLM_KEY); a widget's own settings take precedence. */
  model?: ModelEnv;
  idleMs?: number;
  sweepMs?: number;
  retentionDays?: number;
  /** Model time limits (tests): before the first token, and for the whole reply. */
  firstTokenTimeoutMs?: number;
  replyTimeoutMs?: number;
  resolve?: Resolve;
  /** Replicas on PostgreSQL: the broadcast that passes live-stream events between processes. */
  relay?: Broadcast;
  /** The server's cap on connections holding a request open: visitor streams may take at most half of it. */
  connectionsTotal?: number;
  now?: () => number;
  logger?: Logger;
}

/** The chat-widget service on the webhook emitter: conversations, the agent, the visitor API and the owner's routes. */
export function createConversations(options: ConversationsOptions): ConversationService {
  const agents = new Agents({
    env: options.model ?? {},
    allowPrivate: options.allowPrivate,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.firstTokenTimeoutMs ? { firstTokenTimeoutMs: options.firstTokenTimeoutMs } : {}),
    ...(options.replyTimeoutMs ? { replyTimeoutMs: options.replyTimeoutMs } : {}),
  });
  const limits = options.auth.limits;
  const streamCaps = new VisitorStreamCaps({
    perAddress: limits.widgetStreamsPerAddress,
    perTenant: limits.widgetStreamsPerTenant,
    // Half the connections at most: other requests (and the sidecar's ticks) keep room whatever the visitors hold.
    total: Math.max(1, Math.min(limits.widgetStreamsTotal, Math.floor((options.connectionsTotal ?? limits.connectionsTotal) / 2))),
  });
  const service = new ConversationService({
    store: options.store,
    streamCaps,
    webhooks: options.webhooks,
    agents,
    getTenant: options.getTenant,
    ...(options.now ? { now: options.now } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    ...(options.sweepMs !== undefined ? { sweepMs: options.sweepMs } : {}),
    ...(options.retentionDays !== undefined ? { retentionDays: options.retentionDays } : {}),
    ...(options.relay ? { relay: options.relay } : {}),
  });
  mountConversationRoutes(options.server, {
    service,
    auth: options.auth,
    allowPrivate: options.allowPrivate,
    scheme: options.scheme,
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return service;
}
