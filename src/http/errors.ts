/**
 * The one error catalogue: every non-2xx answer of every service is built from an entry
 * here, so a code always means the same status and the table of docs/errors.md can be checked
 * against it (test/http/errors.test.ts).
 */
export const ERRORS = {
  bad_request: { status: 400, message: 'The request is malformed.' },
  unauthorized: { status: 401, message: 'Authentication is missing or invalid.' },
  forbidden: { status: 403, message: 'The credential may not do this.' },
  plan_required: { status: 403, message: 'This needs a higher plan.' },
  plan_expired: { status: 403, message: 'The trial is over; this needs a plan.' },
  tenant_suspended: { status: 403, message: 'The tenant is suspended.' },
  plan_limit: { status: 403, message: 'A limit of the plan or service was reached.' },
  not_found: { status: 404, message: 'Not found.' },
  config_not_found: { status: 404, message: 'No server with that id.' },
  method_not_allowed: { status: 405, message: 'Method not allowed on this path.' },
  version_conflict: { status: 409, message: 'The configuration moved to a newer version than the one edited.' },
  conflict: { status: 409, message: 'The request conflicts with the current state.' },
  billing_not_configured: { status: 409, message: 'This server takes no payments: no payment provider is configured.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'Unsupported content type.' },
  range_not_satisfiable: { status: 416, message: 'The requested range is not satisfiable.' },
  validation_failed: { status: 422, message: 'The request failed validation.' },
  idempotency_key_reused: { status: 422, message: 'The Idempotency-Key was used with a different request body.' },
  rate_limited: { status: 429, message: 'Too many requests.' },
  internal: { status: 500, message: 'Internal server error.' },
  unavailable: { status: 503, message: 'The service is unavailable.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

/**
 * The most `details` one error carries. A body with more problems (an 800 KB array of bad
 * items) is told the first ones and how many there were: answering each would turn a request
 * into an answer twenty times its size.
 */
export const MAX_ERROR_DETAILS = 50;

export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string = ERRORS[code].message, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    const details = options.details;
    const cut = details !== undefined && details.length > MAX_ERROR_DETAILS;
    super(cut ? `${message} (the first ${MAX_ERROR_DETAILS} of ${details.length} problems are listed)` : message);
    this.name = 'HttpError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = cut ? details.slice(0, MAX_ERROR_DETAILS) : details;
    this.headers = options.headers;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details) error.details = this.details;
    return { error };
  }
}

export function validationFailed(details: ErrorDetail[], message = 'The request failed validation.'): HttpError {
  return new HttpError('validation_failed', message, { details });
}

/** The most characters of a caller's id an error message echoes back; the rest is cut to "…". */
export const MAX_ECHOED_ID_CHARS = 64;

/**
 * An id from the request, quoted for an error message: a caller who sends a megabyte of id
 * gets 64 characters of it back, not the megabyte (every "No X with id …" goes through here).
 */
export function quoteId(value: unknown): string {
  return JSON.stringify(cutForEcho(typeof value === 'string' ? value : String(value ?? ''), MAX_ECHOED_ID_CHARS));
}

/**
 * A value from the request (a query parameter, a body field) quoted for an error message as
 * JSON, cut like an id: a field of a megabyte is not sent back whole, nor once per detail.
 */
export function quoteValue(value: unknown): string {
  if (typeof value === 'string') return quoteId(value);
  return cutForEcho(JSON.stringify(value) ?? String(value), MAX_ECHOED_ID_CHARS);
}

/** A key of a request body named in a detail's path (an unknown field): cut like an id, unquoted. */
export function echoedKey(key: string): string {
  return cutForEcho(key, MAX_ECHOED_ID_CHARS);
}

/** The most characters of a request path the 404 and 405 of an unknown route echo back. */
export const MAX_ECHOED_PATH_CHARS = 200;

/** A request path for the message of a 404 or 405: the first MAX_ECHOED_PATH_CHARS characters, then "…". */
export function echoedPath(path: string): string {
  return cutForEcho(path, MAX_ECHOED_PATH_CHARS);
}

/**
 * The first `max` characters of `s`, then "…" when it is longer. Cut by code points so a
 * surrogate pair is never split into an unpaired half; only the first `max` are looked at,
 * however long the text.
 */
function cutForEcho(s: string, max: number): string {
  let end = 0;
  for (let chars = 0; end < s.length; chars++) {
    if (chars === max) return `${s.slice(0, end)}…`;
    end += (s.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  }
  return s;
}
