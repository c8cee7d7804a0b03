import type { TickRequest, TickResponse } from '../../../brain/index.js';
import type { Encoding } from '../../http/codec.js';
import { HttpError } from '../../http/errors.js';
import type { Reply } from '../../http/reply.js';
import { failRaw, type RawControl, type RawState } from '../../http/server.js';
import type { Logger } from '../../log.js';
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import type { TickHandler } from './handler.js';
import { sendTick, TICK_SITE } from './send.js';
import { TickFailure, type BatchItem } from './tick-array.js';
import { groupBody } from './group.js';
import { rewindTickJson } from './tick-json.js';

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
  /** Whether tick k asked for its explanation (`?explain=1`). */
  private readonly explains: boolean[] = [];
  /** When the first tick of this batch arrived: every tick's latency is counted from it. */
  private began = 0;
  private readonly requests: (TickRequest | null)[] = [];
  private readonly decisions: (TickResponse | null)[] = [];
  private readonly replies: (Reply | null)[] = [];
  private readonly errors: unknown[] = [];
  /** The POST /ticks body being answered, while answerGroup runs. */
  private group: Group | null = null;
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

  /** Queues a tick whose body is only valid during the caller's callback: it is copied. `explain`: its reply carries `why`. */
  add(res: UwsResponse, state: RawState, control: RawControl, body: ArrayBuffer, encoding: Encoding, explain = false): void {
    const length = body.byteLength;
    if (this.used + length > BATCH_BYTES) {
      this.addWhole(res, state, control, Buffer.from(new Uint8Array(body)), encoding, explain);
      return;
    }
    this.arena.set(new Uint8Array(body), this.used);
    this.queue(res, state, control, this.arena, this.used, this.used + length, encoding, explain);
    this.used += length;
  }

  /** Queues a tick whose body the batch may keep as it is. */
  addWhole(res: UwsResponse, state: RawState, control: RawControl, body: Buffer, encoding: Encoding, explain = false): void {
    this.queue(res, state, control, body, 0, body.length, encoding, explain);
  }

  private queue(res: UwsResponse, state: RawState, control: RawControl, body: Buffer, start: number, end: number, encoding: Encoding, explain: boolean): void {
    const k = this.count++;
    this.explains[k] = explain;
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
      this.decisions[k] = this.ticks.evaluate(request, this.explains[k]) as TickResponse;
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

  /** Turns tick k's decision into its reply (or its error); in a group, writes it into the group's body. */
  private encode(k: number): void {
    if (this.group !== null) {
      this.encodeInGroup(k, this.group);
      return;
    }
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

  /** Element k of a group: its reply (as ticks.reply makes it) or its failure, written in place. */
  private encodeInGroup(k: number, group: Group): void {
    const decision = this.decisions[k]!;
    const request = this.requests[k]!;
    this.requests[k] = null;
    this.decisions[k] = null;
    if (decision !== null) {
      try {
        this.ticks.speak(request, decision);
        groupBody.reply(decision);
        this.ticks.counters.ok++;
        group.ok++;
        return;
      } catch (err) {
        this.errors[k] = err;
      }
    }
    const item = group.items[k]!;
    groupBody.failure(item instanceof TickFailure ? item : failureOf(this.errors[k], item.snapshot.agent, group.logger));
    this.errors[k] = null;
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
   * The 200 body of one POST /ticks reply: its elements answered as if each had been sent to
   * /tick in turn (ticks queued before it are answered first, in arrival order; then its own
   * go through the same phases), each reply or failure written in place into one body. The
   * body is a view that the next group overwrites: the caller sends it before returning to
   * the event loop. `explain`: every reply carries `why`.
   */
  answerGroup(items: readonly BatchItem[], encoding: Encoding, logger: Logger, explain = false): Uint8Array {
    if (this.scheduled) this.flush();
    const ticks = this.ticks;
    const started = ticks.clock();
    const count = items.length;
    for (let k = 0; k < count; k++) {
      const item = items[k]!;
      this.requests[k] = item instanceof TickFailure ? null : item;
      this.errors[k] = null;
      this.encodings[k] = encoding;
      this.explains[k] = explain;
    }
    const group: Group = { items, logger, ok: 0 };
    groupBody.begin(encoding, count);
    this.group = group;
    try {
      this.phases(count);
    } finally {
      this.group = null;
    }
    const latencyUs = (ticks.clock() - started) * 1000;
    for (let k = 0; k < group.ok; k++) ticks.latency.record(latencyUs);
    return groupBody.end();
  }
}

/** The POST /ticks body being answered by TickBatch.answerGroup. */
interface Group {
  readonly items: readonly BatchItem[];
  readonly logger: Logger;
  /** Elements answered 200 so far. */
  ok: number;
}

/** The element failure for a tick the brain (or its reply) failed on: logged, answered `internal`. */
export function failureOf(err: unknown, agent: number, logger: Logger): TickFailure {
  if (err instanceof HttpError) return new TickFailure(err, agent);
  logger.error('tick failed', { path: '/ticks', agent, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  return new TickFailure(new HttpError('internal'), agent);
}
