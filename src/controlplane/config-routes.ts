import { validateBundle } from '../../brain/index.js';
import { bundleSizeProblem, PUBLISH_MAX_BODY } from '../bundles.js';
import type { HttpServer, Request } from '../http/server.js';
import { HttpError, quoteId, validationFailed } from '../http/errors.js';
import { json } from '../http/reply.js';
import { arrayPageRead, nextPageHeaders } from '../http/pagination.js';
import { Fields, ID_DIGITS, readJsonObject } from '../http/validate.js';
import { requireCurrentPlan } from '../identity/plan-limits.js';
import { ownedServer, publisher, type ControlPlaneContext } from './context.js';
import { etagOf, matchesEtag } from './heads.js';
import type { PublishedBundle } from './types.js';

export const NOTE_HEADER = 'x-config-note';
const MAX_NOTE = 500;

function noteOf(req: Request): string {
  const note = (req.headers[NOTE_HEADER] ?? '').trim();
  if (note.length > MAX_NOTE) throw validationFailed([{ path: 'X-Config-Note', message: `must be at most ${MAX_NOTE} characters, got ${note.length}` }]);
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
    const { limit, from } = arrayPageRead(req);
    const page = await store.listVersions(record.id, limit, from);
    return json(200, page.data, nextPageHeaders(req, page.nextCursor));
  });

  configRead.get('/v1/servers/:id/config/versions/:version', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    const raw = req.params.version ?? '';
    const version = ID_DIGITS.test(raw) ? Number(raw) : -1;
    const found = version > 0 ? await store.getVersion(record.id, version) : null;
    if (!found) throw new HttpError('not_found', `Server ${record.id} has no configuration version ${quoteId(raw)}.`);
    return json(200, { ...found.entry, bundle: found.bundle });
  });

  configWrite.post('/v1/servers/:id/config/rollback', async (req) => {
    const { session, server: record } = await ownedServer(ctx, req);
    requireCurrentPlan(ctx.plans, session.tenant, ctx.now(), 'publishing');
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['version']);
    const version = f.number('version', { required: true, integer: true, min: 1 });
    f.done();
    const note = noteOf(req) || `rollback to version ${version}`;
    const result = await store.rollback(record.id, version!, await publisher(ctx, session), note);
    if (!result.ok) throw new HttpError('not_found', `Server ${record.id} has no configuration version ${version}.`);
    heads.set(record.id, record.tenantId, result.published);
    await ctx.sync.announce({ kind: 'head', serverId: record.id, version: result.published.bundle.version });
    return published(result.published);
  });
}
