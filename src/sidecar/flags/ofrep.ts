import { createHash } from 'node:crypto';
import { evaluateFlag, type ConfigBundle, type FlagContext, type FlagReason, type FlagResult, type Flags, type FlagValue } from '../../../brain/index.js';
import type { Peer } from '../../http/connections.js';
import { HttpError } from '../../http/errors.js';
import { errorsInBodyOf } from '../../http/errors-in-body.js';
import { matchesEtag } from '../../http/etag.js';
import { decodeParam } from '../../http/guard.js';
import type { Reply } from '../../http/reply.js';
import { failRaw, type HttpServer, type RawControl, type RawState, type Request } from '../../http/server.js';
import { statusLine } from '../../http/write.js';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { withoutBom } from '../../http/bom.js';
import { contentCodingRefusal, type Encoding } from '../../http/codec.js';
import { CONTENT_ENCODING } from '../../http/header-key.js';
import { GATE_HEADERS, TOKEN_HEADER, type BearerGate } from '../auth.js';

/** Limits of the OFREP routes. */
export const OFREP_LIMITS = {
  /** Largest evaluation request body (a context is a few attributes). */
  maxBody: 16 * 1024,
  /** Longest targetingKey, map or server attribute. */
  maxAttribute: 256,
} as const;

const HEADERS = [...GATE_HEADERS, 'content-type', 'content-length', 'if-none-match'] as const;
const JSON_TYPE = { 'content-type': 'application/json' } as const;

/**
 * One single-flag answer already serialised: the 200 body of an evaluation that ended with
 * this value, variant and reason (the value compared by identity, so an object value is the
 * rule's own object).
 */
interface CachedAnswer {
  readonly value: FlagValue;
  readonly variant: string;
  readonly reason: FlagReason;
  readonly body: Buffer;
}

/**
 * The flags in force: replaced whole when a bundle is applied (so an evaluation never sees half
 * of one), with the serialised single-flag answers of this version. A 200 answer depends on the
 * context only through which rule matched: its bytes are the same for every context reaching
 * the same outcome, so each is built once per version. At most one per rule and one default per
 * flag, so the cache is bounded by the bundle's own flag limits (256 flags, 32 rules each,
 * 256 KiB of flags in all).
 */
export class FlagSet {
  flags: Flags;
  version: number;
  private answers = new Map<string, CachedAnswer[]>();
  constructor(bundle: ConfigBundle) {
    this.flags = bundle.flags ?? {};
    this.version = bundle.version;
  }
  set(bundle: ConfigBundle): void {
    this.flags = bundle.flags ?? {};
    this.version = bundle.version;
    this.answers = new Map();
  }

  /** The 200 body of flag `key` evaluated to `r`, serialised on first use in this version. */
  answer(key: string, r: Extract<FlagResult, { ok: true }>): Buffer {
    let list = this.answers.get(key);
    if (list === undefined) this.answers.set(key, (list = []));
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!;
      if (a.value === r.value && a.variant === r.variant && a.reason === r.reason) return a.body;
    }
    const body = Buffer.from(JSON.stringify({ key, value: r.value, reason: r.reason, variant: r.variant, metadata: { bundleVersion: this.version } }));
    list.push({ value: r.value, variant: r.variant, reason: r.reason, body });
    return body;
  }
}

type ContextResult = { ok: true; ctx: FlagContext } | { ok: false; errorCode: 'PARSE_ERROR' | 'INVALID_CONTEXT'; details: string };

/** OFREP's request `{context}` as a FlagContext: `server` defaults to this sidecar's server id. */
export function readContext(body: Buffer, serverId: string | null): ContextResult {
  let doc: unknown = {};
  if (body.length > 0) {
    try {
      doc = JSON.parse(withoutBom(body.toString('utf8')));
    } catch (err) {
      return { ok: false, errorCode: 'PARSE_ERROR', details: `the request body is not JSON: ${(err as Error).message}` };
    }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { ok: false, errorCode: 'PARSE_ERROR', details: 'the request body must be a JSON object {context}' };
  const raw = (doc as { context?: unknown }).context;
  if (raw === undefined || raw === null) return { ok: true, ctx: serverId === null ? {} : { server: serverId } };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, errorCode: 'INVALID_CONTEXT', details: 'context must be an object' };
  const c = raw as Record<string, unknown>;
  const ctx: FlagContext = {};
  const text = (name: 'targetingKey' | 'map' | 'server'): string | null => {
    let v = c[name];
    if (v === undefined || v === null) return null;
    if (name === 'server' && typeof v === 'number' && Number.isSafeInteger(v)) v = String(v);
    if (typeof v !== 'string' || v.length > OFREP_LIMITS.maxAttribute)
      return `context.${name} must be a string of at most ${OFREP_LIMITS.maxAttribute} characters`;
    ctx[name] = v;
    return null;
  };
  const problem = text('targetingKey') ?? text('map') ?? text('server');
  if (problem) return { ok: false, errorCode: 'INVALID_CONTEXT', details: problem };
  if (ctx.server === undefined && serverId !== null) ctx.server = serverId;
  const players = c.players;
  if (players !== undefined && players !== null) {
    // Past 2^53 - 1 a JSON number is no longer the count sent (1e308 is "an integer" to JavaScript).
    if (typeof players !== 'number' || !Number.isSafeInteger(players) || players < 0)
      return { ok: false, errorCode: 'INVALID_CONTEXT', details: `context.players must be a non-negative integer no larger than ${Number.MAX_SAFE_INTEGER}` };
    ctx.players = players;
  }
  return { ok: true, ctx };
}

function reply(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return { status, headers: headers ? { ...JSON_TYPE, ...headers } : JSON_TYPE, body: JSON.stringify(value) };
}

/** The single-flag route, as its failures name it. */
export const OFREP_FLAG_SITE = { method: 'POST', path: '/ofrep/v1/evaluate/flags/:key' } as const;

// Header names and values handed to uWS as bytes: a string is converted to UTF-8 on every call.
const AUTHORIZATION = Buffer.from('authorization');
const X_BRAIN_TOKEN = Buffer.from(TOKEN_HEADER);
const CONTENT_TYPE = Buffer.from('content-type');
const CONTENT_LENGTH = Buffer.from('content-length');
const JSON_TYPE_BYTES = Buffer.from('application/json');

/** A single-flag request while its body arrives: its abort state, its key and the body so far. */
interface FlagCall extends RawState {
  aborted: boolean;
  answered: boolean;
  finished: boolean;
  readonly peer: Peer;
  readonly errorsInBody: Encoding | null;
  key: string;
  size: number;
  /** The chunks before the last, copied (uWS reuses a chunk's memory once its callback returns); null while the body came in one chunk. */
  chunks: Buffer[] | null;
}

/**
 * The OpenFeature Remote Evaluation Protocol on the sidecar, behind its token:
 * `POST /ofrep/v1/evaluate/flags/{key}` evaluates one flag, `POST /ofrep/v1/evaluate/flags`
 * every flag (with an ETag of the answer, and 304 for a matching If-None-Match). Evaluated here
 * from the applied bundle: no network, no storage.
 */
export function mountOfrep(server: HttpServer, gate: BearerGate | null, flags: FlagSet, options: { serverId: string | null; now?: () => number }): void {
  const now = options.now ?? Date.now;
  mountFlag(server, gate, flags, options.serverId, now);
  server.post(
    '/ofrep/v1/evaluate/flags',
    (req: Request) => {
      const read = readContext(req.body, options.serverId);
      if (!read.ok) return reply(400, { errorCode: read.errorCode, errorDetails: read.details });
      const at = now();
      const out: unknown[] = [];
      for (const key of Object.keys(flags.flags)) {
        const r = evaluateFlag(key, flags.flags[key]!, read.ctx, at);
        out.push(r.ok ? { key, value: r.value, reason: r.reason, variant: r.variant } : { key, errorCode: r.errorCode, errorDetails: r.message });
      }
      const body = JSON.stringify({ flags: out, metadata: { bundleVersion: flags.version } });
      // The answer's own digest: it changes with the bundle, the context and a time window crossed.
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      if (matchesEtag(req.headers['if-none-match'], etag)) return { status: 304, headers: { etag } };
      return { status: 200, headers: { ...JSON_TYPE, etag, 'cache-control': 'no-cache' }, body };
    },
    // The token before a byte of the body is read, whatever the server's default check.
    { headers: HEADERS, maxBody: OFREP_LIMITS.maxBody, ...(gate ? { credentials: (req: Request) => gate.checkRequest(req) } : {}) },
  );
}

/**
 * `POST /ofrep/v1/evaluate/flags/{key}` as a raw uWS route: the single-flag evaluation is what a
 * mod or an SDK calls per read, so it takes the few headers it needs straight from uWS, reads
 * the body in place and answers with the flag's outcome serialised once per bundle version
 * (FlagSet.answer). What the generic router would do it does too, in the same order: 400 on a
 * malformed key, 413 on a declared body over the limit, then 401 from the headers alone, both
 * refusals before a byte of the body is read and with the connection closed; 413 again once
 * the body passes the limit; `?errors=body` for those refusals; counted against the connection
 * caps until answered or the client went away.
 */
function mountFlag(server: HttpServer, gate: BearerGate | null, flags: FlagSet, serverId: string | null, now: () => number): void {
  const maxBody = OFREP_LIMITS.maxBody;
  const site = OFREP_FLAG_SITE;
  const headers: HeaderBytes = { of: null, bytes: [] };
  server.raw(site.method, site.path, (res, req, control, peer) => {
    const query = req.getQuery();
    const call: FlagCall = {
      aborted: false,
      answered: false,
      finished: false,
      peer,
      // Read only when there is a query: `?errors=body` is all it can change.
      errorsInBody: query ? errorsInBodyOf(query, req.getHeader(CONTENT_TYPE)) : null,
      key: '',
      size: 0,
      chunks: null,
    };
    res.onAborted(() => {
      call.aborted = true;
      if (!call.finished) {
        call.finished = true;
        control.done(call);
      }
    });
    if (refusedBeforeBody(res, req, call, control, gate, query)) return;
    res.onData((ab, isLast) => {
      if (call.finished) return;
      try {
        call.size += ab.byteLength;
        if (call.size > maxBody) {
          failRaw(res, call, tooLarge(maxBody), control, site, true);
          return;
        }
        if (!isLast) {
          if (ab.byteLength > 0) (call.chunks ??= []).push(Buffer.from(ab.slice(0)));
          return;
        }
        // A body in one chunk is read in place, during this callback only.
        const body = call.chunks === null ? Buffer.from(ab) : Buffer.concat([...call.chunks, Buffer.from(ab)], call.size);
        const out = evaluateOne(flags, call.key, body, serverId, now);
        call.answered = true;
        if (!call.aborted) writeFlagAnswer(res, out, control, headers);
        call.finished = true;
        control.done(call);
      } catch (err) {
        failRaw(res, call, err, control, site);
      }
    });
  });
}

/**
 * The refusals made from the URL and headers alone, in the generic router's order: 400 on a
 * malformed key, 413 on a declared body over the limit, 401 from the token; the last two close
 * the connection. Sets the call's key; true when the call was answered.
 */
function refusedBeforeBody(res: UwsResponse, req: UwsRequest, call: FlagCall, control: RawControl, gate: BearerGate | null, query: string): boolean {
  const site = OFREP_FLAG_SITE;
  try {
    call.key = decodeParam(req.getParameter(0) ?? '');
  } catch (err) {
    failRaw(res, call, err, control, site);
    return true;
  }
  const declared = req.getHeader(CONTENT_LENGTH);
  if (declared !== '' && Number(declared) > OFREP_LIMITS.maxBody) {
    failRaw(res, call, tooLarge(OFREP_LIMITS.maxBody), control, site, true);
    return true;
  }
  if (gate !== null) {
    // The gate's order: the first form present is the one judged.
    const authorization = req.getHeader(AUTHORIZATION);
    const headerToken = authorization === '' ? req.getHeader(X_BRAIN_TOKEN) : '';
    try {
      gate.check(authorization, headerToken, authorization === '' && headerToken === '' ? query : undefined);
    } catch (err) {
      failRaw(res, call, err, control, site, true);
      return true;
    }
  }
  const coding = contentCodingRefusal(req.getHeader(CONTENT_ENCODING));
  if (coding !== null) {
    failRaw(res, call, coding, control, site, true);
    return true;
  }
  return false;
}

/** The server's headers for every response, as bytes: rebuilt only when the server's object changes. */
interface HeaderBytes {
  of: Readonly<Record<string, string>> | null;
  bytes: [Buffer, Buffer][];
}

/** Writes a single-flag answer: its status when not 200, the server's headers, the JSON type, the body. */
function writeFlagAnswer(res: UwsResponse, out: { status: number; body: Buffer | string }, control: RawControl, headers: HeaderBytes): void {
  if (out.status !== 200) res.writeStatus(statusLine(out.status));
  if (headers.of !== control.defaultHeaders) {
    headers.of = control.defaultHeaders;
    headers.bytes = Object.entries(headers.of).map(([name, value]) => [Buffer.from(name), Buffer.from(value)]);
  }
  for (let i = 0; i < headers.bytes.length; i++) res.writeHeader(headers.bytes[i]![0], headers.bytes[i]![1]);
  res.writeHeader(CONTENT_TYPE, JSON_TYPE_BYTES);
  res.end(out.body);
}

/** A single-flag evaluation's answer: 200 with the flag's outcome, else OFREP's `{key, errorCode, errorDetails}`. */
function evaluateOne(flags: FlagSet, key: string, body: Buffer, serverId: string | null, now: () => number): { status: number; body: Buffer | string } {
  const read = readContext(body, serverId);
  if (!read.ok) return { status: 400, body: JSON.stringify({ key, errorCode: read.errorCode, errorDetails: read.details }) };
  const flag = Object.hasOwn(flags.flags, key) ? flags.flags[key] : undefined;
  if (!flag)
    return {
      status: 404,
      body: JSON.stringify({ key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `no flag ${JSON.stringify(key)} in bundle version ${flags.version}` }),
    };
  const r = evaluateFlag(key, flag, read.ctx, now());
  if (!r.ok) return { status: 400, body: JSON.stringify({ key, errorCode: r.errorCode, errorDetails: r.message }) };
  return { status: 200, body: flags.answer(key, r) };
}

/** The 413 of an evaluation body over OFREP_LIMITS.maxBody (the generic router's words). */
function tooLarge(maxBody: number): HttpError {
  return new HttpError('payload_too_large', `The request body exceeds ${maxBody} bytes.`);
}
