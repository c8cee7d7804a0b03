import { silentLogger, type Logger } from '../../log.js';
import { failureText, type ControlPlaneClient } from './control-plane-client.js';

/** The sidecar's side of the config push stream. */
export const STREAM_CLIENT_LIMITS = {
  /** No byte for this long (two missed 25 s heartbeats and some) and the stream counts as dead: reconnect. */
  idleMs: 60_000,
  /** Longest wait for the stream's headers. */
  connectTimeoutMs: 10_000,
  /** Reconnect back-off: from the first to the cap, doubling, with jitter. */
  firstRetryMs: 1_000,
  maxRetryMs: 60_000,
  /** A control plane without the stream route (404, 405) is asked again this rarely. */
  unsupportedRetryMs: 300_000,
  /** Largest event (bytes between blank lines); a longer one ends the stream as hostile. */
  maxEventBytes: 4_096,
} as const;

export type StreamState = 'connecting' | 'live' | 'down';

export interface StreamStatus {
  state: StreamState;
  /** When the stream now open was opened (ISO 8601), null when none is. */
  since: string | null;
  /** Why the last stream ended or could not open, null before any did. */
  lastError: string | null;
  /** Streams opened since start. */
  opened: number;
}

export interface ConfigStreamClientOptions {
  client: ControlPlaneClient;
  /** A `version` event: the control plane's head is this version and ETag. */
  onVersion: (version: number, etag: string) => void;
  /** The stream went live (true) or down (false). */
  onLive: (live: boolean) => void;
  logger?: Logger;
  random?: () => number;
  now?: () => number;
  idleMs?: number;
}

/**
 * Holds `GET /v1/config/stream?server={id}` open (signed afresh on every connection) and
 * hands each `version` event to the config source, which pulls when the version is not the
 * one it applied. When the stream ends, fails, or stays silent past idleMs, the source is told
 * it is down (it polls meanwhile) and a new one is opened after a jittered back-off.
 */
export class ConfigStreamClient {
  private readonly logger: Logger;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly idleMs: number;
  private state: StreamState = 'down';
  private since: number | null = null;
  private lastError: string | null = null;
  private opened = 0;
  private failures = 0;
  private stopped = true;
  private abort: AbortController | null = null;
  private retry: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly options: ConfigStreamClientOptions) {
    this.logger = options.logger ?? silentLogger;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMs ?? STREAM_CLIENT_LIMITS.idleMs;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.abort?.abort();
    await this.running;
  }

  status(): StreamStatus {
    return { state: this.state, since: this.since === null ? null : new Date(this.since).toISOString(), lastError: this.lastError, opened: this.opened };
  }

  private connect(): void {
    if (this.stopped) return;
    this.running = this.run().catch((err: unknown) => this.logger.error('config stream failed', { error: String(err) }));
  }

  private async run(): Promise<void> {
    this.state = 'connecting';
    const abort = (this.abort = new AbortController());
    let retryMs: number;
    try {
      retryMs = await this.session(abort);
    } catch (err) {
      this.ended(abort.signal.aborted && this.stopped ? null : `unreachable (${failureText(err)})`);
      retryMs = this.backoff();
    } finally {
      this.abort = null;
    }
    if (this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect();
    }, retryMs);
    this.retry.unref();
  }

  /** One connection, to its end; resolves with the wait before the next. */
  private async session(abort: AbortController): Promise<number> {
    const res = await this.options.client.openStream(`/v1/config/stream?server=${this.options.client.serverId}`, abort, STREAM_CLIENT_LIMITS.connectTimeoutMs);
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel().catch(() => {});
      const unsupported = res.status === 404 && !(res.headers.get('content-type') ?? '').includes('json');
      this.ended(`the control plane answered ${res.status}`);
      if (unsupported || res.status === 405) return STREAM_CLIENT_LIMITS.unsupportedRetryMs;
      const after = Number(res.headers.get('retry-after'));
      return Math.max(this.backoff(), Number.isFinite(after) ? after * 1000 : 0);
    }
    this.state = 'live';
    this.since = this.now();
    this.opened++;
    this.failures = 0;
    if (this.lastError !== null) this.logger.info('config stream open again: publishes are pushed', { after: this.lastError });
    this.lastError = null;
    this.options.onLive(true);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let idle: NodeJS.Timeout | null = null;
    const watch = (): void => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => abort.abort(new DOMException('no heartbeat', 'TimeoutError')), this.idleMs);
      idle.unref();
    };
    watch();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        watch();
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          this.event(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
        if (buffer.length > STREAM_CLIENT_LIMITS.maxEventBytes) throw new Error(`an event longer than ${STREAM_CLIENT_LIMITS.maxEventBytes} bytes`);
      }
      this.ended('the control plane closed the stream');
    } catch (err) {
      const reason =
        abort.signal.reason instanceof DOMException && abort.signal.reason.message === 'no heartbeat' ? `no heartbeat for ${this.idleMs} ms` : failureText(err);
      this.ended(this.stopped ? null : reason);
      await reader.cancel().catch(() => {});
    } finally {
      if (idle) clearTimeout(idle);
    }
    return this.backoff();
  }

  private event(block: string): void {
    let name = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') name = value;
      else if (field === 'data') data = data ? `${data}\n${value}` : value;
    }
    if (name !== 'version') return;
    try {
      const v = JSON.parse(data) as { version?: unknown; etag?: unknown };
      if (typeof v.version === 'number' && Number.isSafeInteger(v.version) && typeof v.etag === 'string' && v.etag.length <= 64)
        this.options.onVersion(v.version, v.etag);
    } catch {
      // Not JSON: ignored (the poll still runs as the safety net).
    }
  }

  private ended(reason: string | null): void {
    const wasLive = this.state === 'live';
    this.state = 'down';
    this.since = null;
    if (reason !== null && reason !== this.lastError) this.logger.warn('config stream down; polling until it is back', { reason, retrying: true });
    if (reason !== null) this.lastError = reason;
    this.failures++;
    if (wasLive) this.options.onLive(false);
  }

  private backoff(): number {
    const base = Math.min(STREAM_CLIENT_LIMITS.maxRetryMs, STREAM_CLIENT_LIMITS.firstRetryMs * 2 ** Math.max(0, this.failures - 1));
    return base * (0.5 + 0.5 * this.random());
  }
}
