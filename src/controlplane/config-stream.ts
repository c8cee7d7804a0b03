import type { Peer } from '../http/connections.js';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse } from 'uWebSockets.js';
import { HttpError } from '../http/errors.js';
import { failRaw, type HttpServer, type Method, type RawControl, type RawState, type Request } from '../http/server.js';
import { guardTask } from '../http/guard.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../signing/request.js';
import type { Logger } from '../log.js';
import type { SidecarPulls } from './connections.js';
import type { Head, HeadCache } from './heads.js';
import type { ServerKeyAuth } from './server-key-auth.js';
import type { ControlPlaneStore } from './store.js';
import { requestedServer } from './server-param.js';
import type { KeyOwner, ServerId } from './types.js';

/**
 * Limits of the config push streams (`GET /v1/config/stream`). A sidecar holds one stream;
 * a few per key leave room for a reconnect that overlaps the old connection's teardown.
 */
export const CONFIG_STREAM_LIMITS = {
  /** Open streams per server key; one more is refused 429 with Retry-After. */
  perKey: 4,
  /** Open streams on this process in all; one more is refused 429 with Retry-After. */
  total: 20_000,
  /** A comment line is sent this often, so proxies keep the connection and the sidecar sees it alive. */
  heartbeatMs: 25_000,
  /** The reconnect delay the stream asks of an EventSource client (the SSE `retry:` field). */
  retryMs: 2_000,
  /** Seconds a refused client is asked to wait (Retry-After). */
  retryAfterS: 30,
} as const;

export type ConfigStreamLimits = { -readonly [K in keyof typeof CONFIG_STREAM_LIMITS]: number };

/** One open stream: kept small (a few fields), since 10,000 of them may be open on one process. */
interface Stream {
  readonly res: UwsResponse;
  readonly keyId: number;
  readonly tenantId: number;
  readonly server: ServerGroup;
  /** Set once the client went away (or the stream was closed): nothing is written after. */
  gone: boolean;
  /** uWS holds unsent bytes of this stream; a second heartbeat finding it so closes it (a reader that stopped reading). */
  backlogged: boolean;
}

/** The streams of one server and the version last announced to them. */
interface ServerGroup {
  readonly id: ServerId;
  readonly streams: Set<Stream>;
  version: number;
}

const SITE = { method: 'GET' as Method, path: '/v1/config/stream' };
const HEADERS = [
  ['content-type', 'text/event-stream'],
  ['cache-control', 'no-cache'],
  // nginx and others buffer a response unless told not to; an event must go out at once.
  ['x-accel-buffering', 'no'],
] as const;
const HEARTBEAT = ': heartbeat\n\n';

/** An SSE `version` event: what the sidecar compares with the version it applied. */
export function versionEvent(version: number, etag: string): string {
  return `event: version\ndata: ${JSON.stringify({ version, etag })}\n\n`;
}

/**
 * The open config push streams of this process. A publish or rollback (of this process, or
 * of another replica heard over the control plane's broadcast) sets a head, and every stream
 * of that server is sent `{version, etag}` at once; the sidecar then pulls. One timer sends
 * every stream its heartbeat.
 */
export class ConfigStreams {
  private readonly servers = new Map<ServerId, ServerGroup>();
  private readonly perKey = new Map<number, number>();
  private open = 0;
  private timer: NodeJS.Timeout | null = null;
  readonly limits: ConfigStreamLimits;

  constructor(
    private readonly logger: Logger,
    limits: Partial<ConfigStreamLimits> = {},
  ) {
    this.limits = { ...CONFIG_STREAM_LIMITS, ...limits };
  }

  /** Streams open now, in all or of one server. */
  count(serverId?: ServerId): number {
    if (serverId === undefined) return this.open;
    return this.servers.get(serverId)?.streams.size ?? 0;
  }

  /** Throws 429 when one more stream for this key would pass a limit. */
  admit(owner: KeyOwner): void {
    if (this.open >= this.limits.total)
      throw new HttpError('rate_limited', `This control plane holds its limit of ${this.limits.total} config streams; poll GET /v1/config meanwhile.`, {
        headers: { 'retry-after': String(this.limits.retryAfterS) },
      });
    if ((this.perKey.get(owner.keyId) ?? 0) >= this.limits.perKey)
      throw new HttpError('rate_limited', `This server key already holds ${this.limits.perKey} config streams, the limit per key.`, {
        headers: { 'retry-after': String(this.limits.retryAfterS) },
      });
  }

  /** Registers a stream whose headers and first event went out; returns it (for remove). */
  add(res: UwsResponse, owner: KeyOwner, head: Head): Stream {
    let group = this.servers.get(owner.serverId);
    if (!group) this.servers.set(owner.serverId, (group = { id: owner.serverId, streams: new Set(), version: head.version }));
    else if (head.version > group.version) group.version = head.version;
    const stream: Stream = { res, keyId: owner.keyId, tenantId: owner.tenantId, server: group, gone: false, backlogged: false };
    group.streams.add(stream);
    this.perKey.set(owner.keyId, (this.perKey.get(owner.keyId) ?? 0) + 1);
    this.open++;
    this.startTimer();
    return stream;
  }

  remove(stream: Stream): void {
    if (!stream.server.streams.delete(stream)) return;
    stream.gone = true;
    if (stream.server.streams.size === 0) this.servers.delete(stream.server.id);
    const n = (this.perKey.get(stream.keyId) ?? 1) - 1;
    if (n === 0) this.perKey.delete(stream.keyId);
    else this.perKey.set(stream.keyId, n);
    this.open--;
    if (this.open === 0) this.stopTimer();
  }

  /** A head was set: a newer version than the streams of its server were told goes out to each. */
  announce(head: Head): void {
    const group = this.servers.get(head.serverId);
    if (!group || head.version <= group.version) return;
    group.version = head.version;
    const event = versionEvent(head.version, head.etag);
    for (const stream of group.streams) this.write(stream, event);
  }

  /** Ends every stream (the server is closing); their sidecars fall back to polling and reconnect. */
  closeAll(): void {
    this.closeWhere(() => true);
    this.stopTimer();
  }

  /** Ends the streams of a revoked key: its reconnect is refused 401. */
  closeKey(keyId: number): void {
    this.closeWhere((s) => s.keyId === keyId);
  }

  /**
   * Ends the streams of a tenant whose status or plan changed: each sidecar reconnects and is
   * authenticated afresh (a suspended tenant's is refused 403 tenant_suspended).
   */
  closeTenant(tenantId: number): void {
    this.closeWhere((s) => s.tenantId === tenantId);
  }

  private closeWhere(match: (s: Stream) => boolean): void {
    for (const group of [...this.servers.values()])
      for (const stream of [...group.streams]) {
        if (!match(stream)) continue;
        this.remove(stream);
        try {
          stream.res.cork(() => stream.res.end());
        } catch {
          // already gone
        }
      }
  }

  private write(stream: Stream, text: string): void {
    if (stream.gone) return;
    try {
      let ok = true;
      stream.res.cork(() => {
        ok = stream.res.write(text);
      });
      if (!ok && !stream.backlogged) {
        stream.backlogged = true;
        stream.res.onWritable(() => {
          stream.backlogged = false;
          return true;
        });
      }
    } catch (err) {
      // A response released under us (its abort not seen yet): forget the stream.
      this.logger.debug?.('config stream write failed', { error: String(err) });
      this.remove(stream);
    }
  }

  private heartbeat(): void {
    for (const group of this.servers.values())
      for (const stream of [...group.streams]) {
        if (stream.backlogged) {
          // Still holding the last heartbeat: the reader is not reading. Memory stays bounded by dropping it.
          this.remove(stream);
          try {
            stream.res.close();
          } catch {
            // already gone
          }
          continue;
        }
        this.write(stream, HEARTBEAT);
      }
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(
      guardTask(() => this.heartbeat(), this.logger, 'config stream heartbeat'),
      this.limits.heartbeatMs,
    );
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** The few request fields ServerKeyAuth reads, for a raw route that has no Request of its own. */
function signedRequest(req: UwsRequest): Request {
  const path = req.getUrl();
  const query = req.getQuery() ?? '';
  const headers: Record<string, string> = {};
  for (const name of ['authorization', TIMESTAMP_HEADER, SIGNATURE_HEADER, 'user-agent']) {
    const v = req.getHeader(name);
    if (v) headers[name] = v;
  }
  const target = query ? `${path}?${query}` : path;
  return {
    method: 'GET',
    path,
    query,
    target,
    params: {},
    headers,
    remoteAddress: '',
    body: Buffer.alloc(0),
    stream: null,
    aborted: false,
    scope: 'server-key',
    searchParams: () => new URLSearchParams(query),
  };
}

/**
 * `GET /v1/config/stream?server={id}`: signed exactly like a pull (a fresh signature per
 * connection), answered with server-sent events. The first event is the current
 * `{version, etag}`, so a sidecar that (re)connects after missing a publish pulls at once.
 * A raw route: an open stream keeps only its uWS response and a few fields, and it is not
 * counted in flight (a server closing ends the streams instead of waiting for them).
 */
/** What the stream route needs of the control plane's context (named by its parts: the context itself holds the streams). */
interface StreamContext {
  heads: HeadCache;
  keyAuth: ServerKeyAuth;
  store: ControlPlaneStore;
  pulls: SidecarPulls;
  now: () => number;
}

export function mountConfigStream(server: HttpServer, ctx: StreamContext, streams: ConfigStreams): void {
  const serverKey = server.scoped('server-key');
  ctx.heads.onHead((head) => streams.announce(head));
  serverKey.raw('GET', SITE.path, (res: UwsResponse, req: UwsRequest, control: RawControl, peer: Peer) => {
    const state: RawState = { aborted: false, peer };
    let stream: Stream | null = null;
    const finish = (): void => {
      if (state.finished) return;
      state.finished = true;
      control.done(state);
    };
    res.onAborted(() => {
      state.aborted = true;
      if (stream) streams.remove(stream);
      finish();
    });
    const request = signedRequest(req);
    const open = async (): Promise<void> => {
      const owner = await ctx.keyAuth.check(request);
      const id = requestedServer(request.query);
      if (id !== owner.serverId) {
        const other = await ctx.store.getServer(id);
        if (other && other.tenantId === owner.tenantId) throw new HttpError('forbidden', `This server key belongs to server ${owner.serverId}, not ${id}.`);
        throw new HttpError('config_not_found', `No server with id ${id}.`);
      }
      streams.admit(owner);
      const head = await ctx.heads.get(owner.serverId);
      if (!head) throw new HttpError('config_not_found', `No server with id ${id}.`);
      if (state.aborted) return;
      // Checked again after the awaits: others may have taken the last places meanwhile.
      streams.admit(owner);
      ctx.pulls.pulled(owner.serverId, head.version, request.headers['user-agent'], ctx.now());
      res.cork(() => {
        res.writeStatus('200 OK');
        for (const key in control.defaultHeaders) res.writeHeader(key, control.defaultHeaders[key]!);
        for (const [k, v] of HEADERS) res.writeHeader(k, v);
        res.write(`retry: ${streams.limits.retryMs}\n\n${versionEvent(head.version, head.etag)}`);
      });
      stream = streams.add(res, owner, head);
      // A publish between the head read and now was announced before this stream was listed.
      const latest = ctx.heads.peek(owner.serverId);
      if (latest && latest.version > head.version) streams.announce(latest);
      // Answered: from here the stream is not a request in flight (see above).
      finish();
    };
    open().catch((err: unknown) => failRaw(res, state, err, control, SITE));
  });
}
