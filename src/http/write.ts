import { encode as msgpackEncode } from '@msgpack/msgpack';
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import { JSON_TYPE, MSGPACK_TYPE, type Encoding } from './codec.js';
import type { HttpError } from './errors.js';
import type { Reply } from './reply.js';
import type { Logger } from '../log.js';
import { headerKey } from './header-key.js';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  202: '202 Accepted',
  204: '204 No Content',
  206: '206 Partial Content',
  301: '301 Moved Permanently',
  302: '302 Found',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  410: '410 Gone',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  416: '416 Range Not Satisfiable',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? String(status);
}

interface Aborted {
  readonly aborted: boolean;
  /** A HEAD request gets the status and headers of the GET, never a body. */
  readonly method?: string;
  /** `?errors=body`: the error goes out 200, its body in this encoding (see errors-in-body.ts). */
  readonly errorsInBody?: Encoding | null;
}

function writeHeaders(res: UwsResponse, status: number, headers: Record<string, string> | undefined, defaults: Record<string, string>): void {
  res.writeStatus(statusLine(status));
  for (const key in defaults) res.writeHeader(key, defaults[key]!);
  if (headers) for (const key in headers) res.writeHeader(key, headers[key]!);
}

/**
 * Ends a HEAD answer: the GET's length as a header of ours, no body. uWS's own
 * `endWithoutBody(length)` (uWebSockets.js 20.30) leaves the response waiting for that many body
 * bytes: the connection then never timed out (one HEAD held a socket open for good) and a request
 * pipelined after it closed the connection with neither answer. So the connection is kept
 * alive even where a refusal would close it: a HEAD has no body left to refuse.
 */
function endHead(res: UwsResponse, length: number | undefined): void {
  if (length !== undefined) res.writeHeader('content-length', String(length));
  res.endWithoutBody();
}

/**
 * A reply's status line and headers: a prepared reply's in one call (uWS writes the status it
 * is given, then CRLF, so the block carries the header lines between), the same bytes
 * writeHeaders writes; any other reply's header by header.
 */
function writeHead(res: UwsResponse, reply: Reply, defaults: Record<string, string>): void {
  const head = 'prepared' in reply ? reply.prepared : undefined;
  if (head === undefined) return writeHeaders(res, reply.status, reply.headers, defaults);
  if (head.defaults !== defaults) {
    let block = statusLine(reply.status);
    for (const key in defaults) block += `\r\n${key}: ${defaults[key]!}`;
    for (const key in reply.headers) block += `\r\n${key}: ${reply.headers[key]!}`;
    head.block = headerKey(block);
    head.defaults = defaults;
  }
  res.writeStatus(head.block);
}

/** Writes a reply; must run inside the uWS callback or a cork. Calls done once the response is finished. */
export function writeReply(res: UwsResponse, state: Aborted, reply: Reply, defaults: Record<string, string>, logger: Logger, done: () => void): void {
  if (state.aborted) {
    done();
    return;
  }
  if (state.method === 'HEAD') {
    writeHead(res, reply, defaults);
    if ('stream' in reply) {
      reply.stream.destroy();
      endHead(res, reply.length);
    } else if (reply.status === 304 || reply.status === 204) res.endWithoutBody();
    else endHead(res, Buffer.byteLength(reply.body ?? ''));
    done();
    return;
  }
  if ('stream' in reply) {
    writeStream(res, state, reply, defaults, logger, done);
    return;
  }
  writeHead(res, reply, defaults);
  // No Content-Length: a 204 must not have one, and a 304's may only repeat the 200's (a
  // cache refreshing its headers from a 304 would store 0). uWS frames both by their status.
  if (reply.status === 304 || reply.status === 204) res.endWithoutBody();
  else res.end(reply.body ?? '');
  done();
}

export function writeError(res: UwsResponse, state: Aborted, err: HttpError, defaults: Record<string, string>, options: { close?: boolean }): void {
  if (state.aborted) return;
  const inBody = state.errorsInBody ?? null;
  if (inBody === 'msgpack') {
    // Its own headers (Retry-After, WWW-Authenticate) still go out: a client that reads them may.
    writeHeaders(res, 200, { ...err.headers, 'content-type': MSGPACK_TYPE }, defaults);
    const packed = msgpackEncode(err.toBody());
    if (state.method === 'HEAD') endHead(res, packed.byteLength);
    else res.end(packed, options.close ?? false);
    return;
  }
  writeHeaders(res, inBody === null ? err.status : 200, { 'content-type': JSON_TYPE, ...err.headers }, defaults);
  const body = JSON.stringify(err.toBody());
  if (state.method === 'HEAD') endHead(res, Buffer.byteLength(body));
  else res.end(body, options.close ?? false);
}

/**
 * Streams a body with uWS back-pressure: with a known length through tryEnd (so uWS sends
 * Content-Length), otherwise chunked through write.
 */
function writeStream(
  res: UwsResponse,
  state: Aborted,
  reply: Extract<Reply, { stream: unknown }>,
  defaults: Record<string, string>,
  logger: Logger,
  done: () => void,
): void {
  const { stream, length } = reply;
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    stream.destroy();
    done();
  };
  writeHeaders(res, reply.status, reply.headers, defaults);
  if (length === 0) {
    res.end();
    finish();
    return;
  }
  // Every callback below writes to the uWS response from outside a uWS callback; a throw from
  // one (a response gone meanwhile) would end the process, so each is guarded by `broken`.
  const broken = (err: unknown): void => {
    if (!state.aborted && !finished) {
      logger.error('response stream failed', { error: err instanceof Error ? err.message : String(err) });
      try {
        res.cork(() => res.close());
      } catch {
        // already released: nothing left to close
      }
    }
    finish();
  };
  stream.on('error', broken);
  stream.on('close', () => {
    if (state.aborted) finish();
  });
  if (length === undefined) pipeChunked(res, state, stream, broken, finish);
  else pipeSized(res, state, stream, length, broken, finish, () => finished);
}

type StreamBody = Extract<Reply, { stream: unknown }>['stream'];

/** A body of unknown length, written chunk by chunk (chunked encoding), pausing the stream while uWS's buffer is full. */
function pipeChunked(res: UwsResponse, state: Aborted, stream: StreamBody, broken: (err: unknown) => void, finish: () => void): void {
  stream.on('data', (chunk: Buffer) => {
    if (state.aborted) return finish();
    try {
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      if (!ok) {
        stream.pause();
        res.onWritable(() => {
          stream.resume();
          return true;
        });
      }
    } catch (err) {
      broken(err);
    }
  });
  stream.on('end', () => {
    try {
      if (!state.aborted) res.cork(() => res.end());
    } catch (err) {
      broken(err);
    }
    finish();
  });
}

/**
 * A body of known length through tryEnd (uWS sends Content-Length), resending the unsent part
 * of a chunk when writable; a stream that ends short drops the connection.
 */
function pipeSized(
  res: UwsResponse,
  state: Aborted,
  stream: StreamBody,
  length: number,
  broken: (err: unknown) => void,
  finish: () => void,
  finished: () => boolean,
): void {
  stream.on('data', (chunk: Buffer) => {
    if (state.aborted) return finish();
    try {
      const offsetBefore = res.getWriteOffset();
      let ok = false;
      let complete = false;
      res.cork(() => {
        [ok, complete] = res.tryEnd(chunk, length);
      });
      if (complete) return finish();
      if (!ok) {
        stream.pause();
        res.onWritable((offset) => {
          try {
            const [retryOk, retryDone] = res.tryEnd(chunk.subarray(offset - offsetBefore), length);
            if (retryDone) finish();
            else if (retryOk) stream.resume();
            return retryOk;
          } catch (err) {
            broken(err);
            return true;
          }
        });
      }
    } catch (err) {
      broken(err);
    }
  });
  stream.on('end', () => {
    // A stream shorter than its declared length cannot be answered honestly: drop the connection.
    if (!finished() && !state.aborted) broken(new Error(`the stream ended before its declared ${length} bytes`));
    finish();
  });
}
