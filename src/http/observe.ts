import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import type { Logger } from '../log.js';

/** One answered request, as the access log and the request metrics see it. */
export interface RequestRecord {
  /** Upper-case, as the route serves it (HEAD for the HEAD of a GET). */
  readonly method: string;
  /** The route pattern that matched (`/v1/servers/:id`), never the path: ids, tokens and queries stay out. Null when no route matched. */
  readonly route: string | null;
  /** The status sent; CLIENT_CLOSED when the client went away before an answer. */
  readonly status: number;
  /** Microseconds from the request's arrival until its response was finished. */
  readonly micros: number;
}

export type RequestObserver = (record: RequestRecord) => void;

/** The status recorded for a request whose client went away before it was answered (nginx's convention). */
export const CLIENT_CLOSED = 499;

type Fn = (...args: never[]) => unknown;

/**
 * Watches one response: the status line written (200 when a handler writes none), and the
 * moment it is finished (end, endWithoutBody, a tryEnd that completes, close) or aborted, when
 * `observe` gets the record, exactly once. The uWS response object is fresh per request, so
 * these wrappers live and die with it. Only installed when someone observes: an unobserved
 * server pays one branch per request. Returns what records the client going away, for a
 * response whose abort handler was registered before the watch began (a 499 unless finished).
 */
export function observeResponse(
  res: UwsResponse,
  method: string,
  route: string | null,
  observe: RequestObserver,
  logger: Logger,
  start: number = performance.now(),
): () => void {
  let status = 200;
  let finished = false;
  // The observer runs inside uWS callbacks (onAborted before the route's own handler): a
  // failing log or metric is logged here, never thrown into uWS or past the route's abort handling.
  const finish = (): void => {
    if (finished) return;
    finished = true;
    try {
      observe({ method, route, status, micros: Math.round((performance.now() - start) * 1000) });
    } catch (err) {
      logger.error('request observer failed', { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  };
  const target = res as unknown as Record<string, Fn>;
  const wrap = (name: string, after: (result: unknown, args: unknown[]) => void, before?: (args: unknown[]) => unknown[]): void => {
    const original = target[name]!;
    target[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, (before ? before(args) : args) as never[]);
      after(result, args);
      return result;
    } as Fn;
  };
  wrap(
    'writeStatus',
    () => {},
    (args) => {
      const code = Number.parseInt(String(args[0]), 10);
      if (Number.isInteger(code)) status = code;
      return args;
    },
  );
  wrap('end', finish);
  wrap('endWithoutBody', finish);
  wrap('tryEnd', (result) => {
    if (Array.isArray(result) && result[1] === true) finish();
  });
  wrap('close', () => {
    if (!finished) status = CLIENT_CLOSED;
    finish();
  });
  const aborted = (): void => {
    if (!finished) {
      status = CLIENT_CLOSED;
      finish();
    }
  };
  wrap(
    'onAborted',
    () => {},
    (args) => {
      const handler = args[0] as () => void;
      return [
        () => {
          aborted();
          handler();
        },
      ];
    },
  );
  return aborted;
}

/**
 * Records a request answered in full inside its first callback, whose status is known: no
 * wrapping (which allocates a closure per wrapped method, per request) for the common case.
 */
export function observeAnswered(method: string, route: string | null, status: number, start: number, observe: RequestObserver, logger: Logger): void {
  try {
    observe({ method, route, status, micros: Math.round((performance.now() - start) * 1000) });
  } catch (err) {
    logger.error('request observer failed', { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
}

/** The access log's line for a record: JSON, no path, query, header or body (tokens and keys travel there). */
export function accessLogLine(record: RequestRecord, now: () => number = Date.now): string {
  return `${JSON.stringify({ time: new Date(now()).toISOString(), type: 'access', method: record.method, route: record.route, status: record.status, us: record.micros })}\n`;
}

/** Several observers as one; null when there are none (so the server installs nothing). */
export function combineObservers(observers: readonly (RequestObserver | null | undefined)[]): RequestObserver | null {
  const list = observers.filter((o): o is RequestObserver => typeof o === 'function');
  if (list.length === 0) return null;
  if (list.length === 1) return list[0]!;
  return (record) => {
    for (const o of list) o(record);
  };
}
