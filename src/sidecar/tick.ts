import { performance } from 'node:perf_hooks';
import { parseTickRequest } from '../../brain/index.js';
import type { TickRequest, TickResponse } from '../../brain/index.js';
import { Decoder, Encoder } from '@msgpack/msgpack';
import { encodingOf, JSON_TYPE, MSGPACK_TYPE, type Encoding } from '../http/codec.js';
import { HttpError } from '../http/errors.js';
import type { Reply } from '../http/reply.js';
import type { HttpServer, RawControl, Request } from '../http/server.js';
import { statusLine, writeError } from '../http/write.js';
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import type { BearerGate } from './auth.js';
import type { DialogueWiring } from './dialogue.js';
import type { Evaluator } from './evaluator.js';
import { LatencyHistogram } from './histogram.js';
import { appendTickJson, readTickJson, rewindTickJson, writeTickJson } from './tick-json.js';
import { readTickMsgpack, writeTickMsgpack } from './tick-msgpack.js';

/** The only request headers /tick reads (for a /tick mounted on the generic router). */
export const TICK_HEADERS = ['content-type', 'content-length', 'authorization'] as const;

/** Default body limit of /tick: a full snapshot at every list cap fits well below it. */
export const TICK_MAX_BODY = 64 * 1024;

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

// One encoder and decoder for the process: building them per call costs more than the work.
// Both are used synchronously, so sharing them is safe.
const msgpackDecoder = new Decoder();
const msgpackEncoder = new Encoder();

/**
 * Decodes a /tick body for the exact path (readTickJson and readTickMsgpack are the fast
 * ones). Unlike the generic codec it does not pre-scan the text for depth or poisoned keys:
 * V8's JSON.parse and the msgpack decoder are iterative (no stack overflow at any depth
 * within the body limit), the msgpack decoder refuses `__proto__`, and parseTickRequest
 * copies only known fields into a fresh object, so a `__proto__` or `constructor` key in the
 * input is simply never read. The scans cost about 40% of a tick.
 */
export function decodeTick(body: Uint8Array, contentType: string | undefined): { value: unknown; encoding: Encoding } {
  return decodeTickAs(body, tickEncoding(body.length, contentType));
}

/** The body's encoding from its Content-Type: 415 when it is neither, 400 when the body is empty. */
function tickEncoding(bodyLength: number, contentType: string | undefined): Encoding {
  const encoding = encodingOf(contentType);
  if (encoding === null) throw new HttpError('unsupported_media_type', 'Content-Type must be application/json or application/msgpack.');
  if (bodyLength === 0) throw new HttpError('bad_request', `The request body is empty; a ${encoding === 'json' ? 'JSON' : 'MessagePack'} object was expected.`);
  return encoding;
}

function decodeTickAs(body: Uint8Array, encoding: Encoding): { value: unknown; encoding: Encoding } {
  try {
    return { value: encoding === 'json' ? JSON.parse(utf8(body)) : msgpackDecoder.decode(body), encoding };
  } catch {
    throw new HttpError('bad_request', `The request body is not valid ${encoding === 'json' ? 'JSON' : 'MessagePack'}.`);
  }
}

function utf8(body: Uint8Array): string {
  return (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)).toString('utf8');
}

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
const JSON_TYPE_BYTES = Buffer.from(JSON_TYPE);
const MSGPACK_TYPE_BYTES = Buffer.from(MSGPACK_TYPE);

/** The exact path: the generic decode, then the validator, which names the first bad field. */
function exactTick(body: Uint8Array, encoding: Encoding): TickRequest {
  const parsed = parseTickRequest(decodeTickAs(body, encoding).value);
  if (parsed.ok) return parsed.request;
  const first = parsed.problems[0]!;
  throw new HttpError('bad_request', `Invalid tick: ${first.path || '(body)'} ${first.message}.`, { details: parsed.problems });
}

/**
 * POST /tick, independent of the transport: it takes a Request and returns a Reply, so the
 * same handler runs under the uWS router and (for the benchmark baseline) under node:http.
 * Latency is measured from the handler's entry to the reply being encoded.
 */
export class TickHandler {
  readonly latency = new LatencyHistogram();
  readonly counters: TickCounters = { ok: 0, rejected: 0, failed: 0 };
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
  readonly handle = (req: Request): Reply | Promise<Reply> => this.run(req.body, req.headers['content-type'], req.headers.authorization);

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
  run(body: Uint8Array, contentType: string | undefined, authorization: string | undefined): Reply | Promise<Reply> {
    const started = this.now();
    const encoding = this.encoding(body.length, contentType, authorization);
    return this.answer(this.accept(body, encoding), encoding, started);
  }

  /** The bearer gate, then the body's encoding from its Content-Type (401, 415, 400 for an empty body). */
  encoding(bodyLength: number, contentType: string | undefined, authorization: string | undefined): Encoding {
    try {
      this.gate?.check(authorization);
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
      request = (encoding === 'json' ? readTickJson(body) : readTickMsgpack(body)) ?? exactTick(body, encoding);
    } catch (err) {
      if (err instanceof HttpError) this.counters.rejected++;
      else this.counters.failed++;
      throw err;
    }
    this.observe?.(request);
    return request;
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
  const batch = ticks.synchronous ? new TickBatch(ticks) : null;
  server.raw('POST', '/tick', (res, req, control) => {
    const contentType = req.getHeader(CONTENT_TYPE);
    const authorization = req.getHeader(AUTHORIZATION);
    const declared = req.getHeader(CONTENT_LENGTH);
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    // The connection is kept on a 413 (uWS discards the rest of the body), so a client still
    // writing it reads the answer rather than failing with EPIPE.
    if (declared !== '' && Number(declared) > maxBody) {
      writeError(res, state, new HttpError('payload_too_large', `The request body exceeds ${maxBody} bytes.`), control.defaultHeaders, { close: false });
      control.done();
      return;
    }
    let chunks: Buffer[] | null = null;
    let size = 0;
    let finished = false;
    res.onData((ab, isLast) => {
      if (finished) return;
      size += ab.byteLength;
      if (size > maxBody) {
        finished = true;
        writeError(res, state, new HttpError('payload_too_large', `The request body exceeds ${maxBody} bytes.`), control.defaultHeaders, { close: false });
        control.done();
        return;
      }
      if (!isLast) {
        // uWS reuses the chunk's memory after this callback: keep a copy.
        (chunks ??= []).push(Buffer.from(ab.slice(0)));
        return;
      }
      finished = true;
      let encoding: Encoding;
      try {
        encoding = ticks.encoding(size, contentType || undefined, authorization || undefined);
      } catch (err) {
        failTick(res, state, err, control);
        return;
      }
      if (batch !== null) {
        if (chunks === null) batch.add(res, state, control, ab, encoding);
        else batch.addWhole(res, state, control, Buffer.concat([...chunks, Buffer.from(ab)], size), encoding);
        return;
      }
      const started = ticks.clock();
      const body = chunks === null ? Buffer.from(ab) : Buffer.concat([...chunks, Buffer.from(ab)], size);
      let out: Reply | Promise<Reply>;
      try {
        out = ticks.answer(ticks.accept(body, encoding), encoding, started);
      } catch (err) {
        failTick(res, state, err, control);
        return;
      }
      if (out instanceof Promise) {
        out.then(
          (reply) => {
            if (!state.aborted) res.cork(() => writeTick(res, reply, control.defaultHeaders));
            control.done();
          },
          (err: unknown) => {
            if (!state.aborted) res.cork(() => failTick(res, state, err, control));
            else control.done();
          },
        );
      } else {
        writeTick(res, out, control.defaultHeaders);
        control.done();
      }
    });
  });
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
  private readonly states: { aborted: boolean }[] = [];
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

  /** Queues a tick whose body is only valid during the caller's callback: it is copied. */
  add(res: UwsResponse, state: { aborted: boolean }, control: RawControl, body: ArrayBuffer, encoding: Encoding): void {
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
  addWhole(res: UwsResponse, state: { aborted: boolean }, control: RawControl, body: Buffer, encoding: Encoding): void {
    this.queue(res, state, control, body, 0, body.length, encoding);
  }

  private queue(res: UwsResponse, state: { aborted: boolean }, control: RawControl, body: Buffer, start: number, end: number, encoding: Encoding): void {
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
    try {
      if (!state.aborted) res.cork(reply !== null ? () => writeTick(res, reply, control.defaultHeaders) : () => writeFailure(res, state, err, control));
    } catch (failure) {
      control.logger.error('tick reply could not be written', { error: failure instanceof Error ? failure.message : String(failure) });
    }
    control.done();
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
    // Each phase runs over the whole batch while its code and data are warm. The dialogue
    // tier (when there is one) reads a character's persona as the brain left it after that
    // character's tick, so a character's reply is made before its next tick in the batch.
    if (ticks.speaks) {
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
    // One clock read for the batch: its ticks were all answered by now, none arrived before `began`.
    const latencyUs = (ticks.clock() - this.began) * 1000;
    for (let k = 0; k < count; k++) if (this.replies[k] !== null) ticks.latency.record(latencyUs);
    for (let k = 0; k < count; k++) this.send(k);
  };
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

function failTick(res: UwsResponse, state: { aborted: boolean }, err: unknown, control: RawControl): void {
  writeFailure(res, state, err, control);
  control.done();
}

/** The error reply for `err`: its own status for an HttpError, else a logged 500. */
function writeFailure(res: UwsResponse, state: { aborted: boolean }, err: unknown, control: RawControl): void {
  if (!(err instanceof HttpError)) {
    control.logger.error('request failed', { method: 'POST', path: '/tick', error: err instanceof Error ? err.stack ?? err.message : String(err) });
  }
  writeError(res, state, err instanceof HttpError ? err : new HttpError('internal'), control.defaultHeaders, {});
}
