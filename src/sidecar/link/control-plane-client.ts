import { randomBytes } from 'node:crypto';
import { isLoopbackHost } from '../../http/loopback.js';
import { signRequest } from '../../signing/request.js';
import { PACKAGE_VERSION } from '../../net/sender.js';

/** Sent on every request, so the control plane can show which sidecar version each server runs. */
export const SIDECAR_USER_AGENT = `brainstem-sidecar/${PACKAGE_VERSION}`;

/** A skew below this is left alone: the server's window is ±300 s and Date has 1 s resolution. */
export const SKEW_ADOPT_MS = 30_000;

export interface ControlPlaneClientOptions {
  /** Control-plane origin, e.g. `http://127.0.0.1:8080` (a trailing slash is ignored). */
  url: string;
  serverId: string;
  /** The server key `bsk_…`: bearer and HMAC key. */
  key: string;
  /** Wall clock in ms (Date.now). */
  now?: () => number;
  fetch?: typeof fetch;
  /** Admit an http:// control plane that is not on loopback (`--insecure-http`). */
  insecureHttp?: boolean;
}

export interface ControlPlaneReply {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The sidecar's signed HTTP client for the control plane (spec 001 §5), shared by the config
 * pull and the telemetry push.
 *
 * Every request target carries a random `nonce` query parameter: the server refuses a
 * signature it has seen within its window as a replay, and two identical pulls (or a resent
 * report) inside one second would otherwise sign to the same value.
 *
 * Clock skew: when a request is answered 401 and the response's `Date` header is more than
 * 30 s away from our clock, the difference is adopted as an offset for every later
 * signature and the request is retried once. A 401 with no such skew is returned as is.
 */
export class ControlPlaneClient {
  readonly url: string;
  readonly serverId: string;
  private readonly key: string;
  private readonly now: () => number;
  private readonly fetch: typeof fetch;
  /** Added to our clock when signing: server time minus ours, as last observed on a 401. */
  private offsetMs = 0;

  constructor(options: ControlPlaneClientOptions) {
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new Error(`the control-plane URL is not a URL: "${options.url}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the control-plane URL must be http:// or https://, got "${options.url}"`);
    if (!options.key) throw new Error('the server key must not be empty');
    if (!/^[1-9]\d{0,14}$/.test(options.serverId)) throw new Error(`the server id must be a positive integer, got "${options.serverId}"`);
    // The server key is both the bearer credential and the HMAC key: it never crosses a network unencrypted.
    if (url.protocol === 'http:' && !options.insecureHttp && !isLoopbackHost(url.hostname)) {
      throw new Error(
        `refusing the plain-HTTP control plane ${url.origin}: the server key would cross the network unencrypted; use https://, or --insecure-http (SERVICE_INSECURE_HTTP=1) on a network you trust`,
      );
    }
    this.url = url.origin + url.pathname.replace(/\/+$/, '');
    this.serverId = options.serverId;
    this.key = options.key;
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? fetch;
  }

  /** The clock offset in use (ms); 0 until a skewed 401 was seen. */
  get skewMs(): number {
    return this.offsetMs;
  }

  /**
   * One signed request. `path` has no nonce; one is appended. Network failures and the
   * timeout reject; every HTTP status resolves.
   */
  async request(
    method: 'GET' | 'POST',
    path: string,
    options: { body?: string; headers?: Record<string, string>; timeoutMs: number },
  ): Promise<ControlPlaneReply> {
    const first = await this.send(method, path, options);
    if (first.status !== 401) return first;
    const date = Date.parse(first.headers.get('date') ?? '');
    if (Number.isNaN(date)) return first;
    const skew = date - this.now();
    if (Math.abs(skew - this.offsetMs) <= SKEW_ADOPT_MS) return first;
    this.offsetMs = skew;
    return this.send(method, path, options);
  }

  /**
   * Opens a signed GET whose body is read as it comes (the config push stream): resolves with
   * the response once its headers arrived (within `timeoutMs`), its body still open; `abort`
   * ends it. A 401 with a skewed Date is retried once after adopting the offset, as request() does.
   */
  async openStream(path: string, abort: AbortController, timeoutMs: number): Promise<Response> {
    const first = await this.openOnce(path, abort, timeoutMs);
    if (first.status !== 401) return first;
    const date = Date.parse(first.headers.get('date') ?? '');
    if (Number.isNaN(date) || Math.abs(date - this.now() - this.offsetMs) <= SKEW_ADOPT_MS) return first;
    await first.body?.cancel().catch(() => {});
    this.offsetMs = date - this.now();
    return this.openOnce(path, abort, timeoutMs);
  }

  private async openOnce(path: string, abort: AbortController, timeoutMs: number): Promise<Response> {
    const target = `${path}${path.includes('?') ? '&' : '?'}nonce=${randomBytes(8).toString('hex')}`;
    const signed = signRequest(this.key, { method: 'GET', target, body: '' }, this.now() + this.offsetMs);
    const timer = setTimeout(() => abort.abort(new DOMException('the control plane did not answer in time', 'TimeoutError')), timeoutMs);
    try {
      return await this.fetch(this.url + target, {
        method: 'GET',
        headers: { ...signed, 'user-agent': SIDECAR_USER_AGENT, accept: 'text/event-stream' },
        signal: abort.signal,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(
    method: string,
    path: string,
    options: { body?: string; headers?: Record<string, string>; timeoutMs: number },
  ): Promise<ControlPlaneReply> {
    const target = `${path}${path.includes('?') ? '&' : '?'}nonce=${randomBytes(8).toString('hex')}`;
    const signed = signRequest(this.key, { method, target, body: options.body ?? '' }, this.now() + this.offsetMs);
    const headers: Record<string, string> = { ...options.headers, ...signed, 'user-agent': SIDECAR_USER_AGENT };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    // A ref'd timer, unlike AbortSignal.timeout's: fetch can lose its socket without settling
    // (seen when a peer accepts and drops the connection at once), and nothing else may keep
    // the process alive during the start-up pull.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException('the control plane did not answer in time', 'TimeoutError')), options.timeoutMs);
    try {
      const res = await this.fetch(this.url + target, { method, headers, body: options.body, signal: abort.signal });
      return { status: res.status, headers: res.headers, text: await res.text() };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The `error.code` of an error body; undefined when the body is not one. */
export function errorCode(reply: ControlPlaneReply): string | undefined {
  try {
    const code = (JSON.parse(reply.text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** The `error.message` of an error body, or the start of whatever came back. */
export function errorText(reply: ControlPlaneReply): string {
  try {
    const body = JSON.parse(reply.text) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return `${reply.status} ${body.error.code ?? ''}: ${body.error.message}`.replace(' :', ':');
  } catch {
    // not JSON: fall through
  }
  return `${reply.status} ${reply.text.slice(0, 120)}`.trim();
}

/** A network failure or timeout, as one short phrase. */
export function failureText(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return String(err);
}
