import { isAscii } from 'node:buffer';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import uWS from 'uWebSockets.js';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { echoedPath, HttpError, quoteId } from './errors.js';
import { answerFailure, ClientAborted, decodeParam, type FailureSite, type GuardState } from './guard.js';
import type { Reply } from './reply.js';
import { writeReply, writeError } from './write.js';
import { CLIENT_CLOSED, observeAnswered, observeResponse, type RequestObserver } from './observe.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { checkTlsFiles } from './tls.js';
import { contentCodingRefusal, type Encoding } from './codec.js';
import { errorsInBodyOf } from './errors-in-body.js';
import { CONTENT_ENCODING, headerKey } from './header-key.js';
import { ConnectionCounter, DEFAULT_CONNECTION_CAPS, type ConnectionCaps, type Peer } from './connections.js';
import { ByteBudget } from './byte-budget.js';
import type { RouteScope } from './scope.js';
import { addressText } from './address-text.js';
import { SECURITY_HEADERS } from './security-headers.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/** Everything a handler may read of a request, copied out of uWS before the handler runs. */
export interface Request {
  readonly method: Method;
  /** Path without the query string, as sent. */
  readonly path: string;
  /** Raw query string without the '?', '' when absent. */
  readonly query: string;
  /** The request target as sent: path plus '?query' when there is one (what request signatures cover). */
  readonly target: string;
  /** Path parameters by name, from ':name' segments of the route pattern. */
  readonly params: Readonly<Record<string, string>>;
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
  /** The whole body for routes with body 'buffer' (empty Buffer when none was sent). */
  readonly body: Buffer;
  /** The body as a stream for routes with body 'stream'; null otherwise. */
  readonly stream: Readable | null;
  /** Set when the client went away; handlers doing long work may check it. */
  readonly aborted: boolean;
  /** Who may call the route, as its mount declared it (RouteOptions.scope); null when it declared nothing. */
  readonly scope: RouteScope | null;
  /** Parsed query, built on first use. */
  searchParams(): URLSearchParams;
}

export type Handler = (req: Request) => Reply | Promise<Reply>;

/**
 * A route's credential check, run on the request's headers before a byte of its body is read
 * (the Request's body is empty then): it throws (or rejects with) the HttpError that refuses
 * the request, which is answered and its connection closed at once. A promise pauses the
 * socket while it runs, so nothing more of the body is taken in meanwhile.
 */
export type CredentialCheck = (req: Request) => void | Promise<void>;

export interface RouteOptions {
  /** How the body is delivered: whole ('buffer', the default for POST/PUT/PATCH), as a stream, or not read. */
  body?: 'buffer' | 'stream' | 'none';
  /** Largest body accepted, in bytes; more is a 413. Default 1 MiB. */
  maxBody?: number;
  /**
   * Header names (lower-case) to copy. By default all headers are copied; a hot route lists
   * the few it reads, which saves a walk over every header.
   */
  headers?: readonly string[];
  /**
   * Tried first, on the uWS request itself, for a hot path whose common case needs none of the
   * generic layers (header copies, the request object, abort handling): it returns the whole
   * reply, or null having changed nothing, and the request then goes the usual way. Runs for
   * the route's own method only (not the HEAD of a GET); a throw is answered as a handler's is
   * (an HttpError with its own status, anything else 500). It may instead return
   * a promise of the reply, when everything it needs from the request is read and only a
   * shared record must be awaited: the request is then counted in flight and guarded against
   * the client going away, and a rejection is answered like a handler's throw.
   */
  shortcut?: (req: UwsRequest) => ShortcutReply | Promise<ShortcutReply> | null;
  /**
   * The same for a hot route with a whole body ('buffer', a pattern without parameters): tried
   * on a request that declares its Content-Length within maxBody and has no query string, with
   * the route's `headers` (which it must list) copied as the handler would get them, and no
   * Content-Encoding but identity (a compressed body is refused the usual way). It returns
   * what to do with the body, or null having changed nothing (the request then goes the usual
   * way, its headers not read twice). Once taken, the body is read as the usual way reads it
   * (same limit, the request counted in flight and against the connection caps) and handed over
   * as a latin1 string when it is all ASCII (the same bytes, with no copy of them kept), else as
   * a Buffer. The taker answers with a whole reply or a promise of one, or null to have the
   * route's handler run on the request after all; a throw or a rejection is answered as a
   * handler's is. It stands in for the route's credential check before the body, so it must
   * take only requests that check passes. The route's handler must answer whole replies (no stream).
   */
  bodyShortcut?: (headers: Readonly<Record<string, string>>) => BodyTaker | null;
  /**
   * The credential check run before the body (see CredentialCheck): by default the server's
   * (ServerOptions.credentials); 'public' for a route anyone may call (a login, a webhook whose
   * signature is checked over the body, which may still pass its own header check here).
   * Only routes that read a body run it: the others check their credential in the handler,
   * with nothing to read first.
   */
  credentials?: 'public' | CredentialCheck;
  /**
   * Who may call the route (see scope.ts), usually declared by mounting it through scoped().
   * The server only carries it: on each request, for the authenticator, and in routes().
   */
  scope?: RouteScope;
  /**
   * Headers for the answer of a request the server refuses before its handler runs (a body over
   * `maxBody`, a compressed body, a header given twice; not a connection cap, whose refusal stays
   * cheap), looked up from its headers and path
   * params: a browser-facing route's CORS headers, without which the page could not read the
   * refusal. A rejection adds none.
   */
  refusalHeaders?: (req: Request) => Promise<Record<string, string>>;
}

/** What a shortcut answers with: any reply but a stream. */
export type ShortcutReply = Exclude<Reply, { stream: Readable }>;

/**
 * What a body shortcut does with the body it took (see RouteOptions.bodyShortcut); null hands
 * the request to the route's handler. `bytes` are the body's own bytes, to hash or check while
 * the taker runs (a string body would be encoded again for that): they may be uWS's memory,
 * gone (zero length) once the taker returns, so nothing may keep them.
 */
export type BodyTaker = (body: Buffer | string, bytes: Uint8Array) => ShortcutReply | Promise<ShortcutReply> | null;

export interface ServerOptions {
  logger?: Logger;
  tls?: { certFile: string; keyFile: string; passphrase?: string };
  /** Headers added to every response (for example a Server header), after SECURITY_HEADERS. */
  defaultHeaders?: Record<string, string>;
  /**
   * Told of every finished request (method, route pattern, status, µs): the access log and
   * request metrics. Unset, requests pay nothing for it.
   */
  observe?: RequestObserver | null;
  /**
   * Honour `?errors=body` on every route (see errors-in-body.ts): the sidecar, whose callers
   * include script runtimes that cannot read a status. Off, the parameter means nothing.
   */
  errorsParam?: boolean;
  /** The credential check every route with a body runs before reading it, unless the route says otherwise. */
  credentials?: CredentialCheck;
  /** Caps on the connections holding a request open, per client address and in all (default 1,000 and 20,000). */
  connections?: ConnectionCaps;
  /** Bytes of request bodies held while they arrive in several pieces, over all requests (default BODY_BUDGET_BYTES). */
  bodyBudget?: number;
}

const DEFAULT_MAX_BODY = 1024 * 1024;

/**
 * What the bodies still arriving may hold in all. A route's body limit bounds one request, the
 * connection caps how many: without this, clients sending bodies just short of the limit (and
 * letting each be cut 10 s after its last bytes) held up to caps × limit, 4 GiB from one address
 * on the sidecar's /ticks, and more addresses stopped the process for lack of memory. A body
 * that comes in one piece is handed on as it lies and is not counted.
 */
export const BODY_BUDGET_BYTES = 256 * 1024 * 1024;

/** Returns what a request's body took from the body budget (idempotent). */
function giveBack(budget: ByteBudget, holder: { held?: number }): void {
  if (!holder.held) return;
  budget.give(holder.held);
  holder.held = 0;
}

/** The 503 of a body that would take the server past its body budget. */
function bodiesSpent(budget: ByteBudget): HttpError {
  return new HttpError('unavailable', `The server is receiving as many request bodies as it may hold (${budget.limit} bytes in all); try again shortly.`, {
    headers: { 'retry-after': '1' },
  });
}

/**
 * Headers a request may carry once: a credential, a signature, a key that makes a request
 * unique, or how its body is framed and read. Given twice, a proxy or a check in front of us
 * may read the other one than we would (uWS frames the body by the first Content-Length), so
 * the request is refused rather than either copy chosen.
 */
const SINGLE_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-brain-token',
  'x-service-signature',
  'x-service-timestamp',
  'idempotency-key',
  'content-type',
  'content-length',
  'content-encoding',
]);
/** uWS's listen option for a port bound without SO_REUSEPORT (its typings name only the enum). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;

/** What a raw route gets besides the uWS handles (see HttpServer.raw). */
export interface RawControl {
  readonly logger: Logger;
  readonly defaultHeaders: Readonly<Record<string, string>>;
  /** Must be called exactly once per request, with its state, when the response is finished or the client went away. */
  done(state: RawState): void;
  /**
   * Takes `bytes` more for the request's body from the server's body budget (given back by
   * done()); throws the 503 when they do not fit. For a body gathered in several pieces.
   */
  hold(state: RawState, bytes: number): void;
}

/** The per-request state a raw route keeps, as its guard (failRaw) needs it. */
export interface RawState extends GuardState {
  /** Set when done() was called for this request. */
  finished?: boolean;
  /** The client address the request is counted against (the `peer` its handler was given). */
  readonly peer?: Peer;
  /** Bytes taken from the body budget by control.hold(). */
  held?: number;
}

/**
 * The guard of a raw route's own callbacks (onData, continuations, a batch's writes): answers
 * `err` as every route does (see answerFailure) and calls done() unless `state` says it was.
 * A throw out of the raw handler itself is caught by the server.
 */
export function failRaw(res: UwsResponse, state: RawState, err: unknown, control: RawControl, site: FailureSite, close = false): void {
  answerFailure(res, state, err, control.defaultHeaders, control.logger, site, close);
  if (!state.finished) {
    state.finished = true;
    control.done(state);
  }
}

/** A raw route's handler; `peer` is the client address its request is counted against, for its state (RawState.peer). */
export type RawHandler = (res: UwsResponse, req: UwsRequest, control: RawControl, peer: Peer) => void;

const REGISTER = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'del',
  HEAD: 'head',
  OPTIONS: 'options',
} as const;

/** Per-request state; kept off the uWS handle, which must not carry our fields. */
class RequestState implements Request, GuardState {
  method: Method;
  path: string;
  query: string;
  target: string;
  params: Record<string, string>;
  headers: Record<string, string>;
  body: Buffer = EMPTY;
  stream: Readable | null = null;
  /** Un-pauses the socket of a streamed body that will not be read, so uWS can discard the rest. */
  releaseBody: (() => void) | null = null;
  aborted = false;
  scope: RouteScope | null;
  /** Set once the handler has produced its reply: the uWS response may be gone after that. */
  settled = false;
  /** Set once an answer went out (or cannot any more): a later failure writes nothing. */
  answered = false;
  /** Counted in flight until finished. */
  counted = false;
  /** Bytes of a body being gathered taken from the server's body budget, until it is whole or the request ends. */
  held = 0;
  /**
   * Set while a whole body is being collected for the handler: a client gone meanwhile ends
   * the request at once, since no last chunk (nor anything else) will come to end it.
   */
  collecting = false;
  errorsInBody: Encoding | null = null;
  /** The route's RouteOptions.refusalHeaders, until a refusal used it. */
  refusalHeaders: ((req: Request) => Promise<Record<string, string>>) | null = null;
  /** The client address counted against the connection caps, once admitted. */
  peer: Peer | null = null;
  /** The reply's body stream while it is written: destroyed (its file closed) if the client goes away. */
  replyStream: Readable | null = null;
  /**
   * How the request observer learns of this request: NOT_OBSERVED (nobody observes, or it was
   * recorded already), UNRECORDED (recorded directly when a whole reply is written, or as 499
   * when the client goes first), or the abort hook of a response being watched by wrapping
   * (the rarer answers: streams, errors, refusals), which records whatever they write.
   */
  observing: Observing = NOT_OBSERVED;
  /** When the request arrived (performance.now()), for the observer. */
  start = 0;
  /** The route pattern, for the observer. */
  route = '';

  /** Observed from here on (see observing): arrived at `start`, on `route`. */
  observed(start: number, route: string): void {
    this.observing = UNRECORDED;
    this.start = start;
    this.route = route;
  }
  private parsedQuery: URLSearchParams | null = null;
  private remote: string | null = null;

  constructor(
    method: Method,
    path: string,
    query: string,
    params: Record<string, string>,
    headers: Record<string, string>,
    private readonly res: UwsResponse | null,
    scope: RouteScope | null,
  ) {
    this.method = method;
    this.path = path;
    this.query = query;
    this.target = query ? `${path}?${query}` : path;
    this.params = params;
    this.headers = headers;
    this.scope = scope;
  }

  /**
   * Read on demand: converting the address costs more than a whole small reply, and most
   * handlers never ask. It is readable while the handler runs; '' once aborted or answered.
   */
  get remoteAddress(): string {
    if (this.remote === null) {
      this.remote = this.res && !this.aborted && !this.settled ? Buffer.from(this.res.getRemoteAddressAsText()).toString() : '';
    }
    return this.remote;
  }

  /**
   * The query string, parsed once. No parameter of any route takes several values, so a name
   * given twice (`?limit=1&limit=500`) is a 400 naming it: taking either value silently would
   * let a proxy or a signature check read a different request than the handler.
   */
  searchParams(): URLSearchParams {
    if (this.parsedQuery !== null) return this.parsedQuery;
    const params = new URLSearchParams(this.query);
    const seen = new Set<string>();
    for (const name of params.keys()) {
      if (seen.has(name)) {
        throw new HttpError('bad_request', `The query parameter ${quoteId(name)} is given more than once.`);
      }
      seen.add(name);
    }
    return (this.parsedQuery = params);
  }
}

const EMPTY = Buffer.alloc(0);
/** HttpServer.gate's answer for a request it refused. */
const REFUSED = 'refused';
const NOTHING = (): void => {};

/**
 * A chunk of a body copied out of the ArrayBuffer uWS lends (neutered when its callback
 * returns) into memory of its own: half the cost of ab.slice(0), which makes a second
 * ArrayBuffer and a Buffer view of it. Not from Buffer's shared pool, so a body kept for
 * later holds its own bytes only.
 */
function copyOf(ab: ArrayBuffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(ab.byteLength);
  copy.set(new Uint8Array(ab));
  return copy;
}

/** A route's body shortcut with what a taken request needs of its route. */
interface BodyRoute {
  readonly shortcut: NonNullable<RouteOptions['bodyShortcut']>;
  readonly handler: Handler;
  readonly maxBody: number;
  readonly scope: RouteScope | null;
  readonly site: FailureSite;
}

function bodyShortcutOf(
  options: RouteOptions,
  bodyMode: string,
  names: readonly string[],
  handler: Handler,
  maxBody: number,
  scope: RouteScope | null,
  site: FailureSite,
): BodyRoute | null {
  const shortcut = options.bodyShortcut;
  if (shortcut === undefined) return null;
  if (bodyMode !== 'buffer' || names.length > 0 || options.headers === undefined || options.refusalHeaders !== undefined)
    throw new Error(
      `route ${site.method} ${site.path}: a body shortcut needs a whole body, a pattern without parameters and the headers it reads listed, and no refusal headers`,
    );
  return { shortcut, handler, maxBody, scope, site };
}

/**
 * A whole reply that comes after the request's first callback (a shortcut's promised reply, a
 * body shortcut's answer): written as dispatch writes one, observed without wrapping the
 * response (the reply's status, or 499 when the client went first; only a failure, whose answer
 * answerFailure decides, is watched by wrapping), and `done` called exactly once.
 */
class LateAnswer {
  private observed = false;
  private ended = false;

  constructor(
    protected readonly res: UwsResponse,
    protected readonly state: GuardState,
    protected readonly site: FailureSite,
    private readonly start: number,
    private readonly observe: RequestObserver | null,
    private readonly logger: Logger,
    private readonly defaults: Record<string, string>,
    private readonly done: () => void,
  ) {}

  /** The client went away: nothing will be written; recorded as 499. */
  aborted(): void {
    this.state.aborted = true;
    this.record(CLIENT_CLOSED);
  }

  /** Answers with a reply (inside uWS's own callback) or, once it settles, a promise of one. */
  answer(reply: ShortcutReply | Promise<ShortcutReply>): void {
    if (reply instanceof Promise)
      reply.then(
        (r) => this.settle(r, null, false),
        (err: unknown) => this.settle(null, err, false),
      );
    else this.settle(reply, null, true);
  }

  /**
   * `corked`: inside uWS's own callback, where a write needs no cork of its own; `close` for a
   * refusal before the body was read. answerFailure corks, skips a client that went away and
   * closes a half-written answer itself.
   */
  protected settle(r: ShortcutReply | null, err: unknown, corked: boolean, close = false): void {
    const { res, state, site } = this;
    try {
      if (r === null) {
        if (this.observe !== null && !this.observed && !state.aborted) {
          this.observed = true;
          observeResponse(res, site.method, site.path, this.observe, this.logger, this.start);
        }
        answerFailure(res, state, err, this.defaults, this.logger, site, close);
      } else if (!state.aborted) {
        state.answered = true;
        if (corked) writeReply(res, state, r, this.defaults, this.logger, NOTHING);
        else res.cork(() => writeReply(res, state, r, this.defaults, this.logger, NOTHING));
        this.record(r.status);
      }
    } catch (thrown) {
      answerFailure(res, state, thrown, this.defaults, this.logger, site);
    } finally {
      this.end();
    }
  }

  private record(status: number): void {
    if (this.observe === null || this.observed) return;
    this.observed = true;
    observeAnswered(this.site.method, this.site.path, status, this.start, this.observe, this.logger);
  }

  protected end(): void {
    if (this.ended) return;
    this.ended = true;
    this.done();
  }
}

/**
 * A request a body shortcut took: its body gathered as readWhole gathers one, handed to the
 * taker (or, declined after all, to the route's handler), and answered as a LateAnswer.
 */
class TakenBody extends LateAnswer {
  private chunks: Buffer[] | null = null;
  private size = 0;
  private collecting = true;
  /** Bytes of the chunks taken from the server's body budget. */
  held = 0;

  constructor(
    res: UwsResponse,
    state: GuardState,
    private readonly route: BodyRoute,
    private readonly headers: Record<string, string>,
    private readonly take: BodyTaker,
    private readonly bodies: ByteBudget,
    start: number,
    observe: RequestObserver | null,
    logger: Logger,
    defaults: Record<string, string>,
    done: () => void,
  ) {
    super(res, state, route.site, start, observe, logger, defaults, done);
  }

  override aborted(): void {
    super.aborted();
    // Nothing more will come to end a request whose body was still being read.
    if (this.collecting) {
      this.collecting = false;
      this.end();
    }
  }

  data(ab: ArrayBuffer, isLast: boolean): void {
    if (!this.collecting) return;
    try {
      this.size += ab.byteLength;
      if (this.size > this.route.maxBody) {
        this.collecting = false;
        this.settle(null, tooLarge(this.route.maxBody), true, true);
        return;
      }
      let body: Buffer | string;
      let bytes: Buffer;
      if (isLast && this.chunks === null) {
        bytes = Buffer.from(ab);
        body = bodyOf(ab, bytes);
      } else {
        if (!this.bodies.take(ab.byteLength)) {
          this.collecting = false;
          this.chunks = null;
          this.settle(null, bodiesSpent(this.bodies), true, true);
          return;
        }
        this.held += ab.byteLength;
        (this.chunks ??= []).push(copyOf(ab));
        if (!isLast) return;
        body = bytes = Buffer.concat(this.chunks, this.size);
        this.chunks = null;
        giveBack(this.bodies, this);
      }
      this.collecting = false;
      const reply = this.take(body, bytes);
      this.answer(reply !== null ? reply : this.handled(body));
    } catch (err) {
      this.collecting = false;
      this.settle(null, err, true);
    }
  }

  protected override end(): void {
    giveBack(this.bodies, this);
    super.end();
  }

  /** Declined after all: the route's handler gets the request the usual way would have built. */
  private handled(body: Buffer | string): ShortcutReply | Promise<ShortcutReply> {
    const { site, scope } = this.route;
    const req = new RequestState(site.method as Method, site.path, '', {}, this.headers, null, scope);
    req.body = typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
    const result = this.route.handler(req);
    return result instanceof Promise ? result.then((r) => whole(r, site)) : whole(result, site);
  }
}

/** A handler's reply on a route with a body shortcut, which must be whole. */
function whole(reply: Reply, site: FailureSite): ShortcutReply {
  if (!('stream' in reply)) return reply;
  reply.stream.destroy();
  throw new Error(`route ${site.method} ${site.path}: a route with a body shortcut answered with a stream`);
}

/**
 * A whole body that came in one chunk: a latin1 string of the same bytes when they are all
 * ASCII (one copy, and no buffer of its own to allocate and later decode), else a copy (copyOf).
 */
function bodyOf(ab: ArrayBuffer, view: Buffer): Buffer | string {
  if (ab.byteLength === 0) return EMPTY;
  return isAscii(view) ? view.toString('latin1') : copyOf(ab);
}

/** A Content-Length of plain decimal digits declaring at most `max` bytes. */
function plainLength(value: string, max: number): boolean {
  if (value.length === 0 || value.length > 15) return false;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return false;
    n = n * 10 + digit;
  }
  return n <= max;
}

/** See RequestState.observing. */
type Observing = typeof NOT_OBSERVED | typeof UNRECORDED | (() => void);
const NOT_OBSERVED = 0;
const UNRECORDED = 1;

/** The state of a request answered inside its first callback (no body read, nothing in flight). */
function direct(method: string): GuardState & { method: string } {
  return { aborted: false, answered: false, method };
}

function paramNames(pattern: string): string[] {
  return pattern
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
}

/** A route's RouteOptions.headers, with each name also as the bytes uWS looks it up by (see headerKey). */
interface WantedHeaders {
  readonly names: readonly string[];
  readonly keys: readonly ArrayBuffer[];
}

/**
 * The request's headers (only `wanted` when the route names them), copied out of uWS's request,
 * which dies with its callback; the first copy of each, as getHeader() reads it. `repeated`
 * names a header of SINGLE_HEADERS that came more than once (null when none did).
 */
function copyHeaders(req: UwsRequest, wanted: WantedHeaders | null): { headers: Record<string, string>; repeated: string | null } {
  const headers: Record<string, string> = {};
  let repeated: string | null = null;
  if (wanted !== null) {
    const { names, keys } = wanted;
    for (let i = 0; i < names.length; i++) {
      const value = req.getHeader(keys[i]!);
      if (value) headers[names[i]!] = value;
    }
  } else {
    req.forEach((k, v) => {
      if (!Object.hasOwn(headers, k)) headers[k] = v;
      else if (repeated === null && SINGLE_HEADERS.has(k)) repeated = k;
    });
  }
  return { headers, repeated };
}

/**
 * A small router over uWebSockets.js. Handlers get a plain Request and return a Reply (or a
 * promise of one); the server owns abort handling, corking, body limits, error shapes and
 * graceful shutdown, so that no service touches a uWS handle directly.
 */
export class HttpServer {
  readonly app: TemplatedApp;
  private readonly logger: Logger;
  private readonly defaultHeaders: Record<string, string>;
  private listenSocket: us_listen_socket | null = null;
  private inFlight = 0;
  private drained: (() => void) | null = null;
  private closing = false;
  /** Every route pattern with its methods, each with the scope it declared (null for none). */
  private readonly patterns = new Map<string, Map<Method, RouteScope | null>>();
  private fallbackInstalled = false;
  private readonly observe: RequestObserver | null;
  private readonly errorsParam: boolean;
  private readonly credentials: CredentialCheck | null;
  private readonly connections: ConnectionCounter;
  private readonly bodies: ByteBudget;

  constructor(options: ServerOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.observe = options.observe ?? null;
    this.errorsParam = options.errorsParam === true;
    this.credentials = options.credentials ?? null;
    this.connections = new ConnectionCounter(options.connections ?? DEFAULT_CONNECTION_CAPS);
    this.bodies = new ByteBudget(options.bodyBudget ?? BODY_BUDGET_BYTES);
    this.defaultHeaders = { ...SECURITY_HEADERS, ...options.defaultHeaders };
    if (options.tls) checkTlsFiles(options.tls);
    this.app = options.tls
      ? uWS.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile, passphrase: options.tls.passphrase ?? '' })
      : uWS.App();
  }

  get(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('GET', pattern, handler, options);
  }
  post(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('POST', pattern, handler, options);
  }
  put(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('PUT', pattern, handler, options);
  }
  patch(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('PATCH', pattern, handler, options);
  }
  delete(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('DELETE', pattern, handler, options);
  }

  /**
   * This server seen by the routes of one scope: every route mounted through the view declares
   * it, so the scope stands on the line that mounts the route (`reads.get('/v1/servers', …)`).
   */
  scoped(scope: RouteScope): ScopedRoutes {
    return new ScopedRoutes(this, scope);
  }

  route(method: Method, pattern: string, handler: Handler, options: RouteOptions = {}): this {
    if (this.fallbackInstalled) throw new Error(`route ${method} ${pattern} added after listen(); add every route first`);
    const names = paramNames(pattern);
    const bodyMode = options.body ?? (method === 'POST' || method === 'PUT' || method === 'PATCH' ? 'buffer' : 'none');
    const maxBody = options.maxBody ?? DEFAULT_MAX_BODY;
    const wanted: WantedHeaders | null = options.headers ? { names: options.headers, keys: options.headers.map(headerKey) } : null;
    const scope = options.scope ?? null;
    this.listRoute(method, pattern, scope);
    // HTTP requires HEAD wherever GET is served: same handler, the body is left off on write.
    if (method === 'GET') this.listRoute('HEAD', pattern, scope);
    const shortcut = options.shortcut;
    const site: FailureSite = { method, path: pattern };
    const bodyRoute = bodyShortcutOf(options, bodyMode, names, handler, maxBody, scope, site);
    const check = bodyMode === 'none' || options.credentials === 'public' ? null : (options.credentials ?? this.credentials);
    const observe = this.observe;
    const refusalHeaders = options.refusalHeaders ?? null;
    const uwsHandler =
      (as: Method) =>
      (res: UwsResponse, req: UwsRequest): void => {
        let state: RequestState | null = null;
        const start = observe !== null ? performance.now() : 0;
        try {
          if (shortcut !== undefined && as === method && !this.closing && this.shortcut(res, req, shortcut, site, start)) return;
          // req is only valid inside this callback: everything needed later is copied out here.
          const { headers, repeated } = copyHeaders(req, wanted);
          const coding = bodyMode === 'none' ? null : contentCodingRefusal(wanted !== null ? req.getHeader(CONTENT_ENCODING) : headers['content-encoding']);
          if (bodyRoute !== null && coding === null && as === method && !this.closing && this.bodyShortcut(res, req, headers, bodyRoute, start)) return;
          const params: Record<string, string> = {};
          const s = (state = new RequestState(as, req.getUrl(), req.getQuery() ?? '', params, headers, res, scope));
          if (observe !== null) s.observed(start, pattern);
          s.refusalHeaders = refusalHeaders;
          if (this.errorsParam) s.errorsInBody = errorsInBodyOf(s.query, req.getHeader('content-type'));
          // Before anything can fail: a bodiless answer (HEAD) does not finish the response for
          // uWS, and returning from this callback with neither is fatal.
          res.onAborted(() => this.aborted(res, s));
          for (let i = 0; i < names.length; i++) params[names[i]!] = decodeParam(req.getParameter(i) ?? '');
          this.begin(s);
          if (this.closing) {
            s.answered = true;
            this.watch(res, s);
            writeError(res, s, new HttpError('unavailable', 'The server is shutting down.'), this.defaultHeaders, { close: true });
            this.end(s);
            return;
          }
          try {
            s.peer = this.connections.admit(res);
          } catch (err) {
            // A flood's refusal stays cheap: no look-up of headers for it.
            s.refusalHeaders = null;
            this.refuse(res, s, err);
            return;
          }
          if (repeated !== null) {
            this.refuseRepeated(res, s, repeated);
            return;
          }
          // A declared body over the limit, then the credential, from the headers, before a byte
          // of the body is taken in.
          if (bodyMode !== 'none' && Number(s.headers['content-length'] ?? NaN) > maxBody) {
            this.refuse(res, s, tooLarge(maxBody));
            return;
          }
          const gate = this.gate(res, s, check, coding);
          if (gate === REFUSED) return;
          if (bodyMode === 'buffer') this.readWhole(res, s, maxBody, handler, gate);
          else if (bodyMode === 'stream') this.readStream(res, s, maxBody, handler, gate);
          else this.dispatch(res, s, handler);
        } catch (err) {
          if (state) this.fail(res, state, err);
          else this.failEarly(res, req, as, err, pattern, start);
        }
      };

    this.app[REGISTER[method]](pattern, uwsHandler(method));
    if (method === 'GET') this.app.head(pattern, uwsHandler('HEAD'));
    return this;
  }

  /**
   * The route's credential check, then a compressed body's 415 (after the credential: a caller
   * without one learns nothing more), both from the headers: null when both passed at once, the
   * promise of a check still running (rejected with the refusal), or REFUSED when the request
   * was refused already.
   */
  private gate(res: UwsResponse, s: RequestState, check: CredentialCheck | null, coding: HttpError | null): Promise<void> | null | typeof REFUSED {
    let gate: Promise<void> | null = null;
    if (check !== null) {
      try {
        const verdict = check(s);
        if (verdict instanceof Promise) gate = verdict;
      } catch (err) {
        this.refuse(res, s, err);
        return REFUSED;
      }
    }
    if (coding === null) return gate;
    if (gate === null) {
      this.refuse(res, s, coding);
      return REFUSED;
    }
    return gate.then(() => {
      throw coding;
    });
  }

  /** The client went away: a body being read stops, and a reply or request stream is closed now. */
  private aborted(res: UwsResponse, s: RequestState): void {
    s.aborted = true;
    this.abortObserved(s);
    if (s.collecting) {
      s.collecting = false;
      this.end(s);
    }
    try {
      // A download cut short (a closed tab, a <video> seeking) closes its file now, not at
      // garbage collection.
      if (s.replyStream) s.replyStream.destroy();
      if (s.stream) s.stream.destroy(new ClientAborted());
    } catch (err) {
      answerFailure(res, s, err, this.defaultHeaders, this.logger, s);
    }
  }

  /** Answers a failure that came before the request had its state (so before any abort handler). */
  private failEarly(res: UwsResponse, req: UwsRequest, method: Method, err: unknown, route: string, start: number): void {
    if (this.observe !== null) observeResponse(res, method, route, this.observe, this.logger, start);
    const state = this.direct(method, req);
    res.onAborted(() => {
      state.aborted = true;
    });
    answerFailure(res, state, err, this.defaultHeaders, this.logger, { method, path: req.getUrl() });
  }

  /** Answers from a route's shortcut; false when it declined (having written nothing). */
  private shortcut(res: UwsResponse, req: UwsRequest, shortcut: NonNullable<RouteOptions['shortcut']>, site: FailureSite, start: number): boolean {
    // A shortcut's synchronous reply is written inside the callback: never aborted, never in flight after it.
    const state = this.direct(site.method, req);
    const observe = this.observe;
    try {
      const reply = shortcut(req);
      if (reply === null) return false;
      if (reply instanceof Promise) {
        this.deferred(res, state, reply, site, start);
        return true;
      }
      state.answered = true;
      writeReply(res, state, reply, this.defaultHeaders, this.logger, NOTHING);
      // Written whole with a known status: recorded directly, with none of the wrapping a
      // response answered later needs (the common signed pull, answered from memory).
      if (observe !== null) observeAnswered(site.method, site.path, reply.status, start, observe, this.logger);
    } catch (err) {
      if (observe !== null) observeResponse(res, site.method, site.path, observe, this.logger, start);
      answerFailure(res, state, err, this.defaultHeaders, this.logger, { method: site.method, path: req.getUrl() });
    }
    return true;
  }

  /**
   * Tries a route's body shortcut (see RouteOptions.bodyShortcut); false when it declined, having
   * changed nothing. Once taken, the request is a TakenBody's to finish: read, answered (or
   * refused) and ended exactly once, as readWhole and dispatch finish a request.
   */
  private bodyShortcut(res: UwsResponse, req: UwsRequest, headers: Record<string, string>, route: BodyRoute, start: number): boolean {
    const declared = headers['content-length'];
    if (declared === undefined || !plainLength(declared, route.maxBody)) return false;
    const query = req.getQuery();
    if (query !== undefined && query !== '') return false;
    const take = route.shortcut(headers);
    if (take === null) return false;
    let peer: Peer;
    try {
      peer = this.connections.admit(res);
    } catch {
      // Over a connection cap: the usual way counts it again and refuses it.
      return false;
    }
    this.begin(null);
    const taken = new TakenBody(
      res,
      this.direct(route.site.method, req),
      route,
      headers,
      take,
      this.bodies,
      start,
      this.observe,
      this.logger,
      this.defaultHeaders,
      () => {
        this.connections.release(peer);
        this.end(null);
      },
    );
    res.onAborted(() => taken.aborted());
    res.onData((ab, isLast) => taken.data(ab, isLast));
    return true;
  }

  /**
   * A shortcut's promised reply: in flight until it settles, written corked unless the client
   * went away. Observed without wrapping the response (a replica's every pull comes this way):
   * the status is the reply's, or 499 when the client left first; only a failure, whose answer
   * answerFailure decides, is watched by wrapping.
   */
  private deferred(res: UwsResponse, state: GuardState, reply: Promise<ShortcutReply>, site: FailureSite, start: number): void {
    const late = new LateAnswer(res, state, site, start, this.observe, this.logger, this.defaultHeaders, () => this.end(null));
    res.onAborted(() => late.aborted());
    this.begin(null);
    late.answer(reply);
  }

  /**
   * A route whose handler works on the uWS handles itself, for a hot path that cannot afford
   * the generic layers (header copies, request object, body copy). The server still answers
   * 503 while closing, counts the request in flight until control.done(), lists the pattern
   * for 404/405, and answers a throw out of the handler itself (then calls done()). The
   * handler owns onAborted, the body and the error shape, and guards its own later callbacks
   * with failRaw.
   */
  raw(method: Method, pattern: string, handler: RawHandler, options: Pick<RouteOptions, 'scope'> = {}): this {
    if (this.fallbackInstalled) throw new Error(`route ${method} ${pattern} added after listen(); add every route first`);
    this.listRoute(method, pattern, options.scope ?? null);
    const site = { method, path: pattern };
    const connections = this.connections;
    const control: RawControl = {
      logger: this.logger,
      defaultHeaders: this.defaultHeaders,
      done: (state) => {
        if (state.peer !== undefined) connections.release(state.peer);
        giveBack(this.bodies, state);
        this.end(null);
      },
      hold: (state, bytes) => {
        if (!this.bodies.take(bytes)) throw bodiesSpent(this.bodies);
        state.held = (state.held ?? 0) + bytes;
      },
    };
    const observe = this.observe;
    this.app[REGISTER[method]](pattern, (res: UwsResponse, req: UwsRequest) => {
      if (observe !== null) observeResponse(res, method, pattern, observe, this.logger);
      this.begin(null);
      let peer: Peer | null = null;
      try {
        if (this.closing) {
          writeError(res, this.direct(method, req), new HttpError('unavailable', 'The server is shutting down.'), this.defaultHeaders, { close: true });
          this.end(null);
          return;
        }
        peer = connections.admit(res);
        handler(res, req, control, peer);
      } catch (err) {
        // The handler had not finished the request (a throw comes before its done()), and its
        // own state is out of reach here: the answer goes out unless the response is gone. A
        // refusal by the connection caps closes the connection, as every refusal before the body does.
        answerFailure(res, this.direct(method, req), err, this.defaultHeaders, this.logger, site, peer === null);
        if (peer !== null) connections.release(peer);
        this.end(null);
      }
    });
    return this;
  }

  /** The state of a request answered inside its first callback, `?errors=body` read when this server honours it. */
  private direct(method: string, req: UwsRequest): GuardState & { method: string } {
    const state = direct(method);
    if (this.errorsParam) state.errorsInBody = errorsInBodyOf(req.getQuery(), req.getHeader('content-type'));
    return state;
  }

  private listRoute(method: Method, pattern: string, scope: RouteScope | null): void {
    let methods = this.patterns.get(pattern);
    if (!methods) this.patterns.set(pattern, (methods = new Map()));
    methods.set(method, scope);
  }

  /**
   * Every registered route pattern with its methods (HEAD included where GET is), in
   * registration order, and the scope each method's route declared (absent: none).
   */
  routes(): { pattern: string; methods: Method[]; scopes: Partial<Record<Method, RouteScope>> }[] {
    return [...this.patterns.entries()].map(([pattern, methods]) => {
      const scopes: Partial<Record<Method, RouteScope>> = {};
      for (const [method, scope] of methods) if (scope !== null) scopes[method] = scope;
      return { pattern, methods: [...methods.keys()], scopes };
    });
  }

  /** Counts a request in flight; `state` (null for a raw route, which counts by done()) makes end() idempotent. */
  private begin(state: RequestState | null): void {
    if (state) state.counted = true;
    this.inFlight++;
  }

  private end(state: RequestState | null): void {
    if (state) {
      giveBack(this.bodies, state);
      if (!state.counted) return;
      state.counted = false;
      if (state.peer !== null) this.connections.release(state.peer);
    }
    if (--this.inFlight === 0 && this.drained) this.drained();
  }

  /**
   * The 400 of a header given twice, answered on the next turn, outside uWS's callback. Ended
   * inside it, the close is put off until the answer is written, and uWS goes on parsing what
   * followed in the same packet: the bytes after the first Content-Length, which a proxy that
   * took the other copy sent as this request's body, were answered as a request of their own. A
   * request arriving before an answer makes uWS close the connection: nothing after it runs.
   */
  private refuseRepeated(res: UwsResponse, state: RequestState, header: string): void {
    const refusal = new HttpError('bad_request', `The header ${header} is given more than once.`);
    setImmediate(() => {
      // Outside uWS's callback and the route's guard: nothing thrown here may reach the process.
      try {
        this.refuse(res, state, refusal);
      } catch (err) {
        this.logger.error('refusal failed', { method: state.method, path: state.path, error: String(err) });
        // Its in-flight count and its place under the per-address cap are given back all the same.
        this.end(state);
      }
    });
  }

  /**
   * Refuses a request before its body is read (a credential, a connection cap, a declared size):
   * the answer goes out with the connection closed, so nothing more of the body is taken in;
   * uWS sends the answer before it closes, and the client reads it.
   */
  private refuse(res: UwsResponse, state: RequestState, err: unknown): void {
    state.settled = true;
    const lookup = state.refusalHeaders;
    if (lookup !== null && err instanceof HttpError) {
      // Answered once the route's headers are known; nothing more of the body is read meanwhile
      // (none is asked for), and the request stays in flight until then.
      state.refusalHeaders = null;
      new Promise<Record<string, string>>((resolve) => resolve(lookup(state)))
        .catch(() => ({}))
        .then((headers) => {
          const refusal =
            Object.keys(headers).length === 0 ? err : new HttpError(err.code, err.message, { details: err.details, headers: { ...err.headers, ...headers } });
          this.refuse(res, state, refusal);
        })
        .catch((thrown: unknown) => this.logger.error('refusal failed', { method: state.method, path: state.path, error: String(thrown) }));
      return;
    }
    try {
      if (state.stream && !state.stream.destroyed) state.stream.destroy();
    } catch (cleanup) {
      this.logger.error('request cleanup failed', { method: state.method, path: state.path, error: String(cleanup) });
    }
    this.watch(res, state);
    answerFailure(res, state, err, this.defaultHeaders, this.logger, state, true);
    this.end(state);
  }

  /**
   * Waits for a credential check that needs a look-up, with the socket paused meanwhile (what
   * arrived with the headers is all that is taken in): `go` runs, corked, once it passed; a
   * refusal is answered and closes the connection.
   */
  private afterGate(res: UwsResponse, state: RequestState, gate: Promise<void>, go: () => void): void {
    gate.then(
      () => {
        if (state.aborted || state.settled) {
          this.end(state);
          return;
        }
        try {
          res.cork(go);
        } catch (err) {
          this.fail(res, state, err);
        }
      },
      (err: unknown) => {
        if (!state.settled) this.refuse(res, state, err);
      },
    );
  }

  private readWhole(res: UwsResponse, state: RequestState, maxBody: number, handler: Handler, gate: Promise<void> | null): void {
    // Chunks are collected into a list and joined once; the ArrayBuffer uWS hands over is
    // neutered when the callback returns, so each chunk is copied before it is kept.
    let chunks: Buffer[] | null = null;
    let size = 0;
    let done = false;
    let admitted = gate === null;
    let whole = false;
    let paused = false;
    state.collecting = true;
    res.onData((ab, isLast) => {
      try {
        if (done) return;
        size += ab.byteLength;
        if (size > maxBody) {
          done = true;
          this.refuse(res, state, tooLarge(maxBody));
          return;
        }
        if (isLast && chunks === null) {
          state.body = ab.byteLength === 0 ? EMPTY : copyOf(ab);
        } else {
          if (!this.bodies.take(ab.byteLength)) {
            done = true;
            this.refuse(res, state, bodiesSpent(this.bodies));
            return;
          }
          state.held += ab.byteLength;
          (chunks ??= []).push(copyOf(ab));
          if (!isLast) {
            // The credential is still being looked up: take in nothing more meanwhile. Paused
            // only here, on a chunk that is not the last, so that a socket is never left paused
            // behind a whole body (nothing would resume it for the next request).
            if (!admitted && !paused) {
              paused = true;
              res.pause();
            }
            return;
          }
          state.body = Buffer.concat(chunks, size);
          chunks = null;
          giveBack(this.bodies, state);
        }
        whole = true;
        if (!admitted) return;
        done = true;
        this.dispatch(res, state, handler);
      } catch (err) {
        done = true;
        this.fail(res, state, err);
      }
    });
    if (gate === null) return;
    this.afterGate(res, state, gate, () => {
      if (done) return;
      admitted = true;
      if (paused) {
        paused = false;
        res.resume();
      }
      if (whole) {
        done = true;
        this.dispatch(res, state, handler);
      }
    });
  }

  /** A streamed body: the handler gets the stream at once, or once the credential check passed. */
  private readStream(res: UwsResponse, state: RequestState, maxBody: number, handler: Handler, gate: Promise<void> | null): void {
    const body = this.streamBody(res, state, maxBody, gate !== null);
    state.stream = body.stream;
    if (gate === null) {
      this.dispatch(res, state, handler);
      return;
    }
    this.afterGate(res, state, gate, () => {
      body.release();
      this.dispatch(res, state, handler);
    });
  }

  /**
   * The body as a stream, read as the handler reads it. `held`: the socket starts paused, and
   * stays so until release() (a credential check is running).
   */
  private streamBody(res: UwsResponse, state: RequestState, maxBody: number, held: boolean): { stream: Readable; release(): void } {
    let size = 0;
    let paused = false;
    let holding = held;
    const stream = new Readable({
      read() {
        // Resume only what was paused: uWS's resume() on a socket that is not paused (as when
        // the first read() comes before any data) breaks the next request on the connection.
        if (paused && !holding && !state.aborted) {
          paused = false;
          res.resume();
        }
      },
    });
    state.releaseBody = () => {
      holding = false;
      if (paused && !state.aborted) {
        paused = false;
        res.resume();
      }
    };
    res.onData((ab, isLast) => {
      try {
        if (stream.destroyed) return;
        size += ab.byteLength;
        if (size > maxBody) {
          stream.destroy(tooLarge(maxBody));
          return;
        }
        // Never pause on the last chunk: nothing would resume the socket for the next request.
        // While the credential is looked up (holding), nothing more is taken in either.
        const room = ab.byteLength === 0 || stream.push(copyOf(ab));
        if ((!room || holding) && !isLast && !paused) {
          paused = true;
          res.pause();
        }
        if (isLast) stream.push(null);
      } catch (err) {
        this.fail(res, state, err);
      }
    });
    return {
      stream,
      release: () => {
        holding = false;
        // A stream still full is resumed by the handler's read() instead.
        if (paused && !state.aborted && (stream.readableEnded || stream.readableLength < stream.readableHighWaterMark)) {
          paused = false;
          res.resume();
        }
      },
    };
  }

  private dispatch(res: UwsResponse, state: RequestState, handler: Handler): void {
    state.collecting = false;
    let result: Reply | Promise<Reply>;
    try {
      result = handler(state);
    } catch (err) {
      this.fail(res, state, err);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (reply) => {
          state.settled = true;
          if (state.aborted) {
            // Nobody will read it: a file opened for the reply is closed at once.
            if ('stream' in reply) reply.stream.destroy();
            this.end(state);
            return;
          }
          try {
            if ('stream' in reply) {
              state.replyStream = reply.stream;
              this.watch(res, state);
            }
            state.answered = true;
            res.cork(() => writeReply(res, state, reply, this.defaultHeaders, this.logger, () => this.end(state)));
            if (state.observing === UNRECORDED) this.recorded(state, reply.status);
          } catch (err) {
            this.fail(res, state, err);
          }
        },
        (err: unknown) => this.fail(res, state, err),
      );
    } else {
      state.settled = true;
      state.answered = true;
      if ('stream' in result) {
        state.replyStream = result.stream;
        this.watch(res, state);
      }
      writeReply(res, state, result, this.defaultHeaders, this.logger, () => this.end(state));
      if (state.observing === UNRECORDED) this.recorded(state, result.status);
    }
  }

  /**
   * A whole reply was written: recorded directly, with its status, and none of the wrapping a
   * response answered some other way needs (see RequestState.observing).
   */
  private recorded(state: RequestState, status: number): void {
    state.observing = NOT_OBSERVED;
    observeAnswered(state.method, state.route, status, state.start, this.observe!, this.logger);
  }

  /**
   * About to answer some other way than a whole reply (a stream, an error, a refusal): the
   * response is watched by wrapping from here on, which records the status it writes and when
   * it finishes. Nothing when it was recorded already or nobody observes.
   */
  private watch(res: UwsResponse, state: RequestState): void {
    if (state.observing !== UNRECORDED) return;
    state.observing = observeResponse(res, state.method, state.route, this.observe!, this.logger, state.start);
  }

  /** The client went away: a watched response records what it had (499 unless finished); an unrecorded one records 499. */
  private abortObserved(state: RequestState): void {
    const observing = state.observing;
    if (observing === NOT_OBSERVED) return;
    state.observing = NOT_OBSERVED;
    if (observing === UNRECORDED) observeAnswered(state.method, state.route, CLIENT_CLOSED, state.start, this.observe!, this.logger);
    else observing();
  }

  /** The end of a request that failed anywhere along the way: see answerFailure. */
  private fail(res: UwsResponse, state: RequestState, err: unknown): void {
    state.settled = true;
    try {
      // An unread streamed body is discarded rather than the connection dropped: a client still
      // sending it (fetch) would otherwise fail with EPIPE before it reads this answer.
      if (state.stream && !state.stream.readableEnded) state.stream.destroy();
      state.replyStream?.destroy();
      state.releaseBody?.();
    } catch (cleanup) {
      this.logger.error('request cleanup failed', { method: state.method, path: state.path, error: String(cleanup) });
    }
    this.watch(res, state);
    answerFailure(res, state, err, this.defaultHeaders, this.logger, state);
    this.end(state);
  }

  /** Answers 404 or 405 in the error shape for anything no route matched. */
  private installFallback(): void {
    if (this.fallbackInstalled) return;
    this.fallbackInstalled = true;
    const patterns = [...this.patterns.entries()].map(([p, methods]) => ({ re: patternRegExp(p), methods: [...methods.keys()] }));
    const observe = this.observe;
    this.app.any('/*', (res, req) => {
      const path = req.getUrl();
      const method = req.getMethod().toUpperCase();
      if (observe !== null) observeResponse(res, method, null, observe, this.logger);
      const state = this.direct(method, req);
      // A bodiless answer (HEAD) does not finish the response for uWS: without an abort
      // handler, returning from this callback would be fatal.
      res.onAborted(() => {
        state.aborted = true;
      });
      try {
        const match = patterns.find((p) => p.re.test(path));
        state.answered = true;
        if (match && method === 'OPTIONS') {
          writeReply(res, state, { status: 204, headers: { allow: match.methods.join(', ') } }, this.defaultHeaders, this.logger, NOTHING);
          return;
        }
        const err = match
          ? new HttpError('method_not_allowed', `${method} is not allowed on ${echoedPath(path)}.`, { headers: { allow: match.methods.join(', ') } })
          : new HttpError('not_found', `No route for ${method} ${echoedPath(path)}.`);
        writeError(res, state, err, this.defaultHeaders, {});
      } catch (err) {
        answerFailure(res, state, err, this.defaultHeaders, this.logger, { method, path });
      }
    });
  }

  /**
   * Starts listening; resolves with the bound port (useful with port 0). The port is taken
   * exclusively: uWS would otherwise share it (SO_REUSEPORT) with any other process bound the
   * same way, and the two would split its traffic. A port already taken rejects with
   * `address HOST:PORT is already in use`.
   */
  listen(host: string, port: number): Promise<number> {
    this.installFallback();
    return new Promise((resolve, reject) => {
      const listen = this.app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void;
      listen.call(this.app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) {
          listenFailure(host, port).then(reject, reject);
          return;
        }
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket as never));
      });
    });
  }

  /**
   * Stops accepting connections, lets in-flight requests finish (up to graceMs), then closes
   * every remaining connection.
   */
  async close(graceMs = 5000): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.listenSocket) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    (this.app as TemplatedApp & { close(): void }).close();
  }
}

/** The routes of one scope on a server (see HttpServer.scoped). */
export class ScopedRoutes {
  constructor(
    readonly server: HttpServer,
    readonly scope: RouteScope,
  ) {}

  get(pattern: string, handler: Handler, options?: Omit<RouteOptions, 'scope'>): this {
    return this.route('GET', pattern, handler, options);
  }
  post(pattern: string, handler: Handler, options?: Omit<RouteOptions, 'scope'>): this {
    return this.route('POST', pattern, handler, options);
  }
  put(pattern: string, handler: Handler, options?: Omit<RouteOptions, 'scope'>): this {
    return this.route('PUT', pattern, handler, options);
  }
  patch(pattern: string, handler: Handler, options?: Omit<RouteOptions, 'scope'>): this {
    return this.route('PATCH', pattern, handler, options);
  }
  delete(pattern: string, handler: Handler, options?: Omit<RouteOptions, 'scope'>): this {
    return this.route('DELETE', pattern, handler, options);
  }
  route(method: Method, pattern: string, handler: Handler, options: Omit<RouteOptions, 'scope'> = {}): this {
    this.server.route(method, pattern, handler, { ...options, scope: this.scope });
    return this;
  }
  raw(method: Method, pattern: string, handler: RawHandler): this {
    this.server.raw(method, pattern, handler, { scope: this.scope });
    return this;
  }
}

function patternRegExp(pattern: string): RegExp {
  const body = pattern
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  // Exact: uWS does not route a trailing-slash variant, so matching it here would answer 405
  // for a method the route does serve; such a path is a plain 404.
  return new RegExp(`^${body}$`);
}

/**
 * Why a listen failed: uWS only says that it did, so the same bind is tried once with
 * node:net, whose error carries the reason (its `code` is kept, so a caller can name the fix
 * without reading the message).
 */
function listenFailure(host: string, port: number): Promise<Error> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      const address = addressText(host, port);
      const message =
        err.code === 'EADDRINUSE'
          ? `address ${address} is already in use`
          : err.code === 'EACCES'
            ? `address ${address} is not permitted (${err.code})`
            : `cannot listen on ${address}: ${err.code ?? err.message}`;
      resolve(Object.assign(new Error(message), { code: err.code }));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(new Error(`cannot listen on ${addressText(host, port)}`))));
  });
}

/** The 413 of a body over a route's limit. */
function tooLarge(maxBody: number): HttpError {
  return new HttpError('payload_too_large', `The request body exceeds ${maxBody} bytes.`);
}
