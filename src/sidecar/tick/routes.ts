import { contentCodingRefusal, type Encoding } from '../../http/codec.js';
import { HttpError } from '../../http/errors.js';
import { CONTENT_ENCODING } from '../../http/header-key.js';
import { errorsInBodyOf } from '../../http/errors-in-body.js';
import type { Reply } from '../../http/reply.js';
import { failRaw, type HttpServer, type RawControl, type RawState } from '../../http/server.js';
import type { Peer } from '../../http/connections.js';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { failureOf, TickBatch } from './batch.js';
import { explainOf } from './explain.js';
import { groupBody } from './group.js';
import { TICK_MAX_BODY, type Credentials, type TickHandler } from './handler.js';
import { AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, sendGroup, sendTick, TICK_SITE, TICKS_SITE, X_BRAIN_TOKEN } from './send.js';
import { TickFailure, TICKS_MAX_BODY, type BatchItem } from './tick-array.js';

/**
 * Mounts POST /tick as a raw uWS route: the three headers it reads are taken straight from
 * uWS, and the reply is written without the generic router's request object and header maps.
 * Status codes, error shapes and their order are those of the generic route: 413 on a
 * declared or actual body over the limit, then 401, 415, 400 (see docs/sidecar.md).
 *
 * With the inline evaluator, the size, token and media type of a tick are checked as it
 * arrives (those refusals go out at once); the tick itself is answered in a batch with every
 * other tick of the same turn of the event loop (TickBatch). With workers, a tick is read in
 * place from uWS's chunk, without a copy, and handed to the pools at once.
 */
export function mountTick(server: HttpServer, ticks: TickHandler, maxBody = TICK_MAX_BODY): void {
  mountTickRoute(server, ticks, maxBody, TICK_SITE, (res, state, control, last, encoding, batch) => {
    if (batch !== null) {
      if (state.body === null) batch.add(res, state, control, last, encoding, state.explain);
      else batch.addWhole(res, state, control, wholeBody(state, last, maxBody, control), encoding, state.explain);
      return;
    }
    const started = ticks.clock();
    const out = ticks.answer(ticks.accept(wholeBody(state, last, maxBody, control), encoding), encoding, started, state.explain);
    if (out instanceof Promise) {
      out.then(
        (reply) => sendTick(res, state, reply, control),
        (err: unknown) => failRaw(res, state, err, control, TICK_SITE),
      );
    } else sendTick(res, state, out, control);
  });
}

/**
 * What a tick route does with a whole body whose size, token and media type passed: `last` is
 * its last chunk as uWS lent it (valid only during the call), `batch` the handler's batch when
 * the evaluator is inline. Called inside the route's guard: a throw is answered.
 */
type TickBody = (res: UwsResponse, state: TickCall, control: RawControl, last: ArrayBuffer, encoding: Encoding, batch: TickBatch | null) => void;

/**
 * The part the tick routes share: the credentials and headers read before the body, the body
 * collected chunk by chunk within maxBody, its media type checked, then `onBody`, every step
 * inside one guard (one try around the whole chunk, not one per step: it costs nothing on the
 * way through). `onBody` is one function per route, not per request.
 */
function mountTickRoute(server: HttpServer, ticks: TickHandler, maxBody: number, site: typeof TICK_SITE | typeof TICKS_SITE, onBody: TickBody): void {
  // The evaluator's mode is fixed for the handler's life.
  const batch = ticks.synchronous ? TickBatch.of(ticks) : null;
  const gated = ticks.gated;
  server.raw(site.method, site.path, (res, req, control, peer) => {
    const state = beginTick(res, req, control, peer, ticks, gated, maxBody, site);
    if (state === null) return;
    res.onData((ab, isLast) => {
      if (state.finished) return;
      try {
        if (!bodyChunk(state, ab, isLast, maxBody, control)) return;
        state.collecting = false;
        onBody(res, state, control, ab, ticks.encoding(state.size, state.contentType || undefined), batch);
      } catch (err) {
        failRaw(res, state, err, control, site);
      }
    });
  });
}

/**
 * Mounts POST /ticks: a batch of tick requests (a JSON or MessagePack array of at most
 * MAX_BATCH_TICKS) answered 200 with an array of replies in the same order, each the reply
 * /tick gives for the same tick sent alone, in turn; an element /tick would refuse gets
 * `{agent?, error: {code, message, details}}` in its place. Whole-body problems answer as
 * /tick does: 413 over the size limit or the element cap, then 401, 415, 400. The elements
 * are read by the fast readers and, inline, answered through the same TickBatch phases as
 * /tick (after any ticks queued before them); with workers they are handed to the pools in
 * order, at once.
 */
export function mountTicks(server: HttpServer, ticks: TickHandler, maxBody = TICKS_MAX_BODY): void {
  mountTickRoute(server, ticks, maxBody, TICKS_SITE, (res, state, control, last, encoding, batch) => {
    // Read at once into fresh requests: nothing keeps the body once this returns.
    const items = ticks.acceptBatch(wholeBody(state, last, maxBody, control), encoding);
    ticks.countBatch(items.length);
    if (batch !== null) {
      const body = batch.answerGroup(items, encoding, control.logger, state.explain);
      // Answering the ticks queued before may have corked other responses: cork this one again.
      sendGroup(res, state, body, encoding, control);
      return;
    }
    const started = ticks.clock();
    const explain = state.explain;
    const settle = (item: BatchItem): Promise<Reply | TickFailure> => {
      if (item instanceof TickFailure) return Promise.resolve(item);
      try {
        return Promise.resolve(ticks.answer(item, encoding, started, explain)).catch((err: unknown) => failureOf(err, item.snapshot.agent, control.logger));
      } catch (err) {
        return Promise.resolve(failureOf(err, item.snapshot.agent, control.logger));
      }
    };
    // Settled in one place, inside a guard: a throw from a promise continuation would be an
    // unhandled rejection, not an answer.
    const answer = (out: readonly (Reply | TickFailure)[] | null, err: unknown): void => {
      try {
        if (out === null) failRaw(res, state, err, control, TICKS_SITE);
        else sendGroup(res, state, bodyOf(out, encoding), encoding, control);
      } catch (thrown) {
        failRaw(res, state, thrown, control, TICKS_SITE);
      }
    };
    Promise.all(items.map(settle)).then(
      (out) => answer(out, null),
      (err: unknown) => answer(null, err),
    );
  });
}

/** The 200 body of a batch answered by the workers: the elements' replies (or failures) as one array, in order. */
function bodyOf(out: readonly (Reply | TickFailure)[], encoding: Encoding): Uint8Array {
  groupBody.begin(encoding, out.length);
  for (let k = 0; k < out.length; k++) {
    const item = out[k]!;
    if (item instanceof TickFailure) groupBody.failure(item);
    else groupBody.encoded((item as { body: Uint8Array }).body);
  }
  return groupBody.end();
}

/**
 * A tick route's request as read before its body (the headers it needs, and whether the client
 * went away), and its body as it arrives: one object per request, also the abort state and the
 * credentials.
 */
interface TickCall extends Credentials, RawState {
  readonly contentType: string;
  /** The declared Content-Length (at most the route's limit), or -1 when there is none. */
  readonly declared: number;
  /** Body bytes received so far. */
  size: number;
  /** The chunks before the last, copied one after another; null while the body came in one chunk. */
  body: Buffer | null;
  /** `?explain=1`: every reply carries `why`. */
  readonly explain: boolean;
  /** Set until the body is whole: a client gone meanwhile finishes the request at once (no last chunk will). */
  collecting: boolean;
}

/**
 * Takes one chunk of a tick route's body: a 413 (thrown, for the route's guard to answer) once
 * the body passes maxBody; a chunk that is not the last is copied at once (uWS reuses its
 * memory once the callback returns) into the body's one buffer, sized by Content-Length. True
 * when the chunk was the last: the body is whole.
 */
function bodyChunk(call: TickCall, chunk: ArrayBuffer, isLast: boolean, maxBody: number, control: RawControl): boolean {
  const at = call.size;
  call.size += chunk.byteLength;
  if (call.size > maxBody) throw tooLarge(maxBody);
  if (isLast) return true;
  // uWS may report an empty chunk before the body's bytes: nothing to keep.
  if (chunk.byteLength > 0) copyChunk(call, chunk, at, maxBody, control);
  return false;
}

/**
 * Copies a chunk to byte `at` of the call's body buffer. The buffer is made on the first
 * chunk, at the declared length (uWS delivers exactly that many bytes); without one (a
 * chunked upload) it starts at twice what came and doubles, never past maxBody. Its bytes are
 * taken from the server's body budget first (a 503 when spent): a client declaring 4 MiB and
 * sending a few bytes made the buffer whole.
 */
function copyChunk(call: TickCall, chunk: ArrayBuffer, at: number, maxBody: number, control: RawControl): void {
  let body = call.body;
  if (body === null || call.size > body.length) {
    const room = call.declared >= call.size ? call.declared : Math.min(maxBody, 2 * Math.max(call.size, body === null ? 0 : body.length));
    control.hold(call, room - (body === null ? 0 : body.length));
    const grown = Buffer.allocUnsafe(room);
    if (body !== null) body.copy(grown, 0, 0, at);
    call.body = body = grown;
  }
  body.set(new Uint8Array(chunk), at);
}

/**
 * The whole body, given its last chunk: a body in one chunk is that chunk in place (valid only
 * during the callback: read it at once), a longer one the call's buffer with the last chunk
 * copied in (one copy of every byte in all).
 */
function wholeBody(call: TickCall, last: ArrayBuffer, maxBody: number, control: RawControl): Buffer {
  if (call.body === null) return Buffer.from(last);
  copyChunk(call, last, call.size - last.byteLength, maxBody, control);
  return call.body.subarray(0, call.size);
}

/**
 * Reads what a tick route needs of the uWS request (uWS's request is gone once the handler
 * returns) and watches for the client going away; null when the request was refused already:
 * a declared body over `maxBody` (413), no valid token (401), or a compressed body (415,
 * contentCodingRefusal), all before a byte of the body is read, with the connection closed
 * behind the answer. One object per request: it is
 * also the abort state and the credentials. Without a token nothing of them is read; with
 * one, the forms are read in the gate's order up to the first present, so the usual
 * Authorization header costs one header read. The query string is read for `?errors=body`
 * (every failure then answered 200, see errors-in-body.ts) and `?explain=1` (explain.ts), and
 * handed to the gate only when no header carries the token.
 */
function beginTick(
  res: UwsResponse,
  req: UwsRequest,
  control: RawControl,
  peer: Peer,
  ticks: TickHandler,
  gated: boolean,
  maxBody: number,
  site: { method: string; path: string },
): TickCall | null {
  const authorization = gated ? req.getHeader(AUTHORIZATION) : '';
  const headerToken = gated && authorization === '' ? req.getHeader(X_BRAIN_TOKEN) : '';
  // Read once for `?errors=body`, `?explain=1` and the token form; without a query uWS answers
  // undefined, and errorsInBodyOf and explainOf look no further.
  const rawQuery = req.getQuery();
  const query = gated && authorization === '' && headerToken === '' ? (rawQuery ?? '') : '';
  const contentType = req.getHeader(CONTENT_TYPE);
  const declared = req.getHeader(CONTENT_LENGTH);
  const length = declared === '' ? -1 : Number(declared);
  const call: TickCall = {
    aborted: false,
    answered: false,
    finished: false,
    errorsInBody: errorsInBodyOf(rawQuery, contentType),
    contentType,
    authorization,
    headerToken,
    query,
    declared: Number.isSafeInteger(length) && length >= 0 && length <= maxBody ? length : -1,
    size: 0,
    body: null,
    explain: explainOf(rawQuery),
    peer,
    collecting: true,
  };
  res.onAborted(() => {
    call.aborted = true;
    // Its place in the connection caps is freed now: nothing else would end a request whose body never came.
    if (call.collecting && !call.finished) {
      call.finished = true;
      control.done(call);
    }
  });
  if (length > maxBody) {
    failRaw(res, call, tooLarge(maxBody), control, site, true);
    return null;
  }
  if (gated) {
    try {
      ticks.admit(call);
    } catch (err) {
      failRaw(res, call, err, control, site, true);
      return null;
    }
  }
  const coding = contentCodingRefusal(req.getHeader(CONTENT_ENCODING));
  if (coding !== null) {
    failRaw(res, call, coding, control, site, true);
    return null;
  }
  return call;
}

/** The 413 of a tick route. */
function tooLarge(maxBody: number): HttpError {
  return new HttpError('payload_too_large', `The request body exceeds ${maxBody} bytes.`);
}
