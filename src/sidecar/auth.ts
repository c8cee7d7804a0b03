import { timingSafeEqual } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import type { Request } from '../http/server.js';

/** The header a client that cannot set Authorization (DayZ's RestContext) sends the token in. */
export const TOKEN_HEADER = 'x-brain-token';
/** The query parameter for a client that can set no header at all. */
export const TOKEN_PARAM = 'token';
/** Every header the gate may read, for routes that list the headers they copy. */
export const GATE_HEADERS = ['authorization', TOKEN_HEADER] as const;

/**
 * The sidecar's optional token gate (spec 001 §4.1's bearer gate, widened for mod runtimes
 * with narrow HTTP clients). The token may come as `Authorization: Bearer T`, else as
 * `X-Brain-Token: T`, else as `?token=T`: the first form present is the one judged. The
 * comparison is constant-time (crypto.timingSafeEqual over the expected token's bytes, whatever
 * the caller sent). The token is never put in an error message or a log line.
 */
export class BearerGate {
  private readonly expected: Buffer;

  constructor(token: string) {
    if (token.length === 0) throw new Error('the bearer token must not be empty');
    this.expected = Buffer.from(token);
  }

  /**
   * Throws 401 unless the first credential present carries the token. `query` is the raw
   * query string (without '?'), read only when neither header is there, so the usual
   * header path never parses it.
   */
  check(authorization: string | undefined, headerToken?: string, query?: string): void {
    if (authorization) {
      const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
      if (!m || !this.matches(m[1]!)) throw unauthorized('The bearer token is not valid.');
      return;
    }
    if (headerToken) {
      if (!this.matches(headerToken.trim())) throw unauthorized('The X-Brain-Token header is not valid.');
      return;
    }
    const given = query ? new URLSearchParams(query).getAll(TOKEN_PARAM) : [];
    // Refused as a repeated parameter is on every route: which copy counts must not be a guess.
    if (given.length > 1) throw new HttpError('bad_request', `The query parameter "${TOKEN_PARAM}" is given more than once.`);
    const fromQuery = given[0] ?? null;
    if (fromQuery !== null) {
      if (!this.matches(fromQuery)) throw unauthorized('The token query parameter is not valid.');
      return;
    }
    throw unauthorized('A token is required: Authorization: Bearer <token>, X-Brain-Token: <token> or ?token=<token>.');
  }

  /** check() on a request of the generic router (headers copied, query kept raw). */
  checkRequest(req: Request): void {
    this.check(req.headers.authorization, req.headers[TOKEN_HEADER], req.query);
  }

  /**
   * The same work whatever was sent: a candidate of another length is never compared byte by
   * byte (timingSafeEqual needs equal lengths), the expected token is compared with itself
   * instead. Hashing both sides first, as this did before, cost a SHA-256 object per request:
   * a third of an OFREP evaluation's CPU in its profile.
   */
  private matches(token: string): boolean {
    const given = Buffer.from(token);
    const sameLength = given.length === this.expected.length;
    return timingSafeEqual(sameLength ? given : this.expected, this.expected) && sameLength;
  }
}

function unauthorized(message: string): HttpError {
  return new HttpError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer' } });
}
