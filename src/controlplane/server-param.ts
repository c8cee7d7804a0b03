import { HttpError, quoteId } from '../http/errors.js';
import { ID_DIGITS } from '../http/validate.js';
import type { ServerId } from './types.js';

/**
 * The `server` query parameter of a signed pull or config stream; a hand-rolled scan, since it
 * runs on every pull. False when it is given more than once (refused, as every route refuses a
 * repeated parameter).
 */
export function serverParam(query: string): string | null | false {
  let found: string | null = null;
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end < 0) end = query.length;
    let value: string | null = null;
    if (query.startsWith('server=', start)) value = decodedParam(query.slice(start + 7, end));
    else if (end - start === 6 && query.startsWith('server', start)) value = '';
    if (value !== null) {
      if (found !== null) return false;
      found = value;
    }
    start = end + 1;
  }
  return found;
}

/** A server id parameter as a number; -1 when it is not 1 to 15 digits with no leading zero. */
export function serverId(raw: string): ServerId {
  return (ID_DIGITS.test(raw) ? Number(raw) : -1) as ServerId;
}

/** The server a pull or stream names: 400 when `server` is missing or repeated, 404 when it names no server id. */
export function requestedServer(query: string): ServerId {
  const raw = serverParam(query);
  if (raw === false) throw new HttpError('bad_request', `The query parameter ${quoteId('server')} is given more than once.`);
  if (raw === null || raw === '') throw new HttpError('bad_request', 'The query parameter server (the server id) is required.');
  const id = serverId(raw);
  if (id <= 0) throw new HttpError('config_not_found', `No server with id ${quoteId(raw)}.`);
  return id;
}

function decodedParam(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
