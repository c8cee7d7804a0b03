import type { Logger } from '../log.js';
import { hmacHex } from '../signing/hmac.js';
import { guardUrl, registeredUrl, type PrivateUrls, type Resolve } from '../net/ssrf.js';
import type { Send } from '../net/sender.js';
import type { TenantId } from '../identity/types.js';
import type { VideoStore } from './store.js';
import type { CallbackRecord } from './types.js';
import { leaseOwner, type Lease } from '../store/lease.js';

/** Waits after failed attempts 1..5; after the sixth failure the callback is given up. */
export const RETRY_DELAYS_MS = [10_000, 60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000] as const;
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * How long a claimed callback stays with the worker that claimed it; past this another
 * replica may deliver it. It outlasts an attempt: the address lookup, DELIVERY_TIMEOUT_MS, the write.
 */
export const CALLBACK_LEASE_MS = 60_000;
export const MAX_CALLBACK_URL = 2048;

/**
 * Checks a callback URL when a video is requested, with the same SSRF guard as every
 * outbound call: https only, and every address of its host public, unless private targets
 * are allowed (local development and tests), which also admits plain http. A name that does
 * not resolve yet is admitted: every delivery resolves and checks again. The URL to store when
 * fine (registeredUrl: no fragment, the called form of a non-ASCII URL).
 */
export async function checkCallbackUrl(
  raw: string,
  allowPrivate: PrivateUrls,
  resolve?: Resolve,
): Promise<{ ok: true; url: string } | { ok: false; reason: string }> {
  if (raw.length > MAX_CALLBACK_URL) return { ok: false, reason: `must be at most ${MAX_CALLBACK_URL} characters` };
  const verdict = await guardUrl(raw, { allowPrivate, admitUnresolved: true, ...(resolve ? { resolve } : {}) });
  if (!verdict.ok) return verdict;
  const stored = registeredUrl(raw, verdict.url);
  if (stored.ok && stored.url.length > MAX_CALLBACK_URL)
    return { ok: false, reason: `must be at most ${MAX_CALLBACK_URL} characters as called (${stored.url})` };
  return stored;
}

export interface CallbackDispatcherOptions {
  store: VideoStore;
  /** The tenant's current signing secret. */
  secretFor: (tenantId: TenantId) => Promise<string>;
  allowPrivate: PrivateUrls;
  now: () => number;
  logger: Logger;
  /** How often due retries are looked for, in real milliseconds. */
  pollMs?: number;
  /** The HTTP exchange, pinned to the addresses the guard checked. */
  send: Send;
  /** DNS for the SSRF guard; default the system resolver. */
  resolve?: Resolve;
  /** Names this dispatcher's claims; default host, pid and a random suffix. */
  owner?: string;
  /** How long a claim holds a callback; default CALLBACK_LEASE_MS, and above DELIVERY_TIMEOUT_MS. */
  leaseMs?: number;
}

/**
 * Delivers completion callbacks from the video_callbacks table: at least once, signed, with
 * retries after RETRY_DELAYS_MS. Rows are written in the same transaction that finishes the
 * video, so a restart loses none; delivery resumes on start. Each attempt holds a lease
 * (CALLBACK_LEASE_MS), so replicas sharing the store never send one callback at once.
 */
export class CallbackDispatcher {
  private readonly o: CallbackDispatcherOptions;
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private readonly lease: Lease;

  constructor(options: CallbackDispatcherOptions) {
    this.o = options;
    this.lease = { owner: options.owner ?? leaseOwner(), ms: options.leaseMs ?? CALLBACK_LEASE_MS };
    if (!Number.isInteger(this.lease.ms) || this.lease.ms <= DELIVERY_TIMEOUT_MS)
      throw new Error(`leaseMs must be an integer above ${DELIVERY_TIMEOUT_MS}, got ${this.lease.ms}`);
  }

  start(): void {
    this.kick();
  }

  /** Delivers what is due now; later retries are picked up by the poll. */
  kick(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = this.deliverDue()
      .catch((err: unknown) => this.o.logger.error('callback dispatch failed', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.busy = null;
        if (this.again) {
          this.again = false;
          this.kick();
        } else this.schedule();
      });
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.kick(), this.o.pollMs ?? 1000);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.busy;
  }

  private async deliverDue(): Promise<void> {
    for (;;) {
      const due = await this.o.store.claimCallbacks(this.lease, this.o.now(), 20);
      if (due.length === 0 || this.stopped) return;
      await Promise.all(due.map((cb) => this.deliver(cb)));
    }
  }

  private async deliver(cb: CallbackRecord): Promise<void> {
    const error = await this.attempt(cb);
    if (error === null) {
      await this.o.store.recordCallbackAttempt(this.lease.owner, cb.id, { status: 'delivered', nextAttemptAt: this.o.now(), error: null });
      return;
    }
    const delay = RETRY_DELAYS_MS[cb.attempts];
    const status = delay === undefined || error.permanent ? 'failed' : 'pending';
    this.o.logger.warn('video callback attempt failed', { callbackId: cb.id, videoId: cb.videoId, attempt: cb.attempts + 1, error: error.message, status });
    await this.o.store.recordCallbackAttempt(this.lease.owner, cb.id, { status, nextAttemptAt: this.o.now() + (delay ?? 0), error: error.message });
  }

  private async attempt(cb: CallbackRecord): Promise<{ message: string; permanent: boolean } | null> {
    // Checked again at every attempt, and the request goes to the addresses checked here:
    // a host that now resolves to a private address (DNS rebinding) is never contacted.
    const guarded = await guardUrl(cb.url, { allowPrivate: this.o.allowPrivate, ...(this.o.resolve ? { resolve: this.o.resolve } : {}) });
    if (!guarded.ok) return { message: `refused by the SSRF guard: URL ${guarded.reason}`, permanent: !guarded.unresolved };
    const secret = await this.o.secretFor(cb.tenantId);
    const timestamp = String(Math.floor(this.o.now() / 1000));
    const outcome = await this.o.send({
      url: guarded.url,
      addresses: guarded.addresses,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'brainstem-video-callback/1',
        'x-service-signature': `v1=${hmacHex(secret, cb.body)}`,
        'x-service-timestamp': timestamp,
        'x-service-event': cb.event,
        'x-service-delivery': `vcb_${cb.id}`,
      },
      body: cb.body,
      timeoutMs: DELIVERY_TIMEOUT_MS,
    });
    if (outcome.kind === 'error') return { message: outcome.error, permanent: false };
    return outcome.status >= 200 && outcome.status < 300 ? null : { message: `answered ${outcome.status}`, permanent: outcome.status === 410 };
  }
}
