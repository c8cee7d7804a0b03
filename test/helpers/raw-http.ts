import { connect } from 'node:net';
import type { RequestObserver } from '../../src/http/observe.js';

export interface RawAnswer {
  /** 0 when the server closed the connection without answering. */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawRequest {
  method: string;
  /** The request target exactly as sent (no encoding applied). */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/**
 * One HTTP/1.1 request over its own socket, written byte for byte as given (fetch and
 * node:http refuse malformed targets, methods and header values), answer read until it is whole
 * or the server closes the connection.
 */
export function rawRequest(port: number, r: RawRequest, timeoutMs = 15_000): Promise<RawAnswer> {
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body);
  const lines = [`${r.method} ${r.target} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
  for (const [k, v] of Object.entries(r.headers ?? {})) lines.push(`${k}: ${v}`);
  if (body !== undefined) lines.push(`content-length: ${body.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${r.method} ${r.target.slice(0, 80)}`));
    }, timeoutMs);
    // Written, not ended: uWebSockets.js takes a half-close as the client going away, which
    // would abort any answer not made at once (a route awaiting PostgreSQL). `connection: close`
    // makes the server close once it has answered.
    socket.on('connect', () => socket.write(body ? Buffer.concat([head, body]) : head));
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      resolve(parse(Buffer.concat(chunks), r.method === 'HEAD'));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // Not every answer is followed by the server's close (uWS keeps a HEAD's connection open), so a whole answer ends the read.
      if (complete(Buffer.concat(chunks), r.method === 'HEAD')) {
        socket.destroy();
        finish();
      }
    });
    socket.on('error', () => {});
    socket.on('close', finish);
  });
}

/** Whether `raw` holds a whole answer: its head, and all of the body its head announces. */
function complete(raw: Buffer, head: boolean): boolean {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const text = raw.subarray(0, end).toString('latin1').toLowerCase();
  const status = Number(text.split(' ')[1]);
  if (head || status === 204 || status === 304) return true;
  const body = raw.subarray(end + 4);
  if (/\r\ntransfer-encoding:\s*chunked/.test(text)) return body.toString('latin1').endsWith('0\r\n\r\n');
  const length = /\r\ncontent-length:\s*(\d+)/.exec(text);
  return length !== null && body.length >= Number(length[1]);
}

function parse(raw: Buffer, head: boolean): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: Buffer.alloc(0) };
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // A repeated header is joined as HTTP allows, so a duplicate shows.
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.subarray(end + 4);
  if (head) body = Buffer.alloc(0);
  else if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * A client that sends a request's headers and the start of its body, then goes away: resolved
 * once the server parsed the headers (it answers `Expect: 100-continue` then, and the route
 * handler has run) and the socket is destroyed.
 */
export function abandonBody(port: number, path: string, headers = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n${headers}\r\n{"a":`);
    });
    socket.on('error', reject);
    socket.once('data', (d: Buffer) => {
      socket.destroy();
      if (d.toString('latin1').startsWith('HTTP/1.1 100 ')) resolve();
      else reject(new Error(`expected 100 Continue, got ${d.toString('latin1').slice(0, 200)}`));
    });
  });
}

/** An observer keeping the status of every finished request (499: the client went away first), with a wait for the n-th. */
export function finishedRequests(): { observe: RequestObserver; statuses: number[]; reach(n: number): Promise<number[]> } {
  const statuses: number[] = [];
  const waiting: { n: number; resolve: (s: number[]) => void }[] = [];
  return {
    statuses,
    observe: (r) => {
      statuses.push(r.status);
      for (const w of waiting.filter((x) => x.n <= statuses.length)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(statuses.slice(0, w.n));
      }
    },
    reach: (n) => (statuses.length >= n ? Promise.resolve(statuses.slice(0, n)) : new Promise((resolve) => waiting.push({ n, resolve }))),
  };
}
