import { validateBundle } from '../../brain/bundle.js';
import { bundleSizeProblem, PUBLISH_MAX_BODY } from '../bundles.js';
import type { HttpServer, Request } from '../http/server.js';
import { HttpError, quoteId, validationFailed } from '../http/errors.js';
import { json, type Reply } from '../http/reply.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { charCount, Fields, ID_DIGITS, readJsonObject, unstorableText } from '../http/validate.js';
import { requireCurrentPlan } from '../identity/plan-limits.js';
import { ownedServer, publisher, type ControlPlaneContext } from './context.js';
import { etagOf, matchesEtag } from './heads.js';
import type { PublishedBundle, ServerId } from './types.js';

export const NOTE_HEADER = 'x-config-note';
const MAX_NOTE = 500;

/** How a note that is not plain ASCII is sent: RFC 8187's `UTF-8''` followed by the percent-encoded UTF-8. */
const EXT_VALUE = /^UTF-8''/i;
const PLAIN_NOTE = /^[\x20-\x7e]*$/;

/**
 * The `X-Config-Note` header value for `note`: as is when it is printable ASCII, else
 * `UTF-8''` + its percent-encoded UTF-8 (RFC 8187). A header carries bytes, not text: browsers
 * and Node's fetch refuse a character past U+00FF in one, and the HTTP server drops non-ASCII
 * bytes at either end of a value, so "Réglages été" would lose its last letters unannounced.
 */
export function noteHeaderValue(note: string): string {
  return PLAIN_NOTE.test(note) ? note : `UTF-8''${encodeURIComponent(note)}`;
}

/**
 * An `If-Match` precondition (RFC 9110 §13.1.1, strong comparison) on the head a publish or
 * rollback replaces: a client that sends the ETag it read is refused, as a stale publish is
 * (409 version_conflict, the interface's code for one), when another publish landed since.
 */
async function requireIfMatch(req: Request, ctx: ControlPlaneContext, serverId: ServerId): Promise<void> {
  const header = req.headers['if-match'];
  if (header === undefined) return;
  const head = await ctx.heads.get(serverId);
  const tags = header.split(',').map((t) => t.trim());
  if (head && (tags.includes('*') || tags.includes(head.etag))) return;
  throw new HttpError(
    'version_conflict',
    `If-Match is ${JSON.stringify(header.slice(0, 80))} but the configuration is at ${head ? `version ${head.version} (ETag ${head.etag})` : 'no version'}. Reload it and apply the edit again.`,
  );
}

function noteOf(req: Request): string {
  const raw = (req.headers[NOTE_HEADER] ?? '').trim();
  const problem = (message: string) => validationFailed([{ path: 'X-Config-Note', message }]);
  let note = raw;
  if (EXT_VALUE.test(raw)) {
    try {
      note = decodeURIComponent(raw.slice("UTF-8''".length)).trim();
    } catch {
      throw problem(`is not percent-encoded UTF-8 after UTF-8''`);
    }
    const unstorable = unstorableText(note);
    if (unstorable !== null) throw problem(unstorable);
  } else if (!PLAIN_NOTE.test(raw))
    throw problem(`must be printable ASCII, or UTF-8'' followed by the percent-encoded UTF-8 of the note (RFC 8187), as ${noteHeaderValue('été')}`);
  const length = charCount(note);
  if (length > MAX_NOTE) throw problem(`must be at most ${MAX_NOTE} characters, got ${length}`);
  return note;
}

/** Spec 001 §3 and §4.3: versioned configuration with optimistic concurrency and rollback. */
export function mountConfigRoutes(server: HttpServer, ctx: ControlPlaneContext): void {
  const { store, heads } = ctx;
  const configRead = server.scoped('config:read');
  const configWrite = server.scoped('config:write');

  const published = (p: PublishedBundle) => json(200, p.bundle, { etag: etagOf(p.bundle.version) });

  configRead.get('/v1/servers/:id/config', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    const head = await heads.get(record.id);
    if (!head) throw new HttpError('config_not_found', `No configuration for server ${record.id}.`);
    // The ETag sent here is honoured like the sidecar's: a dashboard revalidating gets a 304.
    if (matchesEtag(req.headers['if-none-match'], head.etag)) return head.notModified;
    return { status: 200, headers: { 'content-type': 'application/json', etag: head.etag }, body: head.body };
  });

  configWrite.put(
    '/v1/servers/:id/config',
    async (req) => {
      const { session, server: record } = await ownedServer(ctx, req);
      requireCurrentPlan(ctx.plans, session.tenant, ctx.now(), 'publishing');
      const note = noteOf(req);
      await requireIfMatch(req, ctx, record.id);
      const check = validateBundle(readJsonObject(req));
      if (!check.ok)
        throw validationFailed(
          check.problems.map((p) => ({ path: p.path, message: p.message })),
          'The configuration bundle failed validation.',
        );
      // The one size rule `bundle validate` applies too, on the stored form.
      const size = bundleSizeProblem(check.bundle);
      if (size !== null) throw new HttpError('payload_too_large', `The configuration bundle is too large: ${size.message}.`);
      const result = await store.publish(record.id, check.bundle.version, check.bundle, await publisher(ctx, session), note);
      if (!result.ok) {
        if (result.reason === 'version_conflict') {
          throw new HttpError(
            'version_conflict',
            `The configuration is at version ${result.head}; the edit was based on version ${check.bundle.version}. Reload version ${result.head} and apply the edit again.`,
          );
        }
        throw new HttpError('config_not_found', `No configuration for server ${record.id}.`);
      }
      heads.set(record.id, record.tenantId, result.published);
      await ctx.sync.announce({ kind: 'head', serverId: record.id, version: result.published.bundle.version });
      return published(result.published);
    },
    { maxBody: PUBLISH_MAX_BODY },
  );

  configRead.get('/v1/servers/:id/config/versions', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    const list = new ListPage(req, { list: 'config-versions', owner: `tenant:${record.tenantId}` }, ARRAY_PAGE_LIMIT);
    const page = await store.listVersions(record.id, list.limit, list.from);
    return json(200, page.data, list.nextPageHeaders(page.nextCursor));
  });

  configRead.get('/v1/servers/:id/config/versions/:version', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    const raw = req.params.version ?? '';
    const version = ID_DIGITS.test(raw) ? Number(raw) : -1;
    const found = version > 0 ? await store.getVersion(record.id, version) : null;
    if (!found) throw new HttpError('not_found', `Server ${record.id} has no configuration version ${quoteId(raw)}.`);
    return json(200, { ...found.entry, bundle: found.bundle });
  });

  mountRollbackRoute(configWrite, ctx, published);
}

/** Spec 001 §3: a rollback appends the old content as a new, higher version; history is never rewritten. */
function mountRollbackRoute(configWrite: ReturnType<HttpServer['scoped']>, ctx: ControlPlaneContext, published: (p: PublishedBundle) => Reply): void {
  const { store, heads } = ctx;
  configWrite.post('/v1/servers/:id/config/rollback', async (req) => {
    const { session, server: record } = await ownedServer(ctx, req);
    requireCurrentPlan(ctx.plans, session.tenant, ctx.now(), 'publishing');
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['version']);
    const version = f.number('version', { required: true, integer: true, min: 1 });
    f.done();
    const note = noteOf(req) || `rollback to version ${version}`;
    await requireIfMatch(req, ctx, record.id);
    const result = await store.rollback(record.id, version!, await publisher(ctx, session), note);
    if (!result.ok) throw new HttpError('not_found', `Server ${record.id} has no configuration version ${version}.`);
    heads.set(record.id, record.tenantId, result.published);
    await ctx.sync.announce({ kind: 'head', serverId: record.id, version: result.published.bundle.version });
    return published(result.published);
  });
}
