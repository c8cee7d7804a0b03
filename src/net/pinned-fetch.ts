import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { guardUrl, type Resolve } from './ssrf.js';

/** A response body larger than this is cut off (a model's streamed reply is far smaller). */
export const PINNED_FETCH_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A `fetch` for clients that take one (the `openai` package), for URLs a tenant chose: every
 * request goes through the SSRF guard and connects to the address it approved, never to a
 * second DNS answer. Redirects are not followed (a 3xx is returned as is).
 */
export function pinnedFetch(options: { allowPrivate: boolean; resolve?: Resolve }): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const verdict = await guardUrl(url, { allowPrivate: options.allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) });
    if (!verdict.ok) throw new TypeError(`refused outbound URL: ${verdict.reason}`);
    const addresses = verdict.addresses;
    const pinned: LookupFunction = (_host, opts, cb) => {
      if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    };
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body =
      init?.body === undefined || init.body === null
        ? undefined
        : typeof init.body === 'string'
          ? init.body
          : Buffer.from(await new Response(init.body).arrayBuffer());
    const isHttps = verdict.url.protocol === 'https:';
    return new Promise<Response>((resolve, reject) => {
      const req = (isHttps ? https : http).request(
        verdict.url,
        { method: init?.method ?? 'GET', headers, lookup: pinned, ...(init?.signal ? { signal: init.signal } : {}) },
        (res) => {
          // Runs in an event handler where nothing would catch a throw: the Response constructor
          // throws on a status outside 200-599 (a server answering 101 or 999) and on a body with
          // 204, 205 or 304, which would stop the process. Such an answer fails this call instead.
          try {
            resolve(responseOf(res));
          } catch (err) {
            res.destroy();
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }) as typeof fetch;
}

/** What `fetch` would give for `res`, its body cut off past PINNED_FETCH_MAX_BYTES; throws for a status no Response may hold. */
function responseOf(res: http.IncomingMessage): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`the server answered with status ${status}, not a final HTTP status (200-599)`);
  let size = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      cb(size > PINNED_FETCH_MAX_BYTES ? new Error(`response larger than ${PINNED_FETCH_MAX_BYTES} bytes`) : null, chunk);
    },
  });
  const h = new Headers();
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
  // Statuses whose answer has no body: whatever the server sent after the head is dropped.
  if (status === 204 || status === 205 || status === 304) {
    res.resume();
    return new Response(null, { status, headers: h });
  }
  res.on('error', (err) => counted.destroy(err));
  return new Response(Readable.toWeb(res.pipe(counted)) as ReadableStream<Uint8Array>, { status, headers: h });
}
