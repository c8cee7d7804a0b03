import { performance } from 'node:perf_hooks';
import { Encoder } from '@msgpack/msgpack';
import type { TickRequest, TickResponse } from '../../../brain/index.js';
import { JSON_TYPE, MSGPACK_TYPE, type Encoding } from '../../http/codec.js';
import { HttpError } from '../../http/errors.js';
import type { Reply } from '../../http/reply.js';
import type { Request } from '../../http/server.js';
import { TOKEN_HEADER, type BearerGate } from '../auth.js';
import type { DialogueWiring } from '../dialogue.js';
import type { Evaluator } from './evaluator.js';
import { explainOf } from './explain.js';
import { LatencyHistogram } from './histogram.js';
import { readTicks, TickFailure, type BatchItem } from './tick-array.js';
import { exactTick, tickEncoding, withoutBom } from './tick-exact.js';
import { appendTickJson, readTickJson, writeTickJson } from './tick-json.js';
import { readTickMsgpack, writeTickMsgpack } from './tick-msgpack.js';

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
export const msgpackEncoder = new Encoder();

/**
 * The 200 reply to a tick. `lend`: the body may be a view over memory shared with the other
 * replies written since the last rewindTickJson(), to be sent before the next rewind.
 */
export function encodeTick(response: TickResponse, encoding: Encoding, lend = false): Reply {
  return encoding === 'json'
    ? { status: 200, headers: JSON_HEADERS, body: (lend ? appendTickJson(response) : null) ?? Buffer.from(writeTickJson(response)) }
    : { status: 200, headers: MSGPACK_HEADERS, body: writeTickMsgpack(response) ?? msgpackEncoder.encode(response) };
}

/** The headers of a 200 reply, one object each: the raw routes recognise them by identity. */
export const JSON_HEADERS = { 'content-type': JSON_TYPE };
export const MSGPACK_HEADERS = { 'content-type': MSGPACK_TYPE };
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
    this.run(
      req.body,
      req.headers['content-type'],
      {
        authorization: req.headers.authorization ?? '',
        headerToken: req.headers[TOKEN_HEADER] ?? '',
        query: req.query,
      },
      explainOf(req.query),
    );

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
   * it is only read synchronously. `explain`: the reply carries `why` (`?explain=1`).
   */
  run(body: Uint8Array, contentType: string | undefined, credentials: Credentials, explain = false): Reply | Promise<Reply> {
    const started = this.now();
    this.admit(credentials);
    const encoding = this.encoding(body.length, contentType);
    return this.answer(this.accept(body, encoding), encoding, started, explain);
  }

  /**
   * The token gate (401), from the headers and query alone: the routes run it before they read
   * a byte of the body, so a request without the token costs no memory for its body.
   */
  admit(credentials: Credentials): void {
    if (this.gate === null) return;
    try {
      this.gate.check(credentials.authorization, credentials.headerToken, credentials.query);
    } catch (err) {
      this.counters.rejected++;
      throw err;
    }
  }

  /** The body's encoding from its Content-Type (415, 400 for an empty body); the token was admitted before. */
  encoding(bodyLength: number, contentType: string | undefined): Encoding {
    try {
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

  /**
   * The brain's answer to an accepted request, encoded: evaluate() then reply(). `started` is
   * clock() when the tick arrived; `explain` as for evaluate().
   */
  answer(request: TickRequest, encoding: Encoding, started: number, explain = false): Reply | Promise<Reply> {
    const result = this.evaluate(request, explain);
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

  /** The brain's response to an accepted request: synchronous inline, a promise with workers. `explain`: it carries `why`. */
  evaluate(request: TickRequest, explain = false): TickResponse | Promise<TickResponse> {
    try {
      return this.flagPersonas ? this.evaluator.tick(request, this.dialogue!.needsPersona(request), explain) : this.evaluator.tick(request, false, explain);
    } catch (err) {
      this.counters.failed++;
      throw err;
    }
  }

  /** Adds the dialogue tier's line (when there is one) to the brain's response. */
  speak(request: TickRequest, response: TickResponse): void {
    this.dialogue?.apply(request, response);
  }

  /**
   * The reply to a tick from the brain's response: the dialogue tier's line added, encoded,
   * counted. `started` as for answer(), or null when the caller records the latency itself;
   * `lend` as for encodeTick.
   */
  reply(request: TickRequest, response: TickResponse, encoding: Encoding, started: number | null, lend = false): Reply {
    this.speak(request, response);
    const reply = encodeTick(response, encoding, lend);
    this.counters.ok++;
    if (started !== null) this.latency.record((this.now() - started) * 1000);
    return reply;
  }
}
