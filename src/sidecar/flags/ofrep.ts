import { createHash } from 'node:crypto';
import { evaluateFlag, type ConfigBundle, type FlagContext, type Flags } from '../../../brain/index.js';
import { matchesEtag } from '../../http/etag.js';
import { decodeParam } from '../../http/guard.js';
import type { Reply } from '../../http/reply.js';
import type { HttpServer, Request } from '../../http/server.js';
import { withoutBom } from '../../http/codec.js';
import { GATE_HEADERS, type BearerGate } from '../auth.js';

/** Limits of the OFREP routes. */
export const OFREP_LIMITS = {
  /** Largest evaluation request body (a context is a few attributes). */
  maxBody: 16 * 1024,
  /** Longest targetingKey, map or server attribute. */
  maxAttribute: 256,
} as const;

const HEADERS = [...GATE_HEADERS, 'content-type', 'content-length', 'if-none-match'] as const;
const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** The flags in force: replaced whole when a bundle is applied (so an evaluation never sees half of one). */
export class FlagSet {
  flags: Flags;
  version: number;
  constructor(bundle: ConfigBundle) {
    this.flags = bundle.flags ?? {};
    this.version = bundle.version;
  }
  set(bundle: ConfigBundle): void {
    this.flags = bundle.flags ?? {};
    this.version = bundle.version;
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
    if (typeof players !== 'number' || !Number.isInteger(players) || players < 0)
      return { ok: false, errorCode: 'INVALID_CONTEXT', details: 'context.players must be a non-negative integer' };
    ctx.players = players;
  }
  return { ok: true, ctx };
}

function reply(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return { status, headers: headers ? { ...JSON_TYPE, ...headers } : JSON_TYPE, body: JSON.stringify(value) };
}

/**
 * The OpenFeature Remote Evaluation Protocol on the sidecar, behind its token:
 * `POST /ofrep/v1/evaluate/flags/{key}` evaluates one flag, `POST /ofrep/v1/evaluate/flags`
 * every flag (with an ETag of the answer, and 304 for a matching If-None-Match). Evaluated here
 * from the applied bundle: no network, no storage.
 */
export function mountOfrep(server: HttpServer, gate: BearerGate | null, flags: FlagSet, options: { serverId: string | null; now?: () => number }): void {
  const now = options.now ?? Date.now;
  const metadata = (): { bundleVersion: number } => ({ bundleVersion: flags.version });

  server.post(
    '/ofrep/v1/evaluate/flags/:key',
    (req: Request) => {
      gate?.checkRequest(req);
      const key = decodeParam(req.params.key ?? '');
      const read = readContext(req.body, options.serverId);
      if (!read.ok) return reply(400, { key, errorCode: read.errorCode, errorDetails: read.details });
      const flag = Object.hasOwn(flags.flags, key) ? flags.flags[key] : undefined;
      if (!flag) return reply(404, { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `no flag ${JSON.stringify(key)} in bundle version ${flags.version}` });
      const r = evaluateFlag(key, flag, read.ctx, now());
      if (!r.ok) return reply(400, { key, errorCode: r.errorCode, errorDetails: r.message });
      return reply(200, { key, value: r.value, reason: r.reason, variant: r.variant, metadata: metadata() });
    },
    { headers: HEADERS, maxBody: OFREP_LIMITS.maxBody },
  );

  server.post(
    '/ofrep/v1/evaluate/flags',
    (req: Request) => {
      gate?.checkRequest(req);
      const read = readContext(req.body, options.serverId);
      if (!read.ok) return reply(400, { errorCode: read.errorCode, errorDetails: read.details });
      const at = now();
      const out: unknown[] = [];
      for (const key of Object.keys(flags.flags)) {
        const r = evaluateFlag(key, flags.flags[key]!, read.ctx, at);
        out.push(r.ok ? { key, value: r.value, reason: r.reason, variant: r.variant } : { key, errorCode: r.errorCode, errorDetails: r.message });
      }
      const body = JSON.stringify({ flags: out, metadata: metadata() });
      // The answer's own digest: it changes with the bundle, the context and a time window crossed.
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      if (matchesEtag(req.headers['if-none-match'], etag)) return { status: 304, headers: { etag } };
      return { status: 200, headers: { ...JSON_TYPE, etag, 'cache-control': 'no-cache' }, body };
    },
    { headers: HEADERS, maxBody: OFREP_LIMITS.maxBody },
  );
}
