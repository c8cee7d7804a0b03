import type { HttpServer, Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { json, type Reply } from '../http/reply.js';
import { readJsonObject } from '../http/validate.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../signing/request.js';
import type { ControlPlaneContext } from './context.js';
import { matchesEtag, type Head } from './heads.js';
import { IngestQueue, TELEMETRY_LIMITS, parseReport } from './telemetry.js';
import type { KeyOwner, ServerId } from './types.js';

const PULL_HEADERS = ['authorization', TIMESTAMP_HEADER, SIGNATURE_HEADER, 'if-none-match'] as const;
const PUSH_HEADERS = ['authorization', TIMESTAMP_HEADER, SIGNATURE_HEADER, 'content-type', 'content-length'] as const;

/** Spec 001 §4.2: the sidecar's signed config pull and telemetry push. */
export function mountSidecarRoutes(server: HttpServer, ctx: ControlPlaneContext): void {
  const queue = new IngestQueue(ctx.store);

  const answer = (req: Request, head: Head): Reply => {
    return matchesEtag(req.headers['if-none-match'], head.etag) ? head.notModified : head.full;
  };

  const otherServer = async (id: ServerId): Promise<never> => {
    if (await ctx.heads.get(id)) throw new HttpError('forbidden', `This server key belongs to another server than ${id}.`);
    throw new HttpError('config_not_found', `No server with id ${id}.`);
  };

  // The hot path: once the key, its tenant and the head are cached, a pull is answered
  // synchronously with no storage read and no promise.
  const pull = (req: Request, owner: KeyOwner): Reply | Promise<Reply> => {
    const raw = serverParam(req.query);
    if (raw === null || raw === '') throw new HttpError('bad_request', 'The query parameter server (the server id) is required.');
    const id = (/^\d{1,15}$/.test(raw) ? Number(raw) : -1) as ServerId;
    if (id <= 0) throw new HttpError('config_not_found', `No server with id ${JSON.stringify(raw)}.`);
    if (id !== owner.serverId) return otherServer(id);
    const head = ctx.heads.peek(id);
    if (head) return answer(req, head);
    return ctx.heads.get(id).then((h) => {
      if (!h) throw new HttpError('config_not_found', `No server with id ${id}.`);
      return answer(req, h);
    });
  };

  server.get(
    '/v1/config',
    (req) => {
      const owner = ctx.keyAuth.check(req);
      return owner instanceof Promise ? owner.then((o) => pull(req, o)) : pull(req, owner);
    },
    { headers: PULL_HEADERS },
  );

  const push = async (req: Request, owner: KeyOwner): Promise<Reply> => {
    const report = parseReport(readJsonObject(req));
    if (report.serverId !== String(owner.serverId)) throw new HttpError('forbidden', `This server key may only report for server ${owner.serverId}.`);
    const outcome = await queue.push({ serverId: owner.serverId, receivedAt: ctx.now(), report });
    return json(202, outcome);
  };

  server.post(
    '/v1/telemetry',
    (req) => {
      const owner = ctx.keyAuth.check(req);
      return owner instanceof Promise ? owner.then((o) => push(req, o)) : push(req, owner);
    },
    { headers: PUSH_HEADERS, maxBody: TELEMETRY_LIMITS.maxBody },
  );
}

/** The `server` query parameter; a hand-rolled scan, since this runs on every pull. */
function serverParam(query: string): string | null {
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end < 0) end = query.length;
    if (query.startsWith('server=', start)) {
      const raw = query.slice(start + 7, end);
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }
    if (end - start === 6 && query.startsWith('server', start)) return '';
    start = end + 1;
  }
  return null;
}
