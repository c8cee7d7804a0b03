import type { TenantId } from '../identity/types.js';
import type { Lease } from '../store/lease.js';
import type { PageRead } from '../store/page.js';
import type {
  AttemptRecord,
  DeliveryId,
  DeliveryRecord,
  DeliveryStatus,
  DueDelivery,
  EndpointId,
  EndpointRecord,
  EventId,
  EventType,
  SignatureScheme,
  SigningKeyRecord,
  WidgetId,
  WidgetKeyRecord,
  WidgetRecord,
} from './types.js';

/** How one attempt ended, as the dispatcher decided it. */
export interface AttemptResult {
  deliveryId: DeliveryId;
  endpointId: EndpointId;
  attempt: Omit<AttemptRecord, 'deliveryId'>;
  /** The delivery's next state: done, retry at a time, or given up. */
  next: { status: 'succeeded' } | { status: 'pending'; at: number } | { status: 'failed' };
  /** What the attempt says about the endpoint: healthy, failing, or gone for good (410). */
  endpoint: 'success' | 'failure' | 'gone';
}

/**
 * How many more deliveries a claim may hand out per endpoint: `each` at once, less the
 * `busy` ones the claimer already has in flight (an endpoint missing from `busy` has none).
 */
export interface EndpointRoom {
  each: number;
  busy: ReadonlyMap<string, number>;
}

/** What `room` leaves for one endpoint (may be zero or less: nothing more for it). */
export function roomFor(room: EndpointRoom, endpointId: string): number {
  return room.each - (room.busy.get(endpointId) ?? 0);
}

export interface EndpointInput {
  url: string;
  secret: string;
  events: EventType[];
  enabled: boolean;
  /** Default 'hmac'. */
  signatureScheme?: SignatureScheme;
  /** Deliveries per second at most; default null (no limit). */
  rateLimit?: number | null;
}

export interface EndpointPatch {
  url?: string;
  events?: EventType[];
  enabled?: boolean;
  signatureScheme?: SignatureScheme;
  rateLimit?: number | null;
}

export interface ClaimOptions {
  /** Also look past endpoints already at their limit (walks their backlog: the caller decides how often). */
  reachPast?: boolean;
  /**
   * Per-conversation order: a delivery whose conversation has an earlier unfinished delivery to
   * the same endpoint is held until it has been due this long (ORDER_HOLD_MS); 0 turns order off.
   */
  orderHoldMs?: number;
}

/**
 * What a claim leased, oldest first. `throttledUntil`: the earliest time a rate-limited endpoint
 * with due work may start its next attempt, when the claim left work behind for that reason.
 */
export type Claimed = DueDelivery[] & { throttledUntil?: number };

/** A breaker-disabled endpoint, for the tenant's banner. */
export interface DisabledEndpoint {
  endpointId: EndpointId;
  widgetId: WidgetId;
  url: string;
  reason: 'failing' | 'gone';
  disabledAt: number;
}

export interface Page<T> {
  data: T[];
  nextCursor: number | null;
}

/**
 * Widgets, widget keys, endpoints and the durable outbox (events, deliveries, attempts).
 * Methods return promises so a networked store can replace SQLite; writes that belong together
 * (an event and its deliveries; an attempt, its delivery and its endpoint) are one transaction.
 */
/** A new widget and its first key. */
export interface CreatedWidget {
  widget: WidgetRecord;
  key: WidgetKeyRecord;
}

export interface WebhookStore {
  createWidget(tenantId: TenantId, name: string, key: { hash: string; preview: string }): Promise<CreatedWidget>;
  /** As above unless the tenant already has `maxWidgets` widgets ('limit'); the count and the insert are one transaction. */
  createWidget(
    tenantId: TenantId,
    name: string,
    key: { hash: string; preview: string },
    maxWidgets: number,
  ): Promise<{ widget: WidgetRecord; key: WidgetKeyRecord } | 'limit'>;
  /** The tenant's widgets in creation order; with `page`, at most `page.limit` past the position `page.from` and where the next page starts. */
  listWidgets(tenantId: TenantId, page?: PageRead): Promise<Page<WidgetRecord>>;
  /** How many widgets the tenant has (a count, not a read of them all). */
  countWidgets(tenantId: TenantId): Promise<number>;
  getWidget(tenantId: TenantId, id: string): Promise<WidgetRecord | null>;
  /** Any tenant's widget: for the in-process emit() API and widget keys. */
  findWidget(id: string): Promise<WidgetRecord | null>;
  createWidgetKey(widgetId: WidgetId, key: { hash: string; preview: string }): Promise<WidgetKeyRecord>;
  /** The same, refused ('limit') when the widget already has `maxLive` live keys, counted and created in one step. */
  createWidgetKey(widgetId: WidgetId, key: { hash: string; preview: string }, maxLive: number): Promise<WidgetKeyRecord | 'limit'>;
  /**
   * The widget's keys, revoked ones included, oldest first; paged like listWidgets. A key's
   * position is its place in that order: keys are only added at its end and never removed one
   * by one (a revoked key stays), so a place names the same key on every read.
   */
  listWidgetKeys(widgetId: WidgetId, page?: PageRead): Promise<Page<WidgetKeyRecord>>;
  revokeWidgetKey(widgetId: WidgetId, keyId: string): Promise<boolean>;
  /** The widget of the live (unrevoked) key with this hash, read with the key: its tenant is widget.tenantId. */
  findWidgetKey(hash: string): Promise<WidgetRecord | null>;

  createEndpoint(widgetId: WidgetId, input: EndpointInput): Promise<EndpointRecord>;
  /** Creates the endpoint unless the widget already has `maxPerWidget` ('limit'); the count and the insert are one transaction. */
  createEndpoint(widgetId: WidgetId, input: EndpointInput, maxPerWidget: number): Promise<EndpointRecord | 'limit'>;
  /** The widget's endpoints in creation order; paged like listWidgets. */
  listEndpoints(widgetId: WidgetId, page?: PageRead): Promise<Page<EndpointRecord>>;
  getEndpoint(widgetId: WidgetId, id: string): Promise<EndpointRecord | null>;
  /** Disabling fails the endpoint's pending deliveries (recoverable later); enabling clears the failure streak. */
  updateEndpoint(widgetId: WidgetId, id: EndpointId, patch: EndpointPatch): Promise<EndpointRecord | null>;
  deleteEndpoint(widgetId: WidgetId, id: string): Promise<boolean>;
  rotateSecret(widgetId: WidgetId, id: EndpointId, secret: string, previousExpiresAt: number): Promise<EndpointRecord | null>;

  /**
   * Stores the event and one pending delivery per enabled endpoint subscribed to it, in one
   * transaction. With `onceKey`, an event already stored under that key for the widget stores
   * nothing and answers the first event's id with `duplicate: true`. With `after`, an event
   * stored only once some event was stored under that once-key (`conversation.ended` after its
   * `conversation.started`); before that, nothing is stored and the answer says `unmet: true`.
   * `orderKey` groups deliveries that must arrive in order (per endpoint); left out, it is the
   * body's `data.conversation_id` (null: no order).
   */
  enqueue(widgetId: WidgetId, event: EventType, body: string, onceKey?: string, after?: string, orderKey?: string | null): Promise<Enqueued>;
  /**
   * Leases up to `limit` deliveries to `lease.owner` for `lease.ms` and returns them, oldest
   * first, at most `roomFor(room, endpoint)` per endpoint: pending ones that are due, and in-flight
   * ones whose lease has expired (their holder died). A leased delivery is claimed by no one
   * else until its lease expires; replicas sharing a store never wait on one another's claims.
   * With `reachPast`, endpoints already at their limit are skipped so deliveries queued behind
   * one endpoint's backlog are found too; that walks the backlog, so the caller decides how often.
   * A rate-limited endpoint gets at most one delivery per claim, and only once its previous
   * attempt started rateSpacingMs() ago (the spacing is kept in the store, shared by replicas).
   */
  claimDue(lease: Lease, limit: number, room: EndpointRoom, options?: ClaimOptions): Promise<Claimed>;
  /**
   * Applies a batch of attempt results in one transaction and clears their leases. A result
   * whose delivery `owner` no longer holds (the lease expired and another claimed it, or it was
   * released) is dropped and counted in `lost`: the current holder's attempt speaks for it.
   * An endpoint the breaker disables (410, or failing for `disableAfterMs`) gets, in the same
   * transaction, an `endpoint.disabled` event queued to its tenant's operational endpoint, if set.
   */
  recordResults(owner: string, results: AttemptResult[], disableAfterMs: number): Promise<{ disabled: EndpointId[]; lost: number }>;
  /**
   * Every delivery `owner` still holds (of `ids`, when given) becomes due now, unattempted: a
   * stopping dispatcher hands back the sends it abandoned, and a dispatcher too late for a
   * rate-limited endpoint's slot hands back that delivery unsent.
   */
  releaseLeases(owner: string, ids?: readonly DeliveryId[]): Promise<number>;
  /**
   * At start, before the first claim. A store that one process serves (SQLite) makes every
   * delivery a previous run left in flight due now. A store shared by replicas answers 0: it
   * cannot tell a dead replica's lease from a live one's, so those deliveries wait for expiry.
   */
  requeueInflight(): Promise<number>;
  /** The earliest next_attempt_at of a pending delivery, or null. */
  nextDueAt(): Promise<number | null>;

  listDeliveries(endpointId: EndpointId, options: { limit: number; before: number | null; status?: DeliveryStatus }): Promise<Page<DeliveryRecord>>;
  /** One delivery with the exact body it sends (`payload`) and every attempt, the receiver's answers included. */
  getDelivery(endpointId: EndpointId, id: string): Promise<(DeliveryRecord & { payload: string; attemptLog: AttemptRecord[] }) | null>;
  retryDelivery(endpointId: EndpointId, id: DeliveryId): Promise<DeliveryRecord | 'inflight' | null>;
  /** How many deliveries recoverFailed(endpointId, since) would queue now. */
  countFailed(endpointId: EndpointId, since: number): Promise<number>;
  recoverFailed(endpointId: EndpointId, since: number): Promise<number>;

  /** The installation's v1a signing keys still in use (active first, then those retiring), oldest retirement last. */
  signingKeys(): Promise<SigningKeyRecord[]>;
  /** Stores `key` as the active signing key unless one is active already (first start); answers the keys in use. */
  ensureSigningKey(key: { seed: string; publicKey: string }): Promise<SigningKeyRecord[]>;
  /** Makes `key` the active signing key; the one it replaces keeps signing and being served until `retiresAt`. */
  rotateSigningKey(key: { seed: string; publicKey: string }, retiresAt: number): Promise<SigningKeyRecord[]>;

  /** The endpoint (of any of the tenant's widgets) that receives the tenant's operational events, or null. */
  getOperationalEndpoint(tenantId: TenantId): Promise<EndpointRecord | null>;
  /** Sets (an endpoint of one of the tenant's widgets) or clears (null) it; false when the endpoint is not the tenant's. */
  setOperationalEndpoint(tenantId: TenantId, endpointId: string | null): Promise<boolean>;
  /** The tenant's endpoints that the breaker disabled (a 410, or failing too long) and that are still disabled, newest first. */
  disabledEndpoints(tenantId: TenantId): Promise<DisabledEndpoint[]>;
  /** Deletes finished (succeeded or failed) deliveries last touched before `before`, their attempts, and events left without deliveries. */
  prune(before: number): Promise<{ deliveries: number; events: number }>;
}

export type Enqueued = { eventId: EventId; deliveries: DeliveryId[]; duplicate: boolean; unmet?: true };
