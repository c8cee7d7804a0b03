import { DEFAULT_BUNDLE } from '../../brain/bundle.js';
import type { HttpServer } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { Fields, idParam, readJsonObject } from '../http/validate.js';
import { pageOf } from '../store/page.js';
import { noRoom, requireCurrentPlan, requireRoom } from '../identity/plan-limits.js';
import { hashToken, newToken } from '../identity/tokens.js';
import { ownedServer, publisher, type ControlPlaneContext } from './context.js';
import { serverSummary } from './summary.js';
import type { ServerKeyId } from './types.js';

/** Servers and their keys (DESIGN.md "Auth and identities"). */
export function mountServerRoutes(server: HttpServer, ctx: ControlPlaneContext): void {
  const { store, auth } = ctx;
  const configRead = server.scoped('config:read');
  const full = server.scoped('full');

  full.post('/v1/servers', async (req) => {
    const session = await auth.session(req);
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['name']);
    const name = f.string('name', { required: true, max: 200, notBlank: true })?.trim();
    f.done();
    requireRoom(ctx.plans, session.tenant, 'servers', await store.countServers(session.tenant.id));
    // Counted again with the insert: concurrent requests (or replicas) must not all take the last place.
    const max = ctx.plans.limits(session.tenant.plan).servers;
    const record = await store.createServer(session.tenant.id, name!, DEFAULT_BUNDLE, await publisher(ctx, session), max ?? Infinity);
    if (record === 'limit') throw noRoom(session.tenant, 'servers', max!);
    return json(201, await serverSummary(ctx, record));
  });

  configRead.get('/v1/servers', async (req) => {
    const session = await auth.session(req);
    const list = new ListPage(req, { list: 'servers', owner: `tenant:${session.tenant.id}` }, ARRAY_PAGE_LIMIT);
    const page = pageOf(await store.listServers(session.tenant.id, { limit: list.limit + 1, from: list.from }), list.limit, (s) => s.id);
    return json(200, await Promise.all(page.data.map((s) => serverSummary(ctx, s))), list.nextPageHeaders(page.nextCursor));
  });

  configRead.get('/v1/servers/:id', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    return json(200, await serverSummary(ctx, record));
  });

  full.post(
    '/v1/servers/:id/keys',
    async (req) => {
      const { session, server: record } = await ownedServer(ctx, req);
      requireCurrentPlan(ctx.plans, session.tenant, ctx.now(), 'a new server key');
      const key = newToken('serverKey');
      const max = ctx.auth.limits.liveServerKeys;
      const created = await store.createServerKey(record.id, hashToken(key), key.slice(0, 8), max);
      if (created === 'limit')
        throw new HttpError(
          'plan_limit',
          `A server may have at most ${max} live keys; revoke one (DELETE /v1/servers/${record.id}/keys/{keyId}) before creating another.`,
        );
      return json(201, { id: created.id, key, serverId: record.id, preview: created.preview, createdAt: created.createdAt });
    },
    { body: 'none' },
  );

  full.get('/v1/servers/:id/keys', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    const list = new ListPage(req, { list: 'server-keys', owner: `tenant:${record.tenantId}` }, ARRAY_PAGE_LIMIT);
    const page = pageOf(await store.listServerKeys(record.id, { limit: list.limit + 1, from: list.from }), list.limit, (k) => k.id);
    return json(200, page.data, list.nextPageHeaders(page.nextCursor));
  });

  full.delete('/v1/servers/:id/keys/:keyId', async (req) => {
    const { server: record } = await ownedServer(ctx, req);
    const keyId = idParam(req.params.keyId, 'server key') as ServerKeyId;
    const revoked = await store.revokeServerKey(record.id, keyId);
    if (!revoked) throw new HttpError('not_found', `No live server key with id ${keyId} on server ${record.id}.`);
    ctx.keyAuth.keyRevoked(revoked.tokenHash);
    ctx.streams.closeKey(keyId);
    await ctx.sync.announce({ kind: 'key_revoked', tokenHash: revoked.tokenHash, keyId });
    return empty(204);
  });
}
