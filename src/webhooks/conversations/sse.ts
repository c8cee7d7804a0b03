import { Readable } from 'node:stream';

/** A comment line is sent this often on an idle stream, so proxies keep it and a dead client is noticed. */
export const SSE_HEARTBEAT_MS = 15_000;
/**
 * Bytes a stream may hold for a client that does not read (behind the socket's own buffer,
 * which uWS drains with back-pressure); past it the client is too slow and the stream is cut.
 * The widget then reconnects and reads what it missed from the transcript.
 */
export const SSE_BUFFER_MAX_BYTES = 256 * 1024;

export class SlowClient extends Error {
  constructor() {
    super(`the client read too slowly (more than ${SSE_BUFFER_MAX_BYTES} bytes waiting)`);
    this.name = 'SlowClient';
  }
}

/**
 * One server-sent-events stream: the Readable a route replies with (the HTTP layer writes it
 * corked, pausing it while uWS reports back-pressure and resuming on writable), plus
 * heartbeats and a bound on what waits for a slow reader. `gone()` tells whether the client
 * went away (checked with each heartbeat) so a stream nobody reads is closed.
 */
export class SseStream {
  readonly readable: Readable;
  private timer: NodeJS.Timeout | null;
  private closedFlag = false;
  private readonly listeners: (() => void)[] = [];

  constructor(gone: () => boolean, heartbeatMs = SSE_HEARTBEAT_MS) {
    this.readable = new Readable({ read() {} });
    this.readable.on('close', () => this.closed());
    // 'error' is handled by the HTTP layer's writer; this one keeps a destroy(err) before it attaches from being unhandled.
    this.readable.on('error', () => {});
    this.timer = setInterval(() => {
      if (gone()) this.readable.destroy();
      else this.write(': ping\n\n');
    }, heartbeatMs);
    this.timer.unref();
    // Tells EventSource-like clients how long to wait before reconnecting.
    this.write('retry: 2000\n\n');
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** Called once when the stream ends for any reason. */
  onClose(fn: () => void): void {
    if (this.closedFlag) fn();
    else this.listeners.push(fn);
  }

  /** Sends one event; false when the stream is closed (or was cut for a slow reader). */
  send(event: string, data: unknown, id?: number): boolean {
    return this.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(frame: string): boolean {
    if (this.closedFlag || this.readable.destroyed) return false;
    if (this.readable.readableLength > SSE_BUFFER_MAX_BYTES) {
      this.readable.destroy(new SlowClient());
      return false;
    }
    this.readable.push(frame);
    return true;
  }

  /** Ends the stream after what was sent. */
  end(): void {
    if (this.closedFlag || this.readable.destroyed) return;
    this.readable.push(null);
    this.closed();
  }

  private closed(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const fn of this.listeners.splice(0)) fn();
  }
}
