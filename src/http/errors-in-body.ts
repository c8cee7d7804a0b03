import { encodingOf, type Encoding } from './codec.js';

/**
 * `?errors=body`: for script runtimes that cannot read an HTTP status (DayZ's
 * `RestCallback.OnError` gets only a result state), every failure of the request is answered
 * `200` with the usual `{"error": {code, message, details?}}` body, so the script can still
 * tell a bad token from a full queue. Only a server built with `errorsParam` honours it (the
 * sidecar); elsewhere the query parameter means nothing.
 */
export const ERRORS_PARAM = 'errors';
/** The one value that turns it on; any other value (or none) keeps the usual statuses. */
export const ERRORS_IN_BODY = 'body';

/**
 * How a request's failures are answered: null for the usual status codes, else the encoding of
 * the 200 error body: MessagePack when the request's Content-Type is MessagePack (the client
 * reads every 200 with one decoder), else JSON. `query` is the raw query string without '?'
 * (undefined or '' when there is none). A query without `errors=` costs one substring search.
 */
export function errorsInBodyOf(query: string | undefined, contentType: string | undefined): Encoding | null {
  if (query === undefined || query.length === 0 || !query.includes('errors=')) return null;
  // A proper parse decides: `xerrors=body` or `errors=bodyx` do not count, `errors=%62ody` does.
  if (new URLSearchParams(query).get(ERRORS_PARAM) !== ERRORS_IN_BODY) return null;
  return encodingOf(contentType) === 'msgpack' ? 'msgpack' : 'json';
}
