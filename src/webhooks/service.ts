import { HttpError, quoteId, validationFailed } from '../http/errors.js';
import type { Request } from '../http/server.js';
import type { CredentialProbe } from '../identity/auth.js';
import { hashToken, TOKEN_PREFIX } from '../identity/tokens.js';
import type { TenantId, TenantRecord } from '../identity/types.js';
import type { Dispatcher } from './dispatcher.js';
import { deliveryBody, onceKeys, validateEvent } from './events.js';
import type { WebhookStore } from './store.js';
import type { EventId, WidgetId } from './types.js';
import type { WidgetRef } from './key-cache.js';
import type { Broadcast } from '../store/broadcast.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { WidgetKeyCache } from './key-cache.js';

export interface WebhookServiceOptions {
  store: WebhookStore;
  dispatcher: Dispatcher;
  /** The identity store's tenant lookup: widget keys speak for a tenant, whose suspension they must honour. */
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  /** Told after an event with deliveries is committed, so that workers in other processes look at once. */
  onEnqueued?: () => void;
  /**
   * Replicas on a shared database: widget keys and their tenants are then kept in memory
   * (WidgetKeyCache), and a revocation is announced on this broadcast. Without it every event
   * post reads its key and tenant (SQLite: in-process reads, and another process on the same
   * file announces nothing).
   */
  broadcast?: Broadcast;
  now?: () => number;
  logger?: Logger;
}

/** What a widget key speaks for: its widget (the parts that never change: a widget may be renamed) and the widget's tenant. */
export type WidgetKeyOwner = { widget: WidgetRef; tenant: TenantRecord };

export type Emitted = { id: EventId; deliveries: number; duplicate?: true };

/** The in-process face of the webhook emitter: emit(), and the widget-key credential. */
export class WebhookService {
  readonly store: WebhookStore;
  readonly dispatcher: Dispatcher;
  private readonly getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  private readonly onEnqueued: () => void;

  constructor(options: WebhookServiceOptions) {
    this.store = options.store;
    this.dispatcher = options.dispatcher;
    this.getTenant = options.getTenant;
    this.onEnqueued = options.onEnqueued ?? (() => {});
    this.cache = options.broadcast ? new WidgetKeyCache(options.broadcast, options.now ?? Date.now, options.logger ?? silentLogger) : null;
  }

  private readonly cache: WidgetKeyCache | null;

  /** A tenant changed (its status): on replicas, forgotten here and announced to the others (see WidgetKeyCache). */
  async tenantChanged(id: TenantId): Promise<void> {
    await this.cache?.tenantChanged(id);
  }

  /** Revokes a live key of the widget; on replicas the others stop accepting it as soon as they are told (see WidgetKeyCache). */
  async revokeWidgetKey(widgetId: WidgetId, keyId: string): Promise<boolean> {
    const revoked = await this.store.revokeWidgetKey(widgetId, keyId);
    if (revoked) await this.cache?.revoked(widgetId);
    return revoked;
  }

  /**
   * Validates an event and commits it with one delivery per enabled, subscribed endpoint before
   * returning; a 422 HttpError (details name the fields) when the data is refused.
   */
  async emit(widgetId: string, event: unknown, data: unknown): Promise<Emitted> {
    const widget = await this.store.findWidget(widgetId);
    if (!widget) throw new HttpError('not_found', `No widget with id ${quoteId(widgetId)}.`);
    return this.emitFor(widget, event, data);
  }

  /**
   * conversation.started is fired once per conversation: a repeat for the same conversation_id
   * of the widget is answered `duplicate: true` (with the first event's id) and delivers nothing.
   * conversation.ended likewise, and only for a conversation whose start was recorded (else 409).
   */
  async emitFor(widget: WidgetRef, event: unknown, data: unknown): Promise<Emitted> {
    const checked = validateEvent(event, data);
    if (!checked.ok) throw validationFailed(checked.details);
    const keys = onceKeys(checked.event, String(checked.data.conversation_id));
    const { eventId, deliveries, duplicate, unmet } = await this.store.enqueue(
      widget.id,
      checked.event,
      deliveryBody(checked.event, widget.id, checked.data),
      keys.once,
      keys.after,
      typeof checked.data.conversation_id === 'string' ? checked.data.conversation_id : null,
    );
    if (unmet) throw new HttpError('conflict', `Conversation ${String(checked.data.conversation_id)} has not started: post conversation.started for it first.`);
    if (deliveries.length > 0) this.notify();
    return duplicate ? { id: eventId, deliveries: 0, duplicate: true } : { id: eventId, deliveries: deliveries.length };
  }

  /** Wakes the dispatcher (and the workers of other processes) after events with deliveries were committed. */
  notify(): void {
    this.dispatcher.notify();
    this.onEnqueued();
  }

  /**
   * Resolves a `bwk_` token to its widget; 401 when unknown or revoked, 403 when the tenant is
   * suspended. Given the request, it reuses what the credential probe read for the same
   * request and token (an event post resolved the key and its tenant twice before).
   */
  async widgetKey(token: string, req?: Request): Promise<WidgetKeyOwner> {
    const found = await this.owner(token, req);
    if (!found) throw new HttpError('unauthorized', 'The credential is invalid, expired or revoked.');
    if (found.tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this credential is suspended.');
    return found;
  }

  /** Teaches the authenticator that a widget key is a valid credential (403 on other routes, not 401). */
  readonly probe: CredentialProbe = async (token, req) => {
    if (!token.startsWith(TOKEN_PREFIX.widgetKey)) return null;
    return this.owner(token, req);
  };

  /** One look-up of a widget key and its tenant per request: a WeakMap entry lives as long as its request. */
  private readonly owners = new WeakMap<Request, { token: string; owner: Promise<WidgetKeyOwner | null> }>();

  private owner(token: string, req: Request | undefined): Promise<WidgetKeyOwner | null> {
    const memo = req === undefined ? undefined : this.owners.get(req);
    if (memo !== undefined && memo.token === token) return memo.owner;
    const owner = this.lookupOwner(token);
    if (req !== undefined) this.owners.set(req, { token, owner });
    return owner;
  }

  private async lookupOwner(token: string): Promise<WidgetKeyOwner | null> {
    const hash = hashToken(token);
    const cache = this.cache;
    const widget = cache ? await cache.widget(hash, () => this.store.findWidgetKey(hash)) : await this.store.findWidgetKey(hash);
    if (!widget) return null;
    const tenant = cache ? await cache.tenant(widget.tenantId, () => this.getTenant(widget.tenantId)) : await this.getTenant(widget.tenantId);
    return tenant ? { widget, tenant } : null;
  }
}
