import { join } from 'node:path';
import { DEFAULT_BUNDLE, validateBundle, type ConfigBundle } from '../../../brain/index.js';
import { silentLogger, type Logger } from '../../log.js';
import type { ConfigOrigin, ConfigSource, ConfigStatus } from '../config/config-source.js';
import { errorText, failureText, type ControlPlaneClient } from './control-plane-client.js';
import { ensureDir, readIfExists, STATE_DIR_FILES, writeFileAtomic } from '../state/state-dir.js';
import { BundleTrust, parseKeyList } from '../config/bundle-trust.js';
import { BUNDLE_KEY_ID_HEADER, BUNDLE_SIGNATURE_HEADER } from '../../signing/bundle.js';
import { ConfigStreamClient, type StreamStatus } from './config-stream-client.js';

/**
 * While the push stream is live, a pull still runs at this multiple of the poll interval (60 s
 * at the default 15 s): a stream that is held open but withholds publishes (a freeze) cannot
 * keep a bundle from the sidecar for longer.
 */
export const LIVE_POLL_FACTOR = 4;

/** How a pull or a push ended, as /status shows it. */
export type ExchangeOutcome = 'ok' | 'not_modified' | 'unauthorized' | `error: ${string}`;

/** Exchanges by outcome class, since start (read by /metrics at scrape time). */
export type ExchangeCounts = Record<'ok' | 'not_modified' | 'unauthorized' | 'error', number>;

/** Counts an exchange's outcome in `counts`. */
export function countExchange(counts: ExchangeCounts, outcome: ExchangeOutcome): void {
  counts[outcome === 'ok' || outcome === 'not_modified' || outcome === 'unauthorized' ? outcome : 'error']++;
}

export interface Exchange {
  at: string;
  outcome: ExchangeOutcome;
}

export interface PullStatus {
  lastPull: Exchange | null;
  /** Failed pulls in a row (0 after a success); the wait before the next grows with it. */
  consecutiveErrors: number;
  /** When the next pull is due (ISO 8601), null while none is scheduled. */
  nextPullAt: string | null;
  skewMs: number;
  /** How publishes reach this sidecar now: `live` (the push stream is open) or `polling`. */
  path: 'live' | 'polling';
  /** The push stream's state; null when push is off. */
  stream: StreamStatus | null;
  /** The pinned bundle key and the highest version applied (see BundleTrust). */
  trust: ReturnType<BundleTrust['status']>;
}

export interface ControlPlaneSourceOptions {
  client: ControlPlaneClient;
  /** Where the last good bundle is kept (created when missing). */
  stateDir: string;
  /** Poll interval in ms (default 15 s), jittered by ±10%, while the push stream is down. */
  pollMs?: number;
  /** Poll interval while the push stream is live (default LIVE_POLL_FACTOR × pollMs). */
  livePollMs?: number;
  /** Hold the push stream open (default true). */
  push?: boolean;
  /** `--bundle-key`: the bundle public key to pin (else the control plane's, on first use). */
  bundleKey?: string | undefined;
  /** The push stream's idle limit (default STREAM_CLIENT_LIMITS.idleMs); tests lower it. */
  streamIdleMs?: number;
  /** Longest wait for the first pull at start (default 3 s); then the sidecar starts without it. */
  startupTimeoutMs?: number;
  /** Timeout of later pulls (default 10 s). */
  requestTimeoutMs?: number;
  /** Cap of the error back-off (default 5 min, `--max-backoff`). */
  maxBackoffMs?: number;
  logger?: Logger;
  now?: () => number;
  random?: () => number;
}

/** The disk cache: the bundle exactly as served, with its signature, so it is verified again before it is trusted. */
interface CachedBundle {
  etag: string;
  savedAt: string;
  body: string;
  keyId: string | null;
  signature: string | null;
}

/**
 * The control plane as a config source (spec 001 §4.2). Pulls `GET /v1/config?server={id}`
 * at start and on a jittered interval with `If-None-Match` of the last applied bundle;
 * validates before applying (an invalid bundle keeps the last good one, logged once); keeps
 * the last applied bundle on disk and starts from it when the first pull fails, else from the
 * built-in defaults. No answer stops the polling: a network error, a 5xx, a 429 or a 401/403
 * (a suspended tenant, a revoked key) keeps the last good bundle and retries with exponential
 * back-off and jitter, capped at maxBackoffMs, so a resumed tenant or a fixed key is picked up
 * by the next pull. Nothing here runs on the tick path.
 */
export class ControlPlaneSource implements ConfigSource {
  private readonly client: ControlPlaneClient;
  private readonly logger: Logger;
  private readonly pollMs: number;
  private readonly startupTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly maxBackoffMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly cacheFile: string;
  private current: ConfigBundle = DEFAULT_BUNDLE;
  private origin: ConfigOrigin = 'defaults';
  /** ETag of the applied bundle, sent as If-None-Match; null while on the defaults. */
  private etag: string | null = null;
  private lastError: string | null = null;
  private lastErrorSince: string | null = null;
  private lastPull: Exchange | null = null;
  /** Pulls since start by outcome. */
  readonly pulls: ExchangeCounts = { ok: 0, not_modified: 0, unauthorized: 0, error: 0 };
  private closed = false;
  /** Earliest next pull a 429's Retry-After asked for (epoch ms), 0 when none. */
  private notBefore = 0;
  private nextPullAt: number | null = null;
  private errors = 0;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private onBundle: ((bundle: ConfigBundle) => void) | null = null;
  private readonly livePollMs: number;
  /** The bundle signature trust: pinned key and highest applied version. */
  readonly trust: BundleTrust;
  private readonly stream: ConfigStreamClient | null;
  private live = false;

  constructor(options: ControlPlaneSourceOptions) {
    this.client = options.client;
    this.logger = options.logger ?? silentLogger;
    this.pollMs = options.pollMs ?? 15_000;
    this.startupTimeoutMs = options.startupTimeoutMs ?? 3_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 300_000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.cacheFile = join(options.stateDir, STATE_DIR_FILES.bundle);
    this.stateDir = options.stateDir;
    this.livePollMs = options.livePollMs ?? this.pollMs * LIVE_POLL_FACTOR;
    this.trust = new BundleTrust({
      file: join(options.stateDir, STATE_DIR_FILES.trust),
      givenKey: options.bundleKey,
      fetchKeys: () => this.fetchKeys(),
      logger: this.logger,
      now: this.now,
    });
    this.stream =
      options.push === false
        ? null
        : new ConfigStreamClient({
            client: this.client,
            logger: this.logger,
            random: this.random,
            now: this.now,
            ...(options.streamIdleMs !== undefined ? { idleMs: options.streamIdleMs } : {}),
            onVersion: (version, etag) => {
              if (etag !== this.etag || version !== this.current.version) this.pushed();
            },
            onLive: (live) => {
              this.live = live;
              // Down: poll at the short interval from now on; live: the long one.
              if (this.inFlight === null) this.schedule();
            },
          });
  }

  readonly stateDir: string;

  async start(onBundle: (bundle: ConfigBundle) => void): Promise<ConfigBundle> {
    await ensureDir(this.stateDir);
    await this.trust.load();
    const cached = await this.readCache();
    if (cached) {
      this.current = cached.bundle;
      this.etag = cached.etag;
      this.origin = 'disk-cache';
    }
    await this.pull(this.startupTimeoutMs);
    const reason = this.lastError ?? 'no answer';
    if (this.origin === 'disk-cache')
      this.logger.warn('config pull failed at start; running the last good bundle from disk, retrying with back-off', {
        reason,
        version: this.current.version,
        file: this.cacheFile,
      });
    if (this.origin === 'defaults')
      this.logger.warn('config pull failed at start and no bundle on disk; running the built-in defaults, retrying with back-off', {
        reason,
        url: this.client.url,
      });
    this.onBundle = onBundle;
    this.schedule();
    this.stream?.start();
    return this.current;
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.onBundle = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.stream?.stop();
    await this.inFlight;
  }

  status(): ConfigStatus {
    return { version: this.current.version, source: this.origin, location: this.client.url, lastError: this.lastError, lastErrorSince: this.lastErrorSince };
  }

  pullStatus(): PullStatus {
    const next = this.nextPullAt === null ? null : new Date(this.nextPullAt).toISOString();
    return {
      lastPull: this.lastPull,
      consecutiveErrors: this.errors,
      nextPullAt: next,
      skewMs: this.client.skewMs,
      path: this.live ? 'live' : 'polling',
      stream: this.stream?.status() ?? null,
      trust: this.trust.status(),
    };
  }

  /** Pulls now (joins a pull under way), then schedules the next pull from its outcome. */
  pollNow(): Promise<void> {
    return (this.inFlight ??= this.pull(this.requestTimeoutMs).finally(() => {
      this.inFlight = null;
      this.schedule();
    }));
  }

  /**
   * A pushed version that is not the applied one: pulls now, or once more right after a pull
   * under way (which may have been answered before that version was published).
   */
  private pushed(): void {
    if (this.inFlight === null) {
      void this.pollNow();
      return;
    }
    if (this.pullAgain) return;
    this.pullAgain = true;
    void this.inFlight.then(() => {
      this.pullAgain = false;
      if (!this.closed) void this.pollNow();
    });
  }

  private pullAgain = false;

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.nextPullAt = null;
    if (this.closed || this.onBundle === null) return;
    const interval = this.live ? this.livePollMs : this.pollMs;
    const base = this.errors === 0 ? interval : Math.min(this.maxBackoffMs, this.pollMs * 2 ** this.errors);
    // Jitter spreads many sidecars' pulls; on errors it is "full jitter" over the upper half.
    const jittered = this.errors === 0 ? base * (0.9 + 0.2 * this.random()) : base * (0.5 + 0.5 * this.random());
    const delay = Math.max(jittered, this.notBefore - this.now());
    this.nextPullAt = this.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.nextPullAt = null;
      void this.pollNow();
    }, delay);
    this.timer.unref();
  }

  private record(outcome: ExchangeOutcome): void {
    countExchange(this.pulls, outcome);
    this.lastPull = { at: new Date(this.now()).toISOString(), outcome };
  }

  private async pull(timeoutMs: number): Promise<void> {
    let reply;
    try {
      reply = await this.client.request('GET', `/v1/config?server=${this.client.serverId}`, {
        timeoutMs,
        ...(this.etag ? { headers: { 'if-none-match': this.etag } } : {}),
      });
    } catch (err) {
      return this.fail(`unreachable (${failureText(err)})`);
    }
    if (reply.status === 304) {
      this.recovered();
      if (this.origin === 'disk-cache') this.origin = 'control-plane';
      return this.record('not_modified');
    }
    if (reply.status === 401 || reply.status === 403) return this.fail(`the control plane refused the server key (${errorText(reply)})`, 'unauthorized');
    if (reply.status === 429) this.notBefore = this.now() + retryAfterMs(reply.headers.get('retry-after'), this.now());
    if (reply.status !== 200) return this.fail(errorText(reply));
    const keyId = reply.headers.get(BUNDLE_KEY_ID_HEADER);
    const signature = reply.headers.get(BUNDLE_SIGNATURE_HEADER);
    // Verified before anything of it is read: an unverified body is never even parsed.
    const verdict = await this.trust.verify(this.client.serverId, reply.text, keyId, signature, true);
    if (!verdict.ok) return this.fail(verdict.reason, 'invalid');
    const parsed = this.parse(reply.text);
    if (typeof parsed === 'string') return this.fail(parsed, 'invalid');
    const rollback = this.trust.rollback(parsed.version);
    if (rollback) return this.fail(rollback, 'invalid');
    this.recovered();
    const bundle = parsed;
    const etag = reply.headers.get('etag') ?? `"v${bundle.version}"`;
    const changed = this.origin === 'defaults' || bundle.version !== this.current.version;
    if (changed) {
      // Before the first pull the sidecar runs the built-in defaults, whose version number
      // means nothing; a log line saying `"previous": 1` there read as a change from version 1.
      const previous = this.origin === 'defaults' ? 'built-in defaults' : this.current.version;
      this.current = bundle;
      this.onBundle?.(bundle);
      this.logger.info('bundle applied from the control plane', { version: bundle.version, previous });
    }
    this.origin = 'control-plane';
    // Saved only once applied, so a crash between the two never skips a bundle.
    this.etag = etag;
    this.record('ok');
    await this.trust.applied(bundle.version);
    if (changed) await this.writeCache({ etag, savedAt: new Date(this.now()).toISOString(), body: reply.text, keyId, signature });
  }

  /** A bundle's text as a valid bundle, or why it is not one. */
  private parse(text: string): ConfigBundle | string {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return 'the bundle is not JSON';
    }
    const check = validateBundle(value);
    if (!check.ok) return `invalid bundle: ${check.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`;
    return check.bundle;
  }

  /** The control plane's published bundle keys (first use, rotation). */
  private async fetchKeys() {
    const reply = await this.client.request('GET', '/v1/config/keys', { timeoutMs: this.requestTimeoutMs });
    if (reply.status !== 200) throw new Error(errorText(reply));
    return parseKeyList(reply.text);
  }

  /**
   * A failed pull: counted for the back-off, shown on /status, and logged when its reason
   * changes (not on every retry). `kind` says what the log line can truthfully claim.
   */
  private fail(reason: string, kind: 'invalid' | 'unauthorized' | 'error' = 'error'): void {
    this.errors++;
    this.record(kind === 'unauthorized' ? 'unauthorized' : `error: ${reason}`);
    const changed = this.lastError !== reason;
    this.lastError = reason;
    this.lastErrorSince ??= new Date(this.now()).toISOString();
    if (!changed || !this.onBundle) return;
    const fields = { reason, version: this.current.version, consecutiveErrors: this.errors };
    if (kind === 'invalid') this.logger.warn('bundle from the control plane refused; keeping the last good one', fields);
    else if (kind === 'unauthorized')
      this.logger.error('the control plane refused the server key; keeping the applied bundle and retrying with back-off', fields);
    else this.logger.warn('config pull failed; keeping the applied bundle and retrying with back-off', fields);
  }

  /** A pull that worked: the back-off and the error are over. */
  private recovered(): void {
    if (this.lastError !== null && this.onBundle)
      this.logger.info('config pull works again', { version: this.current.version, failedSince: this.lastErrorSince });
    this.errors = 0;
    this.notBefore = 0;
    this.lastError = null;
    this.lastErrorSince = null;
  }

  /**
   * The saved bundle, trusted only as the control plane's answer would be: its signature is
   * checked with the pinned key (never a first use: a file on disk proves nothing) and its
   * version must not be below the highest applied.
   */
  private async readCache(): Promise<{ etag: string; bundle: ConfigBundle } | null> {
    let doc: Partial<CachedBundle>;
    try {
      const text = await readIfExists(this.cacheFile);
      if (text === null) return null;
      doc = JSON.parse(text) as Partial<CachedBundle>;
      if (typeof doc.etag !== 'string' || typeof doc.body !== 'string') throw new Error('not a saved bundle');
    } catch (err) {
      this.logger.warn('the saved bundle is unreadable; ignored', { file: this.cacheFile, error: err instanceof Error ? err.message : String(err) });
      return null;
    }
    const verdict = await this.trust.verify(this.client.serverId, doc.body, doc.keyId ?? null, doc.signature ?? null, false);
    const parsed = verdict.ok ? this.parse(doc.body) : verdict.reason;
    const refusal = typeof parsed === 'string' ? parsed : this.trust.rollback(parsed.version);
    if (refusal !== null || typeof parsed === 'string') {
      this.logger.warn('the saved bundle refused; not trusted', { file: this.cacheFile, reason: refusal ?? parsed });
      return null;
    }
    return { etag: doc.etag, bundle: parsed };
  }

  private async writeCache(doc: CachedBundle): Promise<void> {
    try {
      await writeFileAtomic(this.cacheFile, JSON.stringify(doc));
    } catch (err) {
      this.logger.error('the applied bundle could not be saved to disk', { file: this.cacheFile, error: err instanceof Error ? err.message : String(err) });
    }
  }
}

/** A Retry-After header (seconds or an HTTP date) in ms from now; 0 when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number {
  if (!value) return 0;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - now);
}
