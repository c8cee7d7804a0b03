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
import { readTickJson, writeTickJson } from './tick-json.js';
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
  return decodeTickAs(body, tickEncoding(body, contentType));
}

/** The body's encoding from its Content-Type: 415 when it is neither, 400 when the body is empty. */
function tickEncoding(body: Uint8Array, contentType: string | undefined): Encoding {
  const encoding = encodingOf(contentType);
  if (encoding === null) throw new HttpError('unsupported_media_type', 'Content-Type must be application/json or application/msgpack.');
  if (body.length === 0) throw new HttpError('bad_request', `The request body is empty; a ${encoding === 'json' ? 'JSON' : 'MessagePack'} object was expected.`);
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

export function encodeTick(response: TickResponse, encoding: Encoding): Reply {
  return encoding === 'json'
    ? { status: 200, headers: JSON_HEADERS, body: Buffer.from(writeTickJson(response)) }
    : { status: 200, headers: MSGPACK_HEADERS, body: writeTickMsgpack(response) ?? msgpackEncoder.encode(response) };
}

const JSON_HEADERS = { 'content-type': JSON_TYPE };
const MSGPACK_HEADERS = { 'content-type': MSGPACK_TYPE };

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
    const encoding = this.encoding(body, contentType, authorization);
    return this.answer(this.accept(body, encoding), encoding, started);
  }

  /** The bearer gate, then the body's encoding from its Content-Type (401, 415, 400 for an empty body). */
  encoding(body: Uint8Array, contentType: string | undefined, authorization: string | undefined): Encoding {
    try {
      this.gate?.check(authorization);
      return tickEncoding(body, contentType);
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

  /** The brain's answer to an accepted request, encoded; `started` is clock() when the tick arrived. */
  answer(request: TickRequest, encoding: Encoding, started: number): Reply | Promise<Reply> {
    let result: TickResponse | Promise<TickResponse>;
    try {
      result = this.flagPersonas ? this.evaluator.tick(request, this.dialogue!.needsPersona(request)) : this.evaluator.tick(request);
    } catch (err) {
      this.counters.failed++;
      throw err;
    }
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

  private reply(request: TickRequest, response: TickResponse, encoding: Encoding, started: number): Reply {
    this.dialogue?.apply(request, response);
    const reply = encodeTick(response, encoding);
    this.counters.ok++;
    this.latency.record((this.now() - started) * 1000);
    return reply;
  }
}

/**
 * Mounts POST /tick as a raw uWS route: the two headers it reads are taken straight from uWS,
 * a body that arrives in one chunk (nearly all ticks) is read in place without a copy, and
 * the reply is written without the generic router's request object and header maps.
 * Status codes, error shapes and their order are those of the generic route: 413 on a
 * declared or actual body over the limit, then 401, 415, 400 (see the README (Brain sidecar)).
 *
 * With the inline evaluator, a tick is read and validated as it arrives (so a bad one is
 * answered at once) but answered in a batch with every other tick that arrived in the same
 * turn of the event loop: the brain runs for all of them, then all the replies are sent.
 * Measured on the benchmark, that is 15-20% less CPU per tick than answering each in turn
 * (bench/RESULTS.md); a lone tick waits only for the end of its event-loop turn.
 */
export function mountTick(server: HttpServer, ticks: TickHandler, maxBody = TICK_MAX_BODY): void {
  const batch = new TickBatch(ticks);
  server.raw('POST', '/tick', (res, req, control) => {
    const contentType = req.getHeader('content-type');
    const authorization = req.getHeader('authorization');
    const declared = req.getHeader('content-length');
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
      const body = chunks === null ? Buffer.from(ab) : Buffer.concat([...chunks, Buffer.from(ab)], size);
      let started: number;
      let encoding: Encoding;
      let request: TickRequest;
      try {
        started = ticks.clock();
        encoding = ticks.encoding(body, contentType || undefined, authorization || undefined);
        request = ticks.accept(body, encoding);
      } catch (err) {
        failTick(res, state, err, control);
        return;
      }
      if (ticks.synchronous) {
        batch.add(res, state, control, request, encoding, started);
        return;
      }
      let out: Reply | Promise<Reply>;
      try {
        out = ticks.answer(request, encoding, started);
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

/**
 * Accepted ticks waiting for the end of the event-loop turn, in arrival order (the order the
 * brain sees them in, as when each was answered at once). Kept in parallel arrays reused
 * from turn to turn, so queueing a tick allocates nothing.
 */
export class TickBatch {
  private count = 0;
  private scheduled = false;
  private readonly responses: UwsResponse[] = [];
  private readonly states: { aborted: boolean }[] = [];
  private readonly controls: RawControl[] = [];
  private readonly requests: TickRequest[] = [];
  private readonly encodings: Encoding[] = [];
  private readonly started: number[] = [];
  private readonly replies: (Reply | null)[] = [];
  private readonly errors: unknown[] = [];

  constructor(private readonly ticks: TickHandler) {}

  add(res: UwsResponse, state: { aborted: boolean }, control: RawControl, request: TickRequest, encoding: Encoding, started: number): void {
    const k = this.count++;
    this.responses[k] = res;
    this.states[k] = state;
    this.controls[k] = control;
    this.requests[k] = request;
    this.encodings[k] = encoding;
    this.started[k] = started;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const count = this.count;
    this.count = 0;
    // Every answer first, then every reply: measured cheaper than alternating the two.
    for (let k = 0; k < count; k++) {
      try {
        this.replies[k] = this.ticks.answer(this.requests[k]!, this.encodings[k]!, this.started[k]!) as Reply;
        this.errors[k] = null;
      } catch (err) {
        this.replies[k] = null;
        this.errors[k] = err;
      }
    }
    for (let k = 0; k < count; k++) {
      const res = this.responses[k]!;
      const state = this.states[k]!;
      const control = this.controls[k]!;
      const reply = this.replies[k]!;
      if (reply !== null) {
        if (!state.aborted) res.cork(() => writeTick(res, reply, control.defaultHeaders));
        control.done();
      } else if (!state.aborted) res.cork(() => failTick(res, state, this.errors[k], control));
      else control.done();
    }
    // Nothing of this turn is kept alive until the next one.
    this.responses.length = 0;
    this.states.length = 0;
    this.controls.length = 0;
    this.requests.length = 0;
    this.replies.length = 0;
    this.errors.length = 0;
  };
}

function writeTick(res: UwsResponse, reply: Reply, defaults: Readonly<Record<string, string>>): void {
  if ('stream' in reply) throw new Error('a tick reply is never a stream');
  if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
  for (const key in defaults) res.writeHeader(key, defaults[key]!);
  if (reply.headers) for (const key in reply.headers) res.writeHeader(key, reply.headers[key]!);
  res.end(reply.body ?? '');
}

function failTick(res: UwsResponse, state: { aborted: boolean }, err: unknown, control: RawControl): void {
  if (!(err instanceof HttpError)) {
    control.logger.error('request failed', { method: 'POST', path: '/tick', error: err instanceof Error ? err.stack ?? err.message : String(err) });
  }
  writeError(res, state, err instanceof HttpError ? err : new HttpError('internal'), control.defaultHeaders, {});
  control.done();
}
