import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import type { Encoding } from './codec.js';
import { HttpError, quoteValue } from './errors.js';
import { isTransientFailure, TRANSIENT_RETRY_AFTER_S } from './transient.js';
import { writeError } from './write.js';
import type { Logger } from '../log.js';

/**
 * What the guard reads and sets of a request: whether its client went away, and whether an
 * answer has gone out (or is no longer possible), so that a failure never writes twice.
 */
export interface GuardState {
  aborted: boolean;
  answered?: boolean;
  /** `?errors=body` on a server that honours it: failures go out 200 with the error body in this encoding (see errors-in-body.ts). */
  errorsInBody?: Encoding | null;
}

/** Where a failure happened, for its one log line. */
export interface FailureSite {
  readonly method: string;
  readonly path: string;
}

/** The reason a request's body stream is destroyed when its client goes away. */
export class ClientAborted extends Error {
  constructor() {
    super('client aborted');
    this.name = 'ClientAborted';
  }
}

/** True for the error of a client that went away: not a fault of the server, logged at debug level only. */
export function isClientAbort(err: unknown): boolean {
  return err instanceof ClientAborted;
}

/**
 * A path parameter decoded from its percent-encoding. A malformed encoding (`%`, `%ZZ`, a
 * truncated UTF-8 sequence) is the client's mistake: 400, never an exception out of a callback.
 * So is `%00`: no identifier holds a NUL, and PostgreSQL refuses one in any text it is asked
 * to compare.
 */
export function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new HttpError('bad_request', `The path has a malformed percent-encoding: ${quoteValue(raw)}.`);
  }
  if (decoded.includes('\0')) throw new HttpError('bad_request', `The path holds a NUL (%00): ${quoteValue(raw)}.`);
  return decoded;
}

/**
 * The one answer to an exception that escaped a uWS callback (a route handler, onData,
 * onAborted, onWritable, or a timer or promise continuation writing a response). uWS ends the
 * process when a callback throws, so every callback ends in this instead: an HttpError is
 * answered as itself, a dependency that is unavailable for now (transient.ts) 503 with
 * Retry-After, anything else is logged once and answered 500 internal; the process goes on. A client that went away is logged at debug level only. `close` closes the
 * connection behind the answer (a refusal before the body was read: nothing more of it is taken in).
 */
export function answerFailure(
  res: UwsResponse,
  state: GuardState,
  err: unknown,
  defaults: Readonly<Record<string, string>>,
  logger: Logger,
  site: FailureSite,
  close = false,
): void {
  if (isClientAbort(err) || state.aborted) {
    logger.debug?.('client went away', { method: site.method, path: site.path });
    return;
  }
  const transient = !(err instanceof HttpError) && isTransientFailure(err);
  if (transient) {
    logger.warn('request failed: a dependency is unavailable', { method: site.method, path: site.path, error: (err as Error).message });
  } else if (!(err instanceof HttpError)) {
    logger.error('request failed', { method: site.method, path: site.path, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
  if (state.answered) {
    // A half-written answer cannot become an error any more: the connection goes, so the
    // client never takes a truncated body for a whole one. A finished response throws here.
    try {
      res.close();
    } catch {
      // finished and released: nothing to do
    }
    return;
  }
  state.answered = true;
  const httpErr =
    err instanceof HttpError
      ? err
      : transient
        ? new HttpError('unavailable', 'A service this server depends on is unavailable; try again shortly.', {
            headers: { 'retry-after': String(TRANSIENT_RETRY_AFTER_S) },
          })
        : new HttpError('internal');
  try {
    res.cork(() => writeError(res, state, httpErr, defaults, { close }));
  } catch {
    try {
      res.close();
    } catch {
      // The response was finished and released already: nothing is left to answer.
    }
  }
}

/**
 * Runs `fn` for a uWS callback that has no request of its own to answer (a timer, a batch
 * flush): an exception is logged once and the process goes on.
 */
export function guardTask(fn: () => void, logger: Logger, what: string): () => void {
  return () => {
    try {
      fn();
    } catch (err) {
      logger.error(`${what} failed`, { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  };
}
