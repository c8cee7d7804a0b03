import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Logger } from '../log.js';
import { hmacHex } from '../signing/hmac.js';
import type { TenantId } from '../identity/types.js';
import type { VideoStore } from './store.js';
import type { CallbackRecord } from './types.js';

/** Waits after failed attempts 1..5; after the sixth failure the callback is given up. */
export const RETRY_DELAYS_MS = [10_000, 60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000] as const;
export const DELIVERY_TIMEOUT_MS = 10_000;
export const MAX_CALLBACK_URL = 2048;

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) PRIVATE.addSubnet(net, prefix, 'ipv6');

/** Loopback, private, link-local, multicast or otherwise non-public; IPv4-mapped IPv6 is checked as IPv4. */
export function isPrivateAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(ip);
  if (family === 0) return true;
  return PRIVATE.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Checks a callback URL when a video is requested: https only, and no literal private
 * address or localhost, unless private targets are allowed (local development and tests),
 * which also admits plain http. Names are resolved again at delivery. Null when fine.
 */
export function callbackUrlProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw.length > MAX_CALLBACK_URL) return `must be at most ${MAX_CALLBACK_URL} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (allowPrivate) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must be an http or https URL';
  if (url.protocol !== 'https:') return 'must be an https URL';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point at this machine';
  if (isIP(host) && isPrivateAddress(host)) return 'must not point at a private, loopback or link-local address';
  return null;
}

export interface CallbackDispatcherOptions {
  store: VideoStore;
  /** The tenant's current signing secret. */
  secretFor: (tenantId: TenantId) => Promise<string>;
  allowPrivate: boolean;
  now: () => number;
  logger: Logger;
  /** How often due retries are looked for, in real milliseconds. */
  pollMs?: number;
  fetch?: typeof fetch;
}

/**
 * Delivers completion callbacks from the video_callbacks table: at least once, signed, with
 * retries after RETRY_DELAYS_MS. Rows are written in the same transaction that finishes the
 * video, so a restart loses none; delivery resumes on start.
 */
export class CallbackDispatcher {
  private readonly o: CallbackDispatcherOptions;
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(options: CallbackDispatcherOptions) {
    this.o = options;
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
      const due = await this.o.store.dueCallbacks(this.o.now(), 20);
      if (due.length === 0 || this.stopped) return;
      await Promise.all(due.map((cb) => this.deliver(cb)));
    }
  }

  private async deliver(cb: CallbackRecord): Promise<void> {
    const error = await this.attempt(cb);
    if (error === null) {
      await this.o.store.recordCallbackAttempt(cb.id, { status: 'delivered', nextAttemptAt: this.o.now(), error: null });
      return;
    }
    const delay = RETRY_DELAYS_MS[cb.attempts];
    const status = delay === undefined || error.permanent ? 'failed' : 'pending';
    this.o.logger.warn('video callback attempt failed', { callbackId: cb.id, videoId: cb.videoId, attempt: cb.attempts + 1, error: error.message, status });
    await this.o.store.recordCallbackAttempt(cb.id, { status, nextAttemptAt: this.o.now() + (delay ?? 0), error: error.message });
  }

  private async attempt(cb: CallbackRecord): Promise<{ message: string; permanent: boolean } | null> {
    if (!this.o.allowPrivate) {
      try {
        const host = new URL(cb.url).hostname.replace(/^\[|\]$/g, '');
        const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
        if (addresses.some((a) => isPrivateAddress(a.address))) return { message: `${host} resolves to a private address`, permanent: true };
      } catch (err) {
        return { message: `cannot resolve: ${(err as Error).message}`, permanent: false };
      }
    }
    const secret = await this.o.secretFor(cb.tenantId);
    const timestamp = String(Math.floor(this.o.now() / 1000));
    try {
      const res = await (this.o.fetch ?? fetch)(cb.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'brainstem-video-callback/1',
          'x-service-signature': `v1=${hmacHex(secret, cb.body)}`,
          'x-service-timestamp': timestamp,
          'x-service-event': cb.event,
          'x-service-delivery': `vcb_${cb.id}`,
        },
        body: cb.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await res.body?.cancel().catch(() => {});
      return res.status >= 200 && res.status < 300 ? null : { message: `answered ${res.status}`, permanent: res.status === 410 };
    } catch (err) {
      return { message: (err as Error).message, permanent: false };
    }
  }
}
