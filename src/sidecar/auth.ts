import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../http/errors.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The optional bearer gate of spec 001 §4.1. Both sides are hashed first so the comparison is
 * constant-time whatever length the caller sent.
 */
export class BearerGate {
  private readonly expected: Buffer;

  constructor(token: string) {
    if (token.length === 0) throw new Error('the bearer token must not be empty');
    this.expected = digest(token);
  }

  /** Throws 401 unless the Authorization header carries the configured bearer token. */
  check(authorization: string | undefined): void {
    if (!authorization) throw unauthorized('An Authorization: Bearer token is required.');
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!m || !timingSafeEqual(digest(m[1]!), this.expected)) throw unauthorized('The bearer token is not valid.');
  }
}

function unauthorized(message: string): HttpError {
  return new HttpError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer' } });
}
