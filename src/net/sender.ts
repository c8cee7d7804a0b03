import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { storableText } from '../http/validate.js';

/**
 * The one HTTP exchange of an outbound call (a webhook delivery, a video callback), made to
 * the addresses the SSRF guard approved. Injectable so a dispatcher can be tested or
 * benchmarked without it.
 */
export type Send = (request: SendRequest) => Promise<SendOutcome>;

export interface SendRequest {
  url: URL;
  /** The addresses the SSRF guard approved (at least one); the connection goes to these and nowhere else. */
  addresses: { address: string; family: 4 | 6 }[];
  /** Request headers; `host` and `content-length` are the sender's (from the URL and the body), any given are replaced. */
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the exchange (the dispatcher stopping); the outcome is then an error. */
  signal?: AbortSignal;
}

export type SendOutcome =
  | { kind: 'response'; status: number; retryAfter: string | null; excerpt: string; durationMs: number }
  | { kind: 'error'; error: string; durationMs: number };

/** The first this many bytes of a receiver's answer are kept (the delivery log shows them); the rest is drained unread. */
export const EXCERPT_BYTES = 4096;
/** More response body than this and the connection is dropped instead of drained for reuse. */
const DRAIN_LIMIT = 64 * 1024;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const PACKAGE_VERSION = packageVersion();

/**
 * The requests in flight under each abort signal, so a signal carries one listener however many
 * sends share it (a dispatcher's do): a listener added and removed per request cost more than
 * the rest of the request's bookkeeping.
 */
const bySignal = new WeakMap<AbortSignal, Set<http.ClientRequest>>();

function track(signal: AbortSignal, request: http.ClientRequest): () => void {
  let open = bySignal.get(signal);
  if (!open) {
    const set = new Set<http.ClientRequest>();
    open = set;
    bySignal.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const r of set) r.destroy(new Error('aborted'));
        set.clear();
      },
      { once: true },
    );
  }
  open.add(request);
  return () => open.delete(request);
}

/**
 * The request's headers as node:http's flat [name, value, …] list: stored as given (each name and
 * value still validated) rather than set one by one into a header map and written out from it,
 * which cost about as much as the rest of building the request. With a list node:http adds no
 * Host header of its own: it is the URL's host (with a port other than the scheme's, IPv6 in
 * brackets), as node:http would write it. URLs with credentials are refused by the SSRF guard
 * before any send; should one reach here, its Authorization header is what node:http would add.
 */
function headerList(url: URL, given: Record<string, string>, body: string): string[] {
  const list = ['host', url.host];
  for (const name in given) {
    const lower = name.toLowerCase();
    if (lower !== 'host' && lower !== 'content-length') list.push(name, given[name]!);
  }
  list.push('content-length', String(Buffer.byteLength(body)));
  if (url.username || url.password) {
    list.push('authorization', `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`);
  }
  return list;
}

/**
 * Sends over keep-alive agents (one TCP/TLS connection serves many deliveries to the same
 * receiver) with the host's DNS lookup replaced by the pinned address. Redirects are never
 * followed: node:http does not follow them, and a 3xx counts as a failure.
 */
export function createSender(options: { maxSockets?: number; /** Extra trusted CA certificates (PEM), added to Node's defaults. */ ca?: string[] } = {}): {
  send: Send;
  close(): void;
} {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? Infinity, maxFreeSockets: 256, scheduling: 'lifo' as const };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent({ ...agentOptions, ...(options.ca ? { ca: [...tls.rootCertificates, ...options.ca] } : {}) });

  const send: Send = (req) =>
    new Promise((resolve) => {
      if (req.signal?.aborted) return resolve({ kind: 'error', error: 'aborted', durationMs: 0 });
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let settled = false;
      let timedOut = false;
      let untrack: (() => void) | undefined;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        untrack?.();
        resolve(outcome);
      };
      const pinned: LookupFunction = (_host, opts, cb) => {
        const { address, family } = req.addresses[0]!;
        if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, req.addresses);
        else cb(null, address, family);
      };
      const url = req.url;
      const isHttps = url.protocol === 'https:';
      const r = (isHttps ? https : http).request(
        {
          protocol: url.protocol,
          // What node:http takes from a URL: the host name without IPv6 brackets, the port if given, path and query.
          hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
          port: url.port === '' ? undefined : Number(url.port),
          path: url.pathname + url.search,
          method: 'POST',
          agent: isHttps ? httpsAgent : httpAgent,
          lookup: pinned,
          headers: headerList(url, req.headers, req.body),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          let total = 0;
          res.on('data', (chunk: Buffer) => {
            total += chunk.length;
            if (kept < EXCERPT_BYTES) {
              const part = chunk.subarray(0, EXCERPT_BYTES - kept);
              chunks.push(part);
              kept += part.length;
            }
            if (total > DRAIN_LIMIT) res.destroy();
          });
          const done = () =>
            finish(
              timedOut
                ? { kind: 'error', error: `timed out after ${req.timeoutMs} ms`, durationMs: elapsed() }
                : {
                    kind: 'response',
                    status: res.statusCode ?? 0,
                    retryAfter: typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null,
                    // Kept in the delivery log: the receiver's bytes made storable (PostgreSQL refuses a NUL in text).
                    excerpt: storableText(Buffer.concat(chunks, kept).toString('utf8')),
                    durationMs: elapsed(),
                  },
            );
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        timedOut = true;
        r.destroy(new Error(`timed out after ${req.timeoutMs} ms`));
      }, req.timeoutMs);
      r.on('error', (err: NodeJS.ErrnoException) =>
        finish({ kind: 'error', error: err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message, durationMs: elapsed() }),
      );
      if (req.signal) untrack = track(req.signal, r);
      r.end(req.body);
    });

  return {
    send,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
