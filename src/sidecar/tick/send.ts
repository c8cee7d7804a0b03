import type { Reply } from '../../http/reply.js';
import { failRaw, type RawControl, type RawState } from '../../http/server.js';
import { statusLine } from '../../http/write.js';
import { JSON_TYPE, MSGPACK_TYPE, type Encoding } from '../../http/codec.js';
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import { TOKEN_HEADER } from '../auth.js';
import { JSON_HEADERS, MSGPACK_HEADERS } from './handler.js';

/** Writing the tick routes' replies straight to uWS, and finishing their requests. */

// Header names and values handed to uWS as bytes: a string is converted to UTF-8 (into a
// malloc'd buffer) on every call.
export const CONTENT_TYPE = Buffer.from('content-type');
export const CONTENT_LENGTH = Buffer.from('content-length');
export const AUTHORIZATION = Buffer.from('authorization');
export const X_BRAIN_TOKEN = Buffer.from(TOKEN_HEADER);
const JSON_TYPE_BYTES = Buffer.from(JSON_TYPE);
const MSGPACK_TYPE_BYTES = Buffer.from(MSGPACK_TYPE);

export const TICK_SITE = { method: 'POST', path: '/tick' } as const;
export const TICKS_SITE = { method: 'POST', path: '/ticks' } as const;

/** Writes a tick's reply unless its client went away, and finishes the request; a failed write is answered by the guard. */
export function sendTick(res: UwsResponse, state: RawState, reply: Reply, control: RawControl): void {
  if (!state.aborted) {
    try {
      state.answered = true;
      res.cork(() => writeTick(res, reply, control.defaultHeaders));
    } catch (err) {
      failRaw(res, state, err, control, TICK_SITE);
      return;
    }
  }
  state.finished = true;
  control.done(state);
}

/** Writes a batch's 200 body (its replies as one array) unless its client went away, and finishes the request; a failed write is answered by the guard. */
export function sendGroup(res: UwsResponse, state: RawState, body: Uint8Array, encoding: Encoding, control: RawControl): void {
  if (!state.aborted) {
    try {
      state.answered = true;
      res.cork(() => writeGroup(res, body, encoding, control.defaultHeaders));
    } catch (err) {
      failRaw(res, state, err, control, TICKS_SITE);
      return;
    }
  }
  state.finished = true;
  control.done(state);
}

function writeGroup(res: UwsResponse, body: Uint8Array, encoding: Encoding, defaults: Readonly<Record<string, string>>): void {
  for (const key in defaults) res.writeHeader(key, defaults[key]!);
  res.writeHeader(CONTENT_TYPE, encoding === 'json' ? JSON_TYPE_BYTES : MSGPACK_TYPE_BYTES);
  res.end(body);
}

function writeTick(res: UwsResponse, reply: Reply, defaults: Readonly<Record<string, string>>): void {
  if ('stream' in reply) throw new Error('a tick reply is never a stream');
  if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
  for (const key in defaults) res.writeHeader(key, defaults[key]!);
  if (reply.headers === JSON_HEADERS) res.writeHeader(CONTENT_TYPE, JSON_TYPE_BYTES);
  else if (reply.headers === MSGPACK_HEADERS) res.writeHeader(CONTENT_TYPE, MSGPACK_TYPE_BYTES);
  else if (reply.headers) for (const key in reply.headers) res.writeHeader(key, reply.headers[key]!);
  res.end(reply.body ?? '');
}
