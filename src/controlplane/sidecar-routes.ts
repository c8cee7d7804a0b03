import type { HttpRequest as UwsRequest } from 'uWebSockets.js';
import type { BodyTaker, HttpServer, Request, ScopedRoutes, ShortcutReply } from '../http/server.js';
import { HttpError, quoteId } from '../http/errors.js';
import { json, prepared, type Reply } from '../http/reply.js';
import { jsonObjectOf } from '../http/validate.js';
import { JSON_TYPE } from '../http/codec.js';
import { headerKey } from '../http/header-key.js';
import { overLimit } from '../http/ratelimit.js';
import { describeRate } from '../ratelimit/limiter.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../signing/request.js';
import type { ControlPlaneContext } from './context.js';
import { matchesEtag, type Head } from './heads.js';
import { IngestQueue, TELEMETRY_LIMITS, nextMapSample, parseReport } from './telemetry.js';
import { ReportRetention } from './retention.js';
import { requestedServer, serverId, serverParam } from './server-param.js';
import type { IngestOutcome, KeyOwner, ServerId, TelemetryReport } from './types.js';
import type { CachedKey, DeferredRequest } from './server-key-auth.js';

const PULL_PATH = '/v1/config';
const PUSH_PATH = '/v1/telemetry';
const PULL_HEADERS = ['authorization', TIMESTAMP_HEADER, SIGNATURE_HEADER, 'if-none-match', 'user-agent'] as const;
const PUSH_HEADERS = ['authorization', TIMESTAMP_HEADER, SIGNATURE_HEADER, 'content-type', 'content-length'] as const;
/** The pull shortcut's header names, as the bytes uWS looks them up by. */
const AUTHORIZATION = headerKey('authorization');
const TIMESTAMP = headerKey(TIMESTAMP_HEADER);
const SIGNATURE = headerKey(SIGNATURE_HEADER);
const USER_AGENT = headerKey('user-agent');
const IF_NONE_MATCH = headerKey('if-none-match');

/** The 202s of stored reports by event count, built once: the answer is the same few bytes for every report. */
const ACCEPTED: Reply[] = [];
const DUPLICATE = prepared(json(202, { accepted: false, received: 0 } satisfies IngestOutcome));

/** The 202 of an ingest outcome (a shared reply: nothing writes to it). */
function accepted(outcome: IngestOutcome): Reply {
  if (!outcome.accepted) return outcome.received === 0 ? DUPLICATE : json(202, outcome);
  return (ACCEPTED[outcome.received] ??= prepared(json(202, { accepted: true, received: outcome.received } satisfies IngestOutcome)));
}

/** Spec 001 §4.2: the sidecar's signed config pull and telemetry push. */
export function mountSidecarRoutes(server: HttpServer, ctx: ControlPlaneContext): void {
  const serverKey = server.scoped('server-key');

  const answerHead = (head: Head, agent: string | undefined | null, etag: string | undefined, now: number = ctx.now()): ShortcutReply => {
    ctx.pulls.pulled(head.serverId, head.version, agent, now);
    return matchesEtag(etag, head.etag) ? head.notModified : head.full;
  };

  const answer = (req: Request, head: Head): Reply => answerHead(head, req.headers['user-agent'], req.headers['if-none-match']);

  // A key names another server: its own tenant's is a scope error (403); an unknown server and
  // another tenant's are the same 404 config_not_found, so ids do not reveal what exists.
  const otherServer = async (id: ServerId, owner: KeyOwner): Promise<never> => {
    const server = await ctx.store.getServer(id);
    if (server && server.tenantId === owner.tenantId) throw new HttpError('forbidden', `This server key belongs to server ${owner.serverId}, not ${id}.`);
    throw new HttpError('config_not_found', `No server with id ${id}.`);
  };

  // The hot path: once the key, its tenant and the head are cached, a pull is answered
  // synchronously with no storage read and no promise.
  const pull = (req: Request, owner: KeyOwner): Reply | Promise<Reply> => {
    const id = requestedServer(req.query);
    if (id !== owner.serverId) return otherServer(id, owner);
    const head = ctx.heads.peek(id);
    if (head) return answer(req, head);
    return ctx.heads.get(id).then((h) => {
      if (!h) throw new HttpError('config_not_found', `No server with id ${id}.`);
      return answer(req, h);
    });
  };

  // The common pull read straight off uWS, with no request object: a key and tenant already
  // cached, the key's own server, its head in memory. Everything else, every error included,
  // is left to the route below, which answers exactly as it would have (keyAuth.accept records
  // nothing when it declines, so the route's own check sees the request fresh; a key at its
  // rate it answers with the route's own 429, having recorded what the route would). With replicas
  // the signature's shared replay record is awaited first (pullShared).
  const quickPull = (req: UwsRequest): ShortcutReply | Promise<ShortcutReply> | null => {
    const key = ctx.keyAuth.cached(req.getHeader(AUTHORIZATION));
    if (key === undefined) return null;
    const query = req.getQuery() ?? '';
    const raw = serverParam(query);
    if (raw !== key.server) return null;
    const head = ctx.heads.peek(key.owner.serverId);
    if (head === undefined) return null;
    // uWS matches a static pattern exactly, so the path this handler sees is always the pattern:
    // the signed target is built without asking uWS for the URL.
    const target = `${PULL_PATH}?${query}`;
    // One clock read for the whole answer (signature window, rate, pull record): the three
    // reads it replaces were microseconds apart on the same request.
    const now = ctx.now();
    if (!ctx.keyAuth.defers) {
      if (!ctx.keyAuth.accept(key, 'GET', target, req.getHeader(TIMESTAMP), req.getHeader(SIGNATURE), now)) return null;
      return answerHead(head, ctx.pulls.agentDue(key.owner.serverId, now) ? req.getHeader(USER_AGENT) : null, req.getHeader(IF_NONE_MATCH), now);
    }
    return pullShared(ctx, req, key, head, target, now, answerHead);
  };

  serverKey.get(
    PULL_PATH,
    (req) => {
      const owner = ctx.keyAuth.check(req);
      return owner instanceof Promise ? owner.then((o) => pull(req, o)) : pull(req, owner);
    },
    { headers: PULL_HEADERS, shortcut: quickPull },
  );

  mountTelemetryPush(serverKey, ctx, otherServer);
}

type AnswerHead = (head: Head, agent: string | undefined | null, etag: string | undefined, now?: number) => ShortcutReply;

/**
 * The pull shortcut with replicas: the request counted and its signature sent to the shared
 * replay record, the answer settled the moment the record confirms it new (null when the route
 * must decide, as `acceptShared` declines). uWS's request is valid only inside its callback, so
 * what the answer needs of it is read now, and the answer itself chosen now for the head in
 * memory: once the record returns, only a changed head (a publish meanwhile) costs more than a
 * comparison, and the head then read is what the pull gets.
 */
function pullShared(
  ctx: ControlPlaneContext,
  req: UwsRequest,
  key: CachedKey,
  head: Head,
  target: string,
  now: number,
  answerHead: AnswerHead,
): Promise<ShortcutReply> | null {
  const agent = ctx.pulls.agentDue(key.owner.serverId, now) ? req.getHeader(USER_AGENT) : null;
  const etag = req.getHeader(IF_NONE_MATCH);
  const reply = matchesEtag(etag, head.etag) ? head.notModified : head.full;
  const answered = ctx.keyAuth.acceptShared(
    key,
    'GET',
    target,
    req.getHeader(TIMESTAMP),
    req.getHeader(SIGNATURE),
    now,
    (): ShortcutReply | Promise<ShortcutReply> => {
      const current = ctx.heads.peek(head.serverId);
      if (current === head) {
        ctx.pulls.pulled(head.serverId, head.version, agent, ctx.now());
        return reply;
      }
      if (current !== undefined) return answerHead(current, agent, etag);
      return ctx.heads.get(head.serverId).then((h) => {
        if (!h) throw new HttpError('config_not_found', `No server with id ${head.serverId}.`);
        return answerHead(h, agent, etag);
      });
    },
  );
  return answered === false ? null : answered;
}

/** POST /v1/telemetry: a report checked, counted against the server's quota, queued for storage, then old reports pruned. */
function mountTelemetryPush(serverKey: ScopedRoutes, ctx: ControlPlaneContext, otherServer: (id: ServerId, owner: KeyOwner) => Promise<never>): void {
  const { limiter, limits } = ctx.auth;
  const queue = new IngestQueue(ctx.store);
  const retention = new ReportRetention(ctx.store, limits.telemetryRetentionDays, ctx.now);
  // A quota of the server (not a rate of the key): 403 plan_limit, with Retry-After so a
  // sidecar backs off and sends the report again rather than dropping it. Only a report that
  // passed its checks counts: a refused one changes nothing, so it must not use up the quota
  // and turn the next, valid report into a 403 (refused ones are still bounded by the key's rate).
  // The limiter key of the last server admitted, kept rather than built per report.
  let lastServer: ServerId | undefined;
  let lastLimitKey = '';
  const quotaKey = (owner: KeyOwner): string => {
    if (owner.serverId !== lastServer) {
      lastServer = owner.serverId;
      lastLimitKey = `telemetry:${owner.serverId}`;
    }
    return lastLimitKey;
  };
  const admit = (owner: KeyOwner): void => {
    const d = limiter.hit(quotaKey(owner), limits.telemetryReports, ctx.now());
    if (!d.allowed) throw overLimit(d, `${describeRate(limits.telemetryReports, 'telemetry reports')} per server`, 'plan_limit');
  };
  // After the report is stored, before answering, so that the pull after a report that used up
  // the quota sees the hold. Both are synchronous (undefined) in the common case, and the 202
  // is then answered with no further promise.
  const after = (owner: KeyOwner, report: TelemetryReport, outcome: IngestOutcome): Reply | Promise<Reply> => {
    const counted = outcome.accepted ? ctx.quota.afterIngest(owner.tenantId, owner.serverId, report.linesSpoken) : undefined;
    const pruned = retention.maybePrune();
    if (counted === undefined && pruned === undefined) return accepted(outcome);
    return Promise.all([counted, pruned]).then(() => accepted(outcome));
  };
  // The common report: for the key's own server, without a map sample. One promise, the queue's.
  const push = (req: Request, owner: KeyOwner): Reply | Promise<Reply> => pushBody(req.body, req.headers['content-type'], owner);
  const pushBody = (body: Buffer | string, contentType: string | undefined, owner: KeyOwner): Reply | Promise<Reply> => {
    const report = parseReport(jsonObjectOf(body, contentType), limits.telemetryEventKinds);
    if (report.map !== undefined || report.serverId !== String(owner.serverId)) return pushOther(report, owner);
    admit(owner);
    return queue.push({ serverId: owner.serverId, receivedAt: ctx.now(), report }, (outcome) => after(owner, report, outcome));
  };
  const pushOther = async (report: TelemetryReport, owner: KeyOwner): Promise<Reply> => {
    if (report.serverId !== String(owner.serverId)) {
      const id = serverId(report.serverId);
      if (id <= 0) throw new HttpError('config_not_found', `No server with id ${quoteId(report.serverId)}.`);
      await otherServer(id, owner);
    }
    // The live map's sample is checked against the stored one before anything is counted or stored.
    const sample = report.map === undefined ? null : nextMapSample(report, await ctx.store.mapSample(owner.serverId), ctx.now(), ctx.now());
    admit(owner);
    const outcome = await queue.push({ serverId: owner.serverId, receivedAt: ctx.now(), report });
    // After the report (a repeat of a stored report stores its sample too, if that is newer: the
    // first attempt may have stopped between the two).
    if (sample) await ctx.store.putMapSample(owner.serverId, sample);
    return after(owner, report, outcome);
  };

  const pushDeferred = deferredPush(ctx, queue, quotaKey, after, pushBody);
  const quickPush = quickPushOf(ctx, pushBody, pushDeferred);

  serverKey.post(
    PUSH_PATH,
    (req) => {
      const authorization = req.headers.authorization;
      // A sidecar's report (its target carries a nonce, so the body shortcut leaves it here).
      const key = pushDeferred === null || authorization === undefined ? undefined : ctx.keyAuth.cached(authorization);
      if (key !== undefined) {
        const d = ctx.keyAuth.deferred(key, req.method, req.target, req.body, req.headers[TIMESTAMP_HEADER], req.headers[SIGNATURE_HEADER]);
        return pushDeferred!(req.body, req.headers['content-type'], d);
      }
      const owner = ctx.keyAuth.check(req);
      return owner instanceof Promise ? owner.then((o) => push(req, o)) : push(req, owner);
    },
    { headers: PUSH_HEADERS, maxBody: TELEMETRY_LIMITS.maxBody, credentials: (req) => ctx.keyAuth.beforeBody(req), bodyShortcut: quickPush },
  );
}

/** A report whose signature's shared replay record is not written yet (ServerKeyAuth.deferred), stored with that record in one statement. */
type DeferredPush = (body: Buffer | string, contentType: string | undefined, d: DeferredRequest) => Reply | Promise<Reply>;

/**
 * With replicas, the common report writes its signature's shared replay record in its batch's
 * own statement (one round trip, not the record's and then the batch's); null without them.
 * Every answer stays what the usual order gives (signature, replay, tenant, key rate, body,
 * server, quota): the body is checked first, in memory; the key's rate and the server's quota
 * are counted before the statement and taken back when it finds a replay (401, nothing stored).
 * A request that any of these would refuse, or that carries a map sample or names another
 * server, goes the usual way instead (its replay record alone first), so a replay is still
 * answered 401 before anything else.
 */
function deferredPush(
  ctx: ControlPlaneContext,
  queue: IngestQueue,
  quotaKey: (owner: KeyOwner) => string,
  after: (owner: KeyOwner, report: TelemetryReport, outcome: IngestOutcome) => Reply | Promise<Reply>,
  pushBody: (body: Buffer | string, contentType: string | undefined, owner: KeyOwner) => Reply | Promise<Reply>,
): DeferredPush | null {
  if (!ctx.keyAuth.defers || ctx.store.ingestSigned === undefined) return null;
  const { limiter, limits } = ctx.auth;
  return (body, contentType, d) => {
    const usual = (): Promise<Reply> => ctx.keyAuth.shared(d).then((owner) => pushBody(body, contentType, owner));
    let report: TelemetryReport;
    try {
      report = parseReport(jsonObjectOf(body, contentType), limits.telemetryEventKinds);
    } catch {
      return usual();
    }
    const owner = d.owner;
    if (report.map !== undefined || report.serverId !== String(owner.serverId) || !ctx.keyAuth.admitNow(d)) return usual();
    const key = quotaKey(owner);
    const at = ctx.now();
    if (!limiter.hit(key, limits.telemetryReports, at).allowed) {
      ctx.keyAuth.uncount(d);
      return usual();
    }
    return queue.pushSigned({ serverId: owner.serverId, receivedAt: at, report, signature: { ts: d.ts, slot: d.slot } }, (outcome) => {
      if (outcome !== null) return after(owner, report, outcome);
      limiter.release(key, at);
      return ctx.keyAuth.replayed(d);
    });
  };
}

/**
 * The common report taken straight off uWS (see RouteOptions.bodyShortcut): a key this server
 * holds resolved, JSON declared as such, a timestamp inside the window, no query string. Its
 * body is checked, counted and stored exactly as the route does it, with none of the request
 * object, the second header parse or the body copy (the signature over the bytes as they came,
 * while uWS still holds them); anything `checkRead` cannot decide from memory goes to the route.
 */
function quickPushOf(
  ctx: ControlPlaneContext,
  pushBody: (body: Buffer | string, contentType: string | undefined, owner: KeyOwner) => Reply | Promise<Reply>,
  pushDeferred: DeferredPush | null,
): (headers: Readonly<Record<string, string>>) => BodyTaker | null {
  return (headers) => {
    const authorization = headers.authorization;
    const timestamp = headers[TIMESTAMP_HEADER];
    const signature = headers[SIGNATURE_HEADER];
    if (headers['content-type'] !== JSON_TYPE || !ctx.keyAuth.readyForBody(authorization, timestamp, signature)) return null;
    return (body, bytes) => {
      const key = pushDeferred === null ? undefined : ctx.keyAuth.cached(authorization!);
      if (key !== undefined) {
        const d = ctx.keyAuth.deferred(key, 'POST', PUSH_PATH, bytes, timestamp, signature);
        return pushDeferred!(body, JSON_TYPE, d) as ShortcutReply | Promise<ShortcutReply>;
      }
      const owner = ctx.keyAuth.checkRead(authorization!, 'POST', PUSH_PATH, bytes, timestamp, signature);
      if (owner === undefined) return null;
      return (owner instanceof Promise ? owner.then((o) => pushBody(body, JSON_TYPE, o)) : pushBody(body, JSON_TYPE, owner)) as
        | ShortcutReply
        | Promise<ShortcutReply>;
    };
  };
}
