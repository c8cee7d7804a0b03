import { join } from 'node:path';
import { DEFAULT_BUNDLE, validateBundle, type ConfigBundle } from '../../brain/index.js';
import { silentLogger, type Logger } from '../log.js';
import type { ConfigOrigin, ConfigSource, ConfigStatus } from './config-source.js';
import { errorText, failureText, type ControlPlaneClient } from './control-plane-client.js';
import { ensureDir, readIfExists, STATE_DIR_FILES, writeFileAtomic } from './state-dir.js';

/** How a pull or a push ended, as /status shows it. */
export type ExchangeOutcome = 'ok' | 'not_modified' | 'unauthorized' | `error: ${string}`;

export interface Exchange {
  at: string;
  outcome: ExchangeOutcome;
}

export interface PullStatus {
  lastPull: Exchange | null;
  /** True after a 401/403: the key is revoked or wrong; a restart with a good key resumes. */
  pollingStopped: boolean;
  consecutiveErrors: number;
  skewMs: number;
}

export interface ControlPlaneSourceOptions {
  client: ControlPlaneClient;
  /** Where the last good bundle is kept (created when missing). */
  stateDir: string;
  /** Poll interval in ms (default 15 s), jittered by ±10%. */
  pollMs?: number;
  /** Longest wait for the first pull at start (default 3 s); then the sidecar starts without it. */
  startupTimeoutMs?: number;
  /** Timeout of later pulls (default 10 s). */
  requestTimeoutMs?: number;
  /** Cap of the error back-off (default 5 min). */
  maxBackoffMs?: number;
  logger?: Logger;
  now?: () => number;
  random?: () => number;
}

interface CachedBundle {
  etag: string;
  savedAt: string;
  bundle: ConfigBundle;
}

/**
 * The control plane as a config source (spec 001 §4.2). Pulls `GET /v1/config?server={id}`
 * at start and on a jittered interval with `If-None-Match` of the last applied bundle;
 * validates before applying (an invalid bundle keeps the last good one, logged once); keeps
 * the last applied bundle on disk and starts from it when the control plane cannot be reached
 * at start, else from the built-in defaults. Errors back off exponentially with jitter; a
 * 401/403 stops polling. Nothing here runs on the tick path.
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
  private lastPull: Exchange | null = null;
  private stopped = false;
  private closed = false;
  private errors = 0;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private onBundle: ((bundle: ConfigBundle) => void) | null = null;

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
  }

  readonly stateDir: string;

  async start(onBundle: (bundle: ConfigBundle) => void): Promise<ConfigBundle> {
    await ensureDir(this.stateDir);
    const cached = await this.readCache();
    if (cached) {
      this.current = cached.bundle;
      this.etag = cached.etag;
      this.origin = 'disk-cache';
    }
    await this.pull(this.startupTimeoutMs);
    if (this.origin === 'disk-cache') this.logger.warn('control plane unreachable at start; running the last good bundle from disk', { version: this.current.version, file: this.cacheFile });
    if (this.origin === 'defaults') this.logger.warn('control plane unreachable at start and no bundle on disk; running the built-in defaults', { url: this.client.url });
    this.onBundle = onBundle;
    this.schedule();
    return this.current;
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.onBundle = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
  }

  status(): ConfigStatus {
    return { version: this.current.version, source: this.origin, location: this.client.url, lastError: this.lastError };
  }

  pullStatus(): PullStatus {
    return { lastPull: this.lastPull, pollingStopped: this.stopped, consecutiveErrors: this.errors, skewMs: this.client.skewMs };
  }

  /** Pulls now (joins a pull under way); for tests and an operator's nudge. */
  pollNow(): Promise<void> {
    return (this.inFlight ??= this.pull(this.requestTimeoutMs).finally(() => (this.inFlight = null)));
  }

  private schedule(): void {
    if (this.closed || this.stopped) return;
    const base = this.errors === 0 ? this.pollMs : Math.min(this.maxBackoffMs, this.pollMs * 2 ** this.errors);
    // Jitter spreads many sidecars' pulls; on errors it is "full jitter" over the upper half.
    const delay = this.errors === 0 ? base * (0.9 + 0.2 * this.random()) : base * (0.5 + 0.5 * this.random());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.pollNow().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  private record(outcome: ExchangeOutcome): void {
    this.lastPull = { at: new Date(this.now()).toISOString(), outcome };
  }

  private async pull(timeoutMs: number): Promise<void> {
    if (this.stopped) return;
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
      this.errors = 0;
      if (this.origin === 'disk-cache') this.origin = 'control-plane';
      return this.record('not_modified');
    }
    if (reply.status === 401 || reply.status === 403) {
      this.stopped = true;
      this.record('unauthorized');
      this.logger.error('the control plane refused the server key; config polling stopped (ticks continue on the applied bundle)', {
        status: reply.status,
        reason: errorText(reply),
        version: this.current.version,
      });
      return;
    }
    if (reply.status !== 200) return this.fail(errorText(reply));
    let value: unknown;
    try {
      value = JSON.parse(reply.text);
    } catch {
      return this.fail('the bundle is not JSON', true);
    }
    const check = validateBundle(value);
    if (!check.ok) {
      const reasons = check.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
      return this.fail(`invalid bundle: ${reasons}`, true);
    }
    this.errors = 0;
    this.lastError = null;
    const bundle = check.bundle;
    const etag = reply.headers.get('etag') ?? `"v${bundle.version}"`;
    const changed = this.origin === 'defaults' || bundle.version !== this.current.version;
    if (changed) {
      const previous = this.current.version;
      this.current = bundle;
      this.onBundle?.(bundle);
      this.logger.info('bundle applied from the control plane', { version: bundle.version, previous });
    }
    this.origin = 'control-plane';
    // Saved only once applied, so a crash between the two never skips a bundle.
    this.etag = etag;
    this.record('ok');
    if (changed) await this.writeCache({ etag, savedAt: new Date(this.now()).toISOString(), bundle });
  }

  private fail(reason: string, invalid = false): void {
    this.errors++;
    this.record(`error: ${reason}`);
    if (invalid) {
      if (this.lastError !== reason) this.logger.warn('bundle from the control plane refused; keeping the last good one', { version: this.current.version, reason });
      this.lastError = reason;
    } else if (this.errors === 1) {
      this.logger.warn('config pull failed; retrying with back-off', { reason, version: this.current.version });
    }
  }

  private async readCache(): Promise<CachedBundle | null> {
    try {
      const text = await readIfExists(this.cacheFile);
      if (text === null) return null;
      const doc = JSON.parse(text) as Partial<CachedBundle>;
      const check = validateBundle(doc.bundle);
      if (!check.ok || typeof doc.etag !== 'string') throw new Error('not a saved bundle');
      return { etag: doc.etag, savedAt: String(doc.savedAt), bundle: check.bundle };
    } catch (err) {
      this.logger.warn('the saved bundle is unreadable; ignored', { file: this.cacheFile, error: err instanceof Error ? err.message : String(err) });
      return null;
    }
  }

  private async writeCache(doc: CachedBundle): Promise<void> {
    try {
      await writeFileAtomic(this.cacheFile, JSON.stringify(doc));
    } catch (err) {
      this.logger.error('the applied bundle could not be saved to disk', { file: this.cacheFile, error: err instanceof Error ? err.message : String(err) });
    }
  }
}
