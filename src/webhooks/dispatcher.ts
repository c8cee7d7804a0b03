import { createSecretKey, randomInt, type KeyObject } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { isIP } from 'node:net';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { serviceSignature, standardKey, standardSignature } from '../signing/webhook.js';
import {
  DELIVERY_CONCURRENCY,
  DELIVERY_CONCURRENCY_PER_ENDPOINT,
  DELIVERY_LEASE_MS,
  DELIVERY_TIMEOUT_MS,
  DISABLE_AFTER_MS,
  ORDER_HOLD_MS,
  parseRetryAfter,
  RATE_GUARD_MS,
  retryDelay,
  RETRY_DELAYS_MS,
  seededRandom,
} from './schedule.js';
import type { SigningKeys } from './keys.js';
import type { Send, SendOutcome } from '../net/sender.js';
import { PACKAGE_VERSION } from '../net/sender.js';
import { guardUrl, type GuardResult, type PrivateUrls, type Resolve } from '../net/ssrf.js';

export const USER_AGENT = `brainstem-webhooks/${PACKAGE_VERSION}`;
/** The longest a throttled endpoint's wake-up timer waits (the poll finds it otherwise). */
const RATE_WAKE_MAX_MS = 1000;
/** What follows every successful attempt (one object, read only by the store). */
const SUCCEEDED = { status: 'succeeded' } as const;
/** Decoded Standard Webhooks keys kept by secret; past this many the cache starts again (it refills from the secrets in use). */
const KEY_CACHE_MAX = 1024;
import type { AttemptResult, WebhookStore } from './store.js';
import { leaseOwner, type Lease } from '../store/lease.js';
import type { DueDelivery } from './types.js';

export interface DispatcherOptions {
  store: WebhookStore;
  send: Send;
  allowPrivate: PrivateUrls;
  resolve?: Resolve;
  now?: () => number;
  /** Jitter source; seeded from crypto by default, fixed in tests. */
  random?: () => number;
  logger?: Logger;
  /** A 2xx must arrive within this long (default DELIVERY_TIMEOUT_MS). */
  timeoutMs?: number;
  /** How long a claim holds a delivery (default DELIVERY_LEASE_MS); must exceed timeoutMs. */
  leaseMs?: number;
  /** Names this dispatcher's claims in the store; default host, pid and a random suffix. */
  owner?: string;
  /** Deliveries in flight at once, over all endpoints (default DELIVERY_CONCURRENCY). */
  concurrency?: number;
  /** Deliveries in flight at once to one endpoint (default DELIVERY_CONCURRENCY_PER_ENDPOINT), so one slow receiver cannot take every slot. */
  perEndpoint?: number;
  /** How often the background loop looks for retries that fell due (default 1 s of real time). */
  pollMs?: number;
  retryDelays?: readonly number[];
  disableAfterMs?: number;
  /** The installation's v1a keys; required to deliver to an endpoint whose scheme is v1a or both. */
  keys?: SigningKeys;
  /** How long a delivery waits behind an unfinished earlier one of its conversation (default ORDER_HOLD_MS); 0 turns order off. */
  orderHoldMs?: number;
}

/**
 * Moves deliveries from the outbox to receivers, at least once. Claims are leases taken
 * before a send (in the database on PostgreSQL, in the process's memory on SQLite, which one
 * process serves) and results are written after it in batched transactions. Replicas sharing a store
 * each run one dispatcher and never claim the same delivery while its lease runs; what a
 * crashed process held is claimed again when its lease lapses (or, on a store only one
 * process serves, at the next start). Tests drive it with runDue() and an injected clock; in a
 * server start() runs the same pump from a timer and from notify().
 */
export class Dispatcher {
  private readonly store: WebhookStore;
  private readonly send: Send;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly lease: Lease;
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly pollMs: number;
  private readonly retryDelays: readonly number[];
  private readonly disableAfterMs: number;
  private readonly keys: SigningKeys | null;
  private readonly orderHoldMs: number;
  private readonly guard: { allowPrivate: PrivateUrls; resolve?: Resolve };

  private inFlight = 0;
  /** Attempts since construction by what followed them (read by /metrics at scrape time). */
  readonly attempts = { succeeded: 0, retrying: 0, failed: 0 };
  private readonly inFlightByEndpoint = new Map<string, number>();
  /** Each send under way, by delivery id. */
  private readonly sends = new Map<string, Promise<void>>();
  /**
   * Deliveries this dispatcher is sending or has results for that are not yet recorded. A lease
   * that lapses meanwhile (a stalled process) may hand one back to this same dispatcher: it is
   * not sent again, the attempt under way speaks for it.
   */
  private readonly holding = new Set<string>();
  private results: AttemptResult[] = [];
  /** Failed attempts among the results not yet recorded: a claim waits for them (a 410 or a disable must be seen first). */
  private failuresUnrecorded = 0;
  private flushing: Promise<void> | null = null;
  private pumping: Promise<number> | null = null;
  private pumpAgain = false;
  private running = false;
  /**
   * Sends of one start()…stop() span share a generation; stop() aborts those it stopped waiting
   * for and moves to the next generation, so their late results are dropped (the store keeps
   * them in flight for the next start) and they no longer count against the limits.
   */
  private generation = Dispatcher.newGeneration();

  /** Every send of a generation listens on one signal, so the listener warning is off for it. */
  private static newGeneration(): { abort: AbortController } {
    const abort = new AbortController();
    setMaxListeners(0, abort.signal);
    return { abort };
  }
  private timer: NodeJS.Timeout | null = null;
  private wakeScheduled = false;
  /**
   * The HMAC keys of the secrets in use (X-Service-Signature's, its UTF-8 bytes; Standard
   * Webhooks', standardKey()), as KeyObjects: a secret is not decoded, nor copied into a new
   * HMAC key, for every delivery.
   */
  private readonly keyCache = new Map<string, { service: KeyObject; standard: KeyObject }>();
  /**
   * The guard's approval of URLs whose host is an IP address: for those it asks no DNS, so its
   * answer depends on the URL alone and is kept. A URL with a host name is checked (and resolved)
   * at every attempt, so a name that rebinds to a private address between attempts is refused.
   */
  private readonly literalGuards = new Map<string, GuardResult & { ok: true }>();
  /** Real time (performance.now) of the last claim that reached past saturated endpoints, and what it cost. */
  private lastReach = -Infinity;
  private reachCostMs = 0;
  private reachTimer: NodeJS.Timeout | null = null;
  /** Wakes the pump when a rate-limited endpoint may start its next attempt. */
  private throttleTimer: { at: number; timer: NodeJS.Timeout } | null = null;

  constructor(options: DispatcherOptions) {
    this.store = options.store;
    this.send = options.send;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? seededRandom(randomInt(2 ** 31));
    this.logger = options.logger ?? silentLogger;
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.lease = { owner: options.owner ?? leaseOwner(), ms: options.leaseMs ?? DELIVERY_LEASE_MS };
    this.concurrency = options.concurrency ?? DELIVERY_CONCURRENCY;
    this.perEndpoint = Math.min(options.perEndpoint ?? DELIVERY_CONCURRENCY_PER_ENDPOINT, this.concurrency);
    this.pollMs = options.pollMs ?? 1000;
    this.retryDelays = options.retryDelays ?? RETRY_DELAYS_MS;
    this.disableAfterMs = options.disableAfterMs ?? DISABLE_AFTER_MS;
    this.keys = options.keys ?? null;
    this.orderHoldMs = options.orderHoldMs ?? ORDER_HOLD_MS;
    if (!Number.isInteger(this.orderHoldMs) || this.orderHoldMs < 0)
      throw new Error(`Dispatcher option orderHoldMs must be an integer ≥ 0, got ${this.orderHoldMs}`);
    this.guard = { allowPrivate: options.allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) };
    for (const [name, value] of [
      ['timeoutMs', this.timeoutMs],
      ['concurrency', this.concurrency],
      ['perEndpoint', this.perEndpoint],
      ['pollMs', this.pollMs],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) throw new Error(`Dispatcher option ${name} must be a positive integer, got ${value}`);
    }
    if (!Number.isInteger(this.lease.ms) || this.lease.ms <= this.timeoutMs) {
      throw new Error(`Dispatcher option leaseMs must be an integer above timeoutMs (${this.timeoutMs}), got ${this.lease.ms}`);
    }
  }

  /** Requeues what a previous process left in flight, then delivers in the background until stop(). */
  async start(): Promise<void> {
    const requeued = await this.store.requeueInflight();
    if (requeued > 0) this.logger.warn('webhooks: requeued deliveries left in flight by a previous run', { count: requeued });
    this.running = true;
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.timer.unref();
    this.wake();
  }

  /**
   * Stops claiming and waits up to graceMs for the sends in flight, recording their results.
   * Sends still running after that are aborted and their deliveries released: due again at
   * once, under the same delivery id, for this or another dispatcher.
   */
  async stop(graceMs = 5000): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.reachTimer) clearTimeout(this.reachTimer);
    this.reachTimer = null;
    if (this.throttleTimer) clearTimeout(this.throttleTimer.timer);
    this.throttleTimer = null;
    if (this.pumping) await this.pumping;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.sends.values()), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    await this.flush();
    this.generation.abort.abort();
    // The abandoned sends are aborted now: hand their deliveries back rather than let them wait out the lease.
    // A store that fails here (gone with the process) loses nothing: the leases lapse and the deliveries are claimed again.
    const released = await this.store.releaseLeases(this.lease.owner).catch((err: unknown) => {
      this.logger.warn('webhooks: could not release leases at stop; they lapse instead', { error: String(err) });
      return 0;
    });
    if (released > 0) this.logger.warn('webhooks: released deliveries abandoned at stop', { count: released });
    this.generation = Dispatcher.newGeneration();
    this.sends.clear();
    this.holding.clear();
    this.inFlight = 0;
    this.inFlightByEndpoint.clear();
  }

  /** Something was enqueued: look for due work now rather than at the next poll. */
  notify(): void {
    if (this.running) this.wake();
  }

  /**
   * Delivers everything due at now() (repeatedly, within the concurrency limits) and resolves
   * once nothing due is left and every result is recorded. Returns the attempts made.
   */
  async runDue(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const claimed = await this.pump();
      attempts += claimed;
      if (this.sends.size > 0) {
        await Promise.race(this.sends.values());
        await this.flush();
      } else {
        await this.flush();
        if (claimed === 0) break;
      }
    }
    await this.flush();
    return attempts;
  }

  get stats(): { inFlight: number } {
    return { inFlight: this.inFlight };
  }

  private wake(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.running) this.pump().catch((err) => this.logger.error('webhooks: pump failed', { error: String(err) }));
    });
  }

  /** One claim round; a second call while one runs is folded into it. */
  private pump(): Promise<number> {
    if (this.pumping) {
      this.pumpAgain = true;
      return this.pumping.then(() => 0);
    }
    this.pumping = (async () => {
      let total = 0;
      do {
        this.pumpAgain = false;
        const room = this.concurrency - this.inFlight;
        if (room <= 0) break;
        // A wake from a timer or an enqueue may come before a failure's result is written: write it first.
        if (this.failuresUnrecorded > 0) await this.flush();
        // Reaching past a saturated endpoint's backlog walks that backlog; doing it at most every
        // 25 ms (or ten times its own cost) bounds the work while others wait at most that long.
        const t = performance.now();
        const reachPast = t - this.lastReach >= Math.max(25, this.reachCostMs * 10);
        const batch = await this.store.claimDue(
          this.lease,
          room,
          { each: this.perEndpoint, busy: this.inFlightByEndpoint },
          { reachPast, orderHoldMs: this.orderHoldMs },
        );
        if (batch.throttledUntil !== undefined) this.wakeAt(batch.throttledUntil);
        if (reachPast) {
          this.lastReach = t;
          this.reachCostMs = performance.now() - t;
        } else if (batch.length < room && (this.anySaturated() || batch.throttledUntil !== undefined))
          this.reachLater(this.lastReach + Math.max(25, this.reachCostMs * 10) - t);
        for (const d of batch) {
          if (this.holding.has(d.id)) continue;
          if (d.orderNote) this.logger.warn('webhooks: delivery sent out of conversation order', { endpoint: d.endpointId, delivery: d.id, note: d.orderNote });
          this.begin(d);
          total++;
        }
      } while (this.pumpAgain);
      return total;
    })().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  private anySaturated(): boolean {
    for (const n of this.inFlightByEndpoint.values()) if (n >= this.perEndpoint) return true;
    return false;
  }

  /** Work may sit behind a saturated endpoint: come back when the next reach-past claim is allowed. */
  private reachLater(ms: number): void {
    if (!this.running || this.reachTimer) return;
    this.reachTimer = setTimeout(
      () => {
        this.reachTimer = null;
        this.wake();
      },
      Math.max(1, Math.ceil(ms)),
    );
    this.reachTimer.unref();
  }

  /**
   * A rate-limited endpoint may start its next attempt at `at` (store time): look again then.
   * Store time and timers both run on the injected clock's scale in a server (Date.now); a
   * test clock standing still makes this wait at most RATE_WAKE_MAX_MS of real time.
   */
  private wakeAt(at: number): void {
    if (!this.running) return;
    if (this.throttleTimer && this.throttleTimer.at <= at) return;
    if (this.throttleTimer) clearTimeout(this.throttleTimer.timer);
    const ms = Math.min(Math.max(1, Math.ceil(at - this.now())), RATE_WAKE_MAX_MS);
    const timer = setTimeout(() => {
      this.throttleTimer = null;
      this.wake();
    }, ms);
    timer.unref();
    this.throttleTimer = { at, timer };
  }

  private begin(d: DueDelivery): void {
    this.holding.add(d.id);
    this.inFlight++;
    this.inFlightByEndpoint.set(d.endpointId, (this.inFlightByEndpoint.get(d.endpointId) ?? 0) + 1);
    this.sends.set(d.id, this.deliver(d, this.generation));
  }

  /** One attempt of a claimed delivery, its result queued for recording (one async function: no promise chain per delivery). */
  private async deliver(d: DueDelivery, generation: { abort: AbortController }): Promise<void> {
    let healthy = false;
    let late = false;
    try {
      const result = await this.attempt(d, generation.abort.signal);
      if (generation !== this.generation) return;
      if (result === null) {
        late = true;
        return;
      }
      this.results.push(result);
      this.tally(d, result);
      healthy = result.endpoint === 'success';
      if (!healthy) this.failuresUnrecorded++;
    } catch (err) {
      this.holding.delete(d.id);
      this.logger.error('webhooks: attempt failed unexpectedly', { delivery: d.id, error: String(err) });
    } finally {
      if (generation === this.generation) {
        this.sends.delete(d.id);
        this.inFlight--;
        const left = (this.inFlightByEndpoint.get(d.endpointId) ?? 1) - 1;
        if (left === 0) this.inFlightByEndpoint.delete(d.endpointId);
        else this.inFlightByEndpoint.set(d.endpointId, left);
        // After a failure the next claim waits for its result to be recorded, so a 410 or a disable
        // is seen first; a success changes nothing a claim reads, so its slot is refilled at once:
        // the claim is scheduled before the flush, so its requests are on their way while the
        // results are written (the receiver works while this process records).
        if (late) this.handBack(d);
        else {
          if (healthy) this.wake();
          this.scheduleFlush();
        }
      }
    }
  }

  /**
   * A rate-limited delivery whose send could not start within RATE_GUARD_MS of its slot (this
   * process was held up after its claim) goes back to the outbox unsent and unattempted, and
   * takes a later slot: sent late, it would have joined the next slot's send, whichever
   * replica holds that one. Until the store has it back this dispatcher does not take it again.
   */
  private handBack(d: DueDelivery): void {
    this.logger.warn('webhooks: a rate-limited delivery missed its slot and goes back to the outbox unsent', { endpoint: d.endpointId, delivery: d.id });
    this.store
      .releaseLeases(this.lease.owner, [d.id])
      .catch((err: unknown) => this.logger.warn('webhooks: could not hand back a delivery; its lease lapses instead', { delivery: d.id, error: String(err) }))
      .finally(() => {
        this.holding.delete(d.id);
        if (this.running) this.wake();
      });
  }

  /** Counts an attempt's outcome; a failed one is logged in one line (endpoint, status or error, next retry). */
  private tally(d: DueDelivery, result: AttemptResult): void {
    const next = result.next;
    if (next.status === 'succeeded') {
      this.attempts.succeeded++;
      return;
    }
    if (next.status === 'pending') this.attempts.retrying++;
    else this.attempts.failed++;
    this.logger.warn('webhooks: delivery attempt failed', {
      endpoint: d.endpointId,
      delivery: d.id,
      event: d.event,
      attempt: d.attempts + 1,
      status: result.attempt.statusCode,
      error: result.attempt.error,
      nextRetry: next.status === 'pending' ? new Date(next.at).toISOString() : null,
    });
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flushNow());
  }

  private async flush(): Promise<void> {
    while (this.flushing || this.results.length > 0) {
      if (this.flushing) await this.flushing;
      else await this.flushNow();
    }
  }

  private async flushNow(): Promise<void> {
    const batch = this.results;
    this.results = [];
    try {
      if (batch.length > 0) {
        const { disabled, lost } = await this.store.recordResults(this.lease.owner, batch, this.disableAfterMs);
        for (const ep of disabled) this.logger.warn('webhooks: endpoint disabled', { endpoint: ep });
        if (lost > 0) this.logger.warn('webhooks: results dropped, their leases had passed to another dispatcher', { count: lost });
      }
    } catch (err) {
      // Unrecorded results stay leased to this dispatcher; when the lease lapses they are claimed again (at-least-once).
      this.logger.error('webhooks: recording results failed', { error: String(err), count: batch.length });
    } finally {
      for (const r of batch) {
        this.holding.delete(r.deliveryId);
        if (r.endpoint !== 'success') this.failuresUnrecorded--;
      }
      this.flushing = null;
      // Results that arrived while this batch was written would otherwise wait for another attempt to end.
      if (this.results.length > 0) this.scheduleFlush();
      if (this.running) this.wake();
    }
  }

  private async guarded(url: string): Promise<GuardResult> {
    const result = await guardUrl(url, this.guard);
    if (result.ok && isIP(result.url.hostname.replace(/^\[|\]$/g, '')) !== 0) {
      if (this.literalGuards.size >= KEY_CACHE_MAX) this.literalGuards.clear();
      this.literalGuards.set(url, result);
    }
    return result;
  }

  private keysOf(secret: string): { service: KeyObject; standard: KeyObject } {
    let keys = this.keyCache.get(secret);
    if (!keys) {
      if (this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.clear();
      keys = { service: createSecretKey(Buffer.from(secret, 'utf8')), standard: createSecretKey(standardKey(secret)) };
      this.keyCache.set(secret, keys);
    }
    return keys;
  }

  /** The webhook-signature header's HMAC part: usually one signature, built as a string (a list only when there are more). */
  private hmacSignature(d: DueDelivery, ts: number, startedAt: number): string {
    let signature = standardSignature(d.id, ts, d.body, this.keysOf(d.secret).standard);
    if (d.previousSecret && d.previousSecretExpiresAt !== null && startedAt < d.previousSecretExpiresAt) {
      signature += ` ${standardSignature(d.id, ts, d.body, this.keysOf(d.previousSecret).standard)}`;
    }
    return signature;
  }

  /** `signature` with the v1a signatures added (the only asynchronous signing, so the HMAC path awaits nothing). */
  private async withAsymmetric(d: DueDelivery, ts: number, signature: string): Promise<string> {
    if (!this.keys) throw new Error('webhooks: an endpoint signs with v1a but the dispatcher has no signing keys');
    const asymmetric = (await this.keys.sign(d.id, ts, d.body)).join(' ');
    return signature === '' ? asymmetric : `${signature} ${asymmetric}`;
  }

  /** One attempt; null when it is a rate-limited delivery too late for its slot (not sent: see handBack). */
  private async attempt(d: DueDelivery, signal: AbortSignal): Promise<AttemptResult | null> {
    const startedAt = this.now();
    const number = d.attempts + 1;
    // Resolving a host name is the network's time, allowed beyond the slot's guard like a slow
    // network; the process's own delays (held up after the claim, signing) are not.
    let resolvedMs = 0;
    let guarded: GuardResult | undefined = this.literalGuards.get(d.url);
    if (guarded === undefined) {
      guarded = await this.guarded(d.url);
      resolvedMs = this.now() - startedAt;
    }
    let outcome: SendOutcome;
    if (!guarded.ok) outcome = { kind: 'error', error: `refused by the SSRF guard: URL ${guarded.reason}`, durationMs: 0 };
    else {
      const ts = Math.floor(startedAt / 1000);
      const timestamp = String(ts);
      let signature = d.signatureScheme === 'v1a' ? '' : this.hmacSignature(d, ts, startedAt);
      if (d.signatureScheme !== 'hmac') signature = await this.withAsymmetric(d, ts, signature);
      if (d.slotAt !== null && this.now() - resolvedMs - d.slotAt > RATE_GUARD_MS) return null;
      outcome = await this.send({
        url: guarded.url,
        addresses: guarded.addresses,
        body: d.body,
        timeoutMs: this.timeoutMs,
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-signature': serviceSignature(d.body, this.keysOf(d.secret).service),
          'x-service-delivery': d.id,
          'x-service-timestamp': timestamp,
          'x-service-event': d.event,
          'webhook-id': d.id,
          'webhook-timestamp': timestamp,
          'webhook-signature': signature,
        },
      });
    }
    if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
      return {
        deliveryId: d.id,
        endpointId: d.endpointId,
        attempt: { startedAt, durationMs: outcome.durationMs, statusCode: outcome.status, responseExcerpt: outcome.excerpt, error: null, outcome: 'succeeded' },
        next: SUCCEEDED,
        endpoint: 'success',
      };
    }
    const status = outcome.kind === 'response' ? outcome.status : null;
    const error =
      outcome.kind === 'error'
        ? outcome.error
        : status !== null && status >= 300 && status < 400
          ? `HTTP ${status} (redirects are not followed)`
          : `HTTP ${status}`;
    const attempt = {
      startedAt,
      durationMs: outcome.durationMs,
      statusCode: status,
      responseExcerpt: outcome.kind === 'response' ? outcome.excerpt : null,
      error,
      outcome: 'failed' as const,
    };
    const base = { deliveryId: d.id, endpointId: d.endpointId };
    if (status === 410) return { ...base, attempt, next: { status: 'failed' }, endpoint: 'gone' };
    let delay = retryDelay(number, this.random, this.retryDelays);
    if (delay !== null && outcome.kind === 'response' && (status === 429 || status === 503)) {
      const asked = parseRetryAfter(outcome.retryAfter, this.now());
      if (asked !== null) delay = Math.max(delay, asked);
    }
    return { ...base, attempt, next: delay === null ? { status: 'failed' } : { status: 'pending', at: this.now() + delay }, endpoint: 'failure' };
  }
}
