import { performance } from 'node:perf_hooks';
import type { TickRequest, TickResponse } from '../../../brain/index.js';
import { Encoder } from '@msgpack/msgpack';
import { JSON_TYPE, MSGPACK_TYPE, type Encoding } from '../../http/codec.js';
import { HttpError } from '../../http/errors.js';
import type { Reply } from '../../http/reply.js';
import { failRaw, type HttpServer, type RawControl, type RawState, type Request } from '../../http/server.js';
import { statusLine } from '../../http/write.js';
import type { Logger } from '../../log.js';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { TOKEN_HEADER, type BearerGate } from '../auth.js';
import type { DialogueWiring } from '../dialogue.js';
import type { Evaluator } from './evaluator.js';
import { LatencyHistogram } from './histogram.js';
import { readTicks, TickFailure, TICKS_MAX_BODY, type BatchItem } from './tick-array.js';
import { exactTick, tickEncoding, withoutBom } from './tick-exact.js';
import { appendTickJson, readTickJson, rewindTickJson, writeTickJson } from './tick-json.js';
import { readTickMsgpack, writeTickMsgpack } from './tick-msgpack.js';

export { decodeTick } from './tick-exact.js';

/** The only request headers /tick reads (for a /tick mounted on the generic router). */
export const TICK_HEADERS = ['content-type', 'content-length', 'authorization', TOKEN_HEADER] as const;

/** Default body limit of /tick: a full snapshot at every list cap fits well below it. */
export const TICK_MAX_BODY = 64 * 1024;
/** Upper edges of the /ticks batch-size classes: powers of two up to the batch cap (1,024 ticks). */
export const BATCH_SIZE_EDGES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] as const;

export interface TickCounters {
  /** Ticks answered 200. */
  ok: number;
  /** Ticks refused with a 4xx (auth, media type, malformed or invalid body). */
  rejected: number;
  /** Ticks the brain failed on (answered 500). */
  failed: number;
}

export interface TickHandlerOptions {
  gate?: BearerGate | null;
  /** The dialogue tier's wiring: its Say, when one is ready, is appended after the brain's intents. */
  dialogue?: DialogueWiring | null;
  /** Monotonic clock in milliseconds, for tick latency. */
  now?: () => number;
  /** Sees every valid tick before it is evaluated (telemetry's player tracking); must be cheap and not throw. */
  observe?: ((request: TickRequest) => void) | null;
}

// One encoder for the process: building one per call costs more than the work. It is used
// synchronously, so sharing it is safe.
const msgpackEncoder = new Encoder();

/**
 * The 200 reply to a tick. `lend`: the body may be a view over memory shared with the other
 * replies written since the last rewindTickJson(), to be sent before the next rewind.
 */
export function encodeTick(response: TickResponse, encoding: Encoding, lend = false): Reply {
  return encoding === 'json'
    ? { status: 200, headers: JSON_HEADERS, body: (lend ? appendTickJson(response) : null) ?? Buffer.from(writeTickJson(response)) }
    : { status: 200, headers: MSGPACK_HEADERS, body: writeTickMsgpack(response) ?? msgpackEncoder.encode(response) };
}

const JSON_HEADERS = { 'content-type': JSON_TYPE };
const MSGPACK_HEADERS = { 'content-type': MSGPACK_TYPE };
// Header names and values handed to uWS as bytes: a string is converted to UTF-8 (into a
// malloc'd buffer) on every call.
const CONTENT_TYPE = Buffer.from('content-type');
const CONTENT_LENGTH = Buffer.from('content-length');
const AUTHORIZATION = Buffer.from('authorization');
const X_BRAIN_TOKEN = Buffer.from(TOKEN_HEADER);
const JSON_TYPE_BYTES = Buffer.from(JSON_TYPE);
const MSGPACK_TYPE_BYTES = Buffer.from(MSGPACK_TYPE);

/** The token forms a tick route hands the gate ('' when absent or not read). */
export interface Credentials {
  readonly authorization: string;
  readonly headerToken: string;
  /** The raw query string. */
  readonly query: string;
}

/**
 * POST /tick, independent of the transport: it takes a Request and returns a Reply, so the
 * same handler runs under the uWS router and (for the benchmark baseline) under node:http.
 * Latency is measured from the handler's entry to the reply being encoded.
 */
export class TickHandler {
  readonly latency = new LatencyHistogram();
  readonly counters: TickCounters = { ok: 0, rejected: 0, failed: 0 };
  /** POST /ticks batches by size: index i counts batches of more than 2^(i-1) and at most 2^i ticks (see BATCH_SIZE_EDGES). */
  readonly batchSizes = new Float64Array(BATCH_SIZE_EDGES.length);
  /** Ticks carried by POST /ticks batches. */
  batchTicks = 0;
  private readonly evaluator: Evaluator;
  private readonly gate: BearerGate | null;
  private readonly dialogue: DialogueWiring | null;
  /** Workers must be told which ticks the dialogue tier may want a persona for. */
  private readonly flagPersonas: boolean;
  private readonly now: () => number;
  private readonly observe: ((request: TickRequest) => void) | null;

  constructor(evaluator: Evaluator, options: TickHandlerOptions = {}) {
    this.evaluator = evaluator;
    this.gate = options.gate ?? null;
    this.dialogue = options.dialogue ?? null;
    this.flagPersonas = this.dialogue !== null && evaluator.mode === 'workers';
    this.now = options.now ?? (() => performance.now());
    this.observe = options.observe ?? null;
  }

  /** The route handler for the generic router and the node:http baseline. */
  readonly handle = (req: Request): Reply | Promise<Reply> =>
    this.run(req.body, req.headers['content-type'], { authorization: req.headers.authorization ?? '', headerToken: req.headers[TOKEN_HEADER] ?? '', query: req.query });

  /** Counts a /ticks batch of `n` ticks by its power-of-two size class: a few integer operations per batch. */
  countBatch(n: number): void {
    const i = n <= 1 ? 0 : 32 - Math.clz32(n - 1);
    this.batchSizes[i < BATCH_SIZE_EDGES.length ? i : BATCH_SIZE_EDGES.length - 1]! += 1;
    this.batchTicks += n;
  }

  /** Whether a token is required (the routes read the credentials only then). */
  get gated(): boolean {
    return this.gate !== null;
  }

  /** Whether a dialogue tier adds lines to the replies. */
  get speaks(): boolean {
    return this.dialogue !== null;
  }

  /** Whether answers are computed on this thread, synchronously (the inline evaluator). */
  get synchronous(): boolean {
    return this.evaluator.mode === 'inline';
  }

  /** The handler's clock, for the `started` of answer(). */
  clock(): number {
    return this.now();
  }

  /**
   * One tick from its body and the two headers it reads: accept() then answer(). 4xx problems
   * throw an HttpError synchronously; a brain failure throws (inline) or rejects (workers) a
   * plain Error. The body may be a view over memory that is reused after this call returns:
   * it is only read synchronously.
   */
  run(body: Uint8Array, contentType: string | undefined, credentials: Credentials): Reply | Promise<Reply> {
    const started = this.now();
    const encoding = this.encoding(body.length, contentType, credentials);
    return this.answer(this.accept(body, encoding), encoding, started);
  }

  /** The token gate, then the body's encoding from its Content-Type (401, 415, 400 for an empty body). */
  encoding(bodyLength: number, contentType: string | undefined, credentials: Credentials): Encoding {
    try {
      this.gate?.check(credentials.authorization, credentials.headerToken, credentials.query);
      return tickEncoding(bodyLength, contentType);
    } catch (err) {
      this.counters.rejected++;
      throw err;
    }
  }

  /**
   * The tick request in a body, validated (400 naming the field), and seen by `observe`. The
   * body is read synchronously and nothing of it is kept: it may be reused after this returns.
   */
  accept(body: Uint8Array, encoding: Encoding): TickRequest {
    let request: TickRequest;
    try {
      if (encoding === 'json') {
        const text = withoutBom(body);
        request = readTickJson(text) ?? exactTick(text, encoding);
      } else request = readTickMsgpack(body) ?? exactTick(body, encoding);
    } catch (err) {
      if (err instanceof HttpError) this.counters.rejected++;
      else this.counters.failed++;
      throw err;
    }
    this.observe?.(request);
    return request;
  }

  /**
   * The elements of a POST /ticks body (readTicks), counted as /tick counts them and each valid
   * one seen by `observe`. A whole-body problem throws its HttpError.
   */
  acceptBatch(body: Uint8Array, encoding: Encoding): BatchItem[] {
    let items: BatchItem[];
    try {
      items = readTicks(body, encoding);
    } catch (err) {
      if (err instanceof HttpError) this.counters.rejected++;
      else this.counters.failed++;
      throw err;
    }
    const observe = this.observe;
    for (let k = 0; k < items.length; k++) {
      const item = items[k]!;
      if (item instanceof TickFailure) this.counters.rejected++;
      else observe?.(item);
    }
    return items;
  }

  /** The brain's answer to an accepted request, encoded: evaluate() then reply(). `started` is clock() when the tick arrived. */
  answer(request: TickRequest, encoding: Encoding, started: number): Reply | Promise<Reply> {
    const result = this.evaluate(request);
    if (result instanceof Promise) {
      return result.then(
        (response) => this.reply(request, response, encoding, started),
        (err: unknown) => {
          this.counters.failed++;
          throw err;
        },
      );
    }
    return this.reply(request, result, encoding, started);
  }

  /** The brain's response to an accepted request: synchronous inline, a promise with workers. */
  evaluate(request: TickRequest): TickResponse | Promise<TickResponse> {
    try {
      return this.flagPersonas ? this.evaluator.tick(request, this.dialogue!.needsPersona(request)) : this.evaluator.tick(request);
    } catch (err) {
      this.counters.failed++;
      throw err;
    }
  }

  /**
   * The reply to a tick from the brain's response: the dialogue tier's line added, encoded,
   * counted. `started` as for answer(), or null when the caller records the latency itself;
   * `lend` as for encodeTick.
   */
  reply(request: TickRequest, response: TickResponse, encoding: Encoding, started: number | null, lend = false): Reply {
    this.dialogue?.apply(request, response);
    const reply = encodeTick(response, encoding, lend);
    this.counters.ok++;
    if (started !== null) this.latency.record((this.now() - started) * 1000);
    return reply;
  }
}

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
  // The evaluator's mode is fixed for the handler's life.
  const batch = ticks.synchronous ? TickBatch.of(ticks) : null;
  const gated = ticks.gated;
  server.raw('POST', '/tick', (res, req, control) => {
    const state = beginTick(res, req, control, gated, maxBody, TICK_SITE);
    if (state === null) return;
    let chunks: Buffer[] | null = null;
    let size = 0;
    res.onData((ab, isLast) => {
      if (state.finished) return;
      // One try around the whole chunk, not one per step: the guard costs nothing on the way through.
      try {
        size += ab.byteLength;
        if (size > maxBody) {
          failRaw(res, state, tooLarge(maxBody), control, TICK_SITE);
          return;
        }
        if (!isLast) {
          // uWS reuses the chunk's memory after this callback: keep a copy.
          (chunks ??= []).push(Buffer.from(ab.slice(0)));
          return;
        }
        const encoding = ticks.encoding(size, state.contentType || undefined, state);
        if (batch !== null) {
          if (chunks === null) batch.add(res, state, control, ab, encoding);
          else batch.addWhole(res, state, control, Buffer.concat([...chunks, Buffer.from(ab)], size), encoding);
          return;
        }
        const started = ticks.clock();
        const body = chunks === null ? Buffer.from(ab) : Buffer.concat([...chunks, Buffer.from(ab)], size);
        const out = ticks.answer(ticks.accept(body, encoding), encoding, started);
        if (out instanceof Promise) {
          out.then(
            (reply) => sendTick(res, state, reply, control),
            (err: unknown) => failRaw(res, state, err, control, TICK_SITE),
          );
        } else sendTick(res, state, out, control);
      } catch (err) {
        failRaw(res, state, err, control, TICK_SITE);
      }
    });
  });
}

const TICK_SITE = { method: 'POST', path: '/tick' } as const;
const TICKS_SITE = { method: 'POST', path: '/ticks' } as const;

/** Writes a tick's reply unless its client went away, and finishes the request; a failed write is answered by the guard. */
function sendTick(res: UwsResponse, state: RawState, reply: Reply, control: RawControl): void {
  if (!state.aborted) {
    try {
      state.answered = true;
      res.cork(() => writeTick(res, reply, control.defaultHeaders));
    } catch (err) {
      failRaw(res, state, err, control, TICK_SITE);
      return;
    }
  }
  state.finished = true;
  control.done();
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
  const batch = ticks.synchronous ? TickBatch.of(ticks) : null;
  const gated = ticks.gated;
  server.raw('POST', '/ticks', (res, req, control) => {
    const state = beginTick(res, req, control, gated, maxBody, TICKS_SITE);
    if (state === null) return;
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((ab, isLast) => {
      if (state.finished) return;
      try {
        size += ab.byteLength;
        if (size > maxBody) {
          failRaw(res, state, tooLarge(maxBody), control, TICKS_SITE);
          return;
        }
        // uWS reuses the chunk's memory after this callback: keep a copy.
        chunks.push(Buffer.from(ab.slice(0)));
        if (!isLast) return;
        const encoding = ticks.encoding(size, state.contentType || undefined, state);
        const items = ticks.acceptBatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), encoding);
        ticks.countBatch(items.length);
        if (batch !== null) {
          const out = batch.answerGroup(items, encoding, control.logger);
          // Answering the ticks queued before may have corked other responses: cork this one again.
          sendGroup(res, state, out, encoding, control);
          return;
        }
        const started = ticks.clock();
        const settle = (item: BatchItem): Promise<Reply | TickFailure> => {
          if (item instanceof TickFailure) return Promise.resolve(item);
          try {
            return Promise.resolve(ticks.answer(item, encoding, started)).catch((err: unknown) => failureOf(err, item.snapshot.agent, control.logger));
          } catch (err) {
            return Promise.resolve(failureOf(err, item.snapshot.agent, control.logger));
          }
        };
        Promise.all(items.map(settle)).then(
          (out) => sendGroup(res, state, out, encoding, control),
          (err: unknown) => failRaw(res, state, err, control, TICKS_SITE),
        );
      } catch (err) {
        failRaw(res, state, err, control, TICKS_SITE);
      }
    });
  });
}

/** Writes a batch's replies as one array unless its client went away, and finishes the request; a failed write is answered by the guard. */
function sendGroup(res: UwsResponse, state: RawState, out: readonly (Reply | TickFailure)[], encoding: Encoding, control: RawControl): void {
  if (!state.aborted) {
    try {
      state.answered = true;
      res.cork(() => writeGroup(res, out, encoding, control.defaultHeaders));
    } catch (err) {
      failRaw(res, state, err, control, TICKS_SITE);
      return;
    }
  }
  state.finished = true;
  control.done();
}

/** A tick route's request as read before its body: the headers it needs, and whether the client went away. */
interface TickCall extends Credentials, RawState {
  readonly contentType: string;
}

/**
 * Reads what a tick route needs of the uWS request (uWS's request is gone once the handler
 * returns) and watches for the client going away; null when a declared body over `maxBody`
 * was answered 413 already. One object per request: it is also the abort state and the
 * credentials. Without a token nothing of them is read; with one, the forms are read in the
 * gate's order up to the first present, so the usual Authorization header costs one header
 * read and the query string is read only when no header carries the token.
 */
function beginTick(res: UwsResponse, req: UwsRequest, control: RawControl, gated: boolean, maxBody: number, site: { method: string; path: string }): TickCall | null {
  const authorization = gated ? req.getHeader(AUTHORIZATION) : '';
  const headerToken = gated && authorization === '' ? req.getHeader(X_BRAIN_TOKEN) : '';
  const query = gated && authorization === '' && headerToken === '' ? (req.getQuery() ?? '') : '';
  const call: TickCall = { aborted: false, answered: false, finished: false, contentType: req.getHeader(CONTENT_TYPE), authorization, headerToken, query };
  const declared = req.getHeader(CONTENT_LENGTH);
  res.onAborted(() => {
    call.aborted = true;
  });
  if (declared !== '' && Number(declared) > maxBody) {
    // The connection is kept on a 413 (uWS discards the rest of the body), so a client still
    // writing it reads the answer rather than failing with EPIPE.
    failRaw(res, call, tooLarge(maxBody), control, site);
    return null;
  }
  return call;
}

/** The 413 of a tick route. */
function tooLarge(maxBody: number): HttpError {
  return new HttpError('payload_too_large', `The request body exceeds ${maxBody} bytes.`);
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The 200 reply to a batch: its elements' replies (or failures) as one array, in order. */
function writeGroup(res: UwsResponse, out: readonly (Reply | TickFailure)[], encoding: Encoding, defaults: Readonly<Record<string, string>>): void {
  const parts: Uint8Array[] = [];
  const count = out.length;
  if (encoding === 'json') {
    parts.push(OPEN);
    for (let k = 0; k < count; k++) {
      if (k > 0) parts.push(COMMA);
      const item = out[k]!;
      parts.push(item instanceof TickFailure ? Buffer.from(JSON.stringify(item.toBody())) : (item as { body: Uint8Array }).body);
    }
    parts.push(CLOSE);
  } else {
    const head = count < 16 ? Buffer.from([0x90 + count]) : count < 0x10000 ? Buffer.from([0xdc, count >> 8, count & 0xff]) : Buffer.from([0xdd, count >>> 24, (count >> 16) & 0xff, (count >> 8) & 0xff, count & 0xff]);
    parts.push(head);
    for (let k = 0; k < count; k++) {
      const item = out[k]!;
      parts.push(item instanceof TickFailure ? msgpackEncoder.encode(item.toBody()) : (item as { body: Uint8Array }).body);
    }
  }
  for (const key in defaults) res.writeHeader(key, defaults[key]!);
  res.writeHeader(CONTENT_TYPE, encoding === 'json' ? JSON_TYPE_BYTES : MSGPACK_TYPE_BYTES);
  res.end(Buffer.concat(parts));
}

/** Bytes of tick bodies a batch copies into its shared buffer; a body that does not fit gets its own. */
const BATCH_BYTES = 1024 * 1024;

/**
 * Ticks waiting for the end of the event-loop turn, in arrival order (the order the brain sees
 * them in, as when each was answered at once). Their bodies are copied into one buffer (uWS
 * reuses a chunk's memory once its callback returns); then, for the whole batch, each is read
 * and answered, and only then is every reply sent. Doing the reading, the brain and the
 * writing for many ticks in a row measured 20-25% less CPU per tick than doing them for each
 * tick as it arrives, between the socket reads (bench/RESULTS.md). Kept in parallel arrays
 * reused from turn to turn.
 */
export class TickBatch {
  private count = 0;
  private scheduled = false;
  private readonly arena = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private used = 0;
  private readonly responses: UwsResponse[] = [];
  private readonly states: RawState[] = [];
  private readonly controls: RawControl[] = [];
  private readonly bodies: Buffer[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly encodings: Encoding[] = [];
  /** When the first tick of this batch arrived: every tick's latency is counted from it. */
  private began = 0;
  private readonly requests: (TickRequest | null)[] = [];
  private readonly decisions: (TickResponse | null)[] = [];
  private readonly replies: (Reply | null)[] = [];
  private readonly errors: unknown[] = [];
  /** Characters decided in this batch and not yet replied to (with a dialogue tier). */
  private readonly decided = new Set<number>();

  constructor(private readonly ticks: TickHandler) {}

  private static readonly byHandler = new WeakMap<TickHandler, TickBatch>();

  /** The one batch of a handler, shared by /tick and /ticks so that both keep arrival order. */
  static of(ticks: TickHandler): TickBatch {
    let batch = TickBatch.byHandler.get(ticks);
    if (batch === undefined) TickBatch.byHandler.set(ticks, (batch = new TickBatch(ticks)));
    return batch;
  }

  /** Queues a tick whose body is only valid during the caller's callback: it is copied. */
  add(res: UwsResponse, state: RawState, control: RawControl, body: ArrayBuffer, encoding: Encoding): void {
    const length = body.byteLength;
    if (this.used + length > BATCH_BYTES) {
      this.addWhole(res, state, control, Buffer.from(new Uint8Array(body)), encoding);
      return;
    }
    this.arena.set(new Uint8Array(body), this.used);
    this.queue(res, state, control, this.arena, this.used, this.used + length, encoding);
    this.used += length;
  }

  /** Queues a tick whose body the batch may keep as it is. */
  addWhole(res: UwsResponse, state: RawState, control: RawControl, body: Buffer, encoding: Encoding): void {
    this.queue(res, state, control, body, 0, body.length, encoding);
  }

  private queue(res: UwsResponse, state: RawState, control: RawControl, body: Buffer, start: number, end: number, encoding: Encoding): void {
    const k = this.count++;
    this.responses[k] = res;
    this.states[k] = state;
    this.controls[k] = control;
    this.bodies[k] = body;
    this.starts[k] = start;
    this.ends[k] = end;
    this.encodings[k] = encoding;
    if (!this.scheduled) {
      this.scheduled = true;
      this.began = this.ticks.clock();
      setImmediate(this.flush);
    }
  }

  /** The brain's decision for tick k (or its error). */
  private decide(k: number): void {
    const request = this.requests[k]!;
    this.decisions[k] = null;
    if (request === null) return;
    try {
      this.decisions[k] = this.ticks.evaluate(request) as TickResponse;
    } catch (err) {
      this.errors[k] = err;
    }
  }

  /** Sends tick k's reply or error unless its client went away, and finishes the request. */
  private send(k: number): void {
    const res = this.responses[k]!;
    const state = this.states[k]!;
    const control = this.controls[k]!;
    const reply = this.replies[k]!;
    const err = this.errors[k];
    this.replies[k] = null;
    this.errors[k] = null;
    // Whatever happens to one reply, the others are still sent and every request finishes.
    if (reply === null) failRaw(res, state, err, control, TICK_SITE);
    else sendTick(res, state, reply, control);
  }

  /** Turns tick k's decision into its reply (or its error). */
  private encode(k: number): void {
    const decision = this.decisions[k]!;
    this.replies[k] = null;
    if (decision !== null) {
      try {
        this.replies[k] = this.ticks.reply(this.requests[k]!, decision, this.encodings[k]!, null, true);
      } catch (err) {
        this.errors[k] = err;
      }
    }
    this.requests[k] = null;
    this.decisions[k] = null;
  }

  private readonly flush = (): void => {
    const count = this.count;
    // One guard around the whole batch (a timer callback: a throw would end the process): a
    // failure outside the per-tick catches answers every tick not yet finished.
    try {
      this.run();
    } catch (err) {
      for (let k = 0; k < count; k++) {
        const state = this.states[k]!;
        if (!state.finished) failRaw(this.responses[k]!, state, err, this.controls[k]!, TICK_SITE);
        this.requests[k] = this.decisions[k] = this.replies[k] = this.errors[k] = null;
        this.bodies[k] = this.arena;
      }
    }
  };

  private run(): void {
    this.scheduled = false;
    const count = this.count;
    this.count = 0;
    this.used = 0;
    // The previous batch's replies were all sent when its flush ended.
    rewindTickJson();
    const ticks = this.ticks;
    for (let k = 0; k < count; k++) {
      try {
        this.requests[k] = ticks.accept(this.bodies[k]!.subarray(this.starts[k], this.ends[k]), this.encodings[k]!);
        this.errors[k] = null;
      } catch (err) {
        this.requests[k] = null;
        this.errors[k] = err;
      }
      this.bodies[k] = this.arena;
    }
    this.phases(count);
    // One clock read for the batch: its ticks were all answered by now, none arrived before `began`.
    const latencyUs = (ticks.clock() - this.began) * 1000;
    for (let k = 0; k < count; k++) if (this.replies[k] !== null) ticks.latency.record(latencyUs);
    for (let k = 0; k < count; k++) this.send(k);
  }

  /** Decides and encodes ticks 0..count-1 (their requests read, or null with their error). */
  private phases(count: number): void {
    // Each phase runs over the whole batch while its code and data are warm. The dialogue
    // tier (when there is one) reads a character's persona as the brain left it after that
    // character's tick, so a character's reply is made before its next tick in the batch.
    if (this.ticks.speaks) {
      const decided = this.decided;
      let encoded = 0;
      for (let k = 0; k < count; k++) {
        const request = this.requests[k];
        if (request) {
          const agent = request.snapshot.agent;
          if (decided.has(agent)) {
            for (; encoded < k; encoded++) this.encode(encoded);
            decided.clear();
          }
          decided.add(agent);
        }
        this.decide(k);
      }
      for (; encoded < count; encoded++) this.encode(encoded);
      decided.clear();
    } else {
      for (let k = 0; k < count; k++) this.decide(k);
      for (let k = 0; k < count; k++) this.encode(k);
    }
  }

  /**
   * The replies to the elements of one POST /ticks body, in order, as if each had been sent to
   * /tick in turn: ticks queued before it are answered first (arrival order), then its own go
   * through the same phases. A reply's body may be a view that the next batch overwrites: the
   * caller sends (or copies) them before returning to the event loop.
   */
  answerGroup(items: readonly BatchItem[], encoding: Encoding, logger: Logger): (Reply | TickFailure)[] {
    if (this.scheduled) this.flush();
    rewindTickJson();
    const ticks = this.ticks;
    const started = ticks.clock();
    const count = items.length;
    for (let k = 0; k < count; k++) {
      const item = items[k]!;
      this.requests[k] = item instanceof TickFailure ? null : item;
      this.errors[k] = null;
      this.encodings[k] = encoding;
    }
    this.phases(count);
    const latencyUs = (ticks.clock() - started) * 1000;
    const out: (Reply | TickFailure)[] = new Array<Reply | TickFailure>(count);
    for (let k = 0; k < count; k++) {
      const item = items[k]!;
      const reply = this.replies[k];
      if (reply) {
        ticks.latency.record(latencyUs);
        out[k] = reply;
      } else out[k] = item instanceof TickFailure ? item : failureOf(this.errors[k], item.snapshot.agent, logger);
      this.replies[k] = null;
      this.errors[k] = null;
    }
    return out;
  }
}

/** The element failure for a tick the brain (or its reply) failed on: logged, answered `internal`. */
export function failureOf(err: unknown, agent: number, logger: Logger): TickFailure {
  if (err instanceof HttpError) return new TickFailure(err, agent);
  logger.error('tick failed', { path: '/ticks', agent, error: err instanceof Error ? err.stack ?? err.message : String(err) });
  return new TickFailure(new HttpError('internal'), agent);
}

function writeTick(res: UwsResponse, reply: Reply, defaults: Readonly<Record<string, string>>): void {
  if ('stream' in reply) throw new Error('a tick reply is never a stream');
  if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
  for (const key in defaults) res.writeHeader(key, defaults[key]!);
  if (reply.headers === JSON_HEADERS) res.writeHeader(CONTENT_TYPE, JSON_TYPE_BYTES);
  else if (reply.headers === MSGPACK_HEADERS) res.writeHeader(CONTENT_TYPE, MSGPACK_TYPE_BYTES);
  else if (reply.headers) for (const key in reply.headers) res.writeHeader(key, reply.headers[key]!);
  res.end(reply.body ?? '');
}
