import { HttpError } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { Fields, idParam, readJsonObject } from '../http/validate.js';
import { pageOf } from '../store/page.js';
import { requirePlan, type IdentityRouteContext } from './route-context.js';
import { hashToken, newToken } from './tokens.js';

/** A tenant's API keys (agency plan): create, list. */
export function mountApiKeyRoutes(ctx: IdentityRouteContext): void {
  const { server, store, auth } = ctx;
  const { limits } = auth;
  const full = server.scoped('full');

  full.post('/v1/api-keys', async (req) => {
    const session = await auth.session(req);
    requirePlan(session.tenant.plan, 'agency');
    const f = new Fields(readJsonObject(req));
    // A credential's body: a field it does not know (an expiry, a scope) would be a promise not kept.
    f.onlyKnown(['name']);
    const name = f.string('name', { required: true, max: 200, notBlank: true });
    f.done();
    const key = newToken('apiKey');
    const record = await store.createApiKey(session.tenant.id, name!, hashToken(key), key.slice(0, 8), limits.liveApiKeys);
    if (record === 'limit') {
      throw new HttpError(
        'plan_limit',
        `A tenant may have at most ${limits.liveApiKeys} live API keys; revoke one (DELETE /v1/api-keys/{id}) before creating another.`,
      );
    }
    return json(201, { id: record.id, name: record.name, key, createdAt: record.createdAt });
  });

  full.get('/v1/api-keys', async (req) => {
    const session = await auth.session(req);
    const list = new ListPage(req, { list: 'api-keys', owner: `tenant:${session.tenant.id}` }, ARRAY_PAGE_LIMIT);
    const page = pageOf(await store.listApiKeys(session.tenant.id, { limit: list.limit + 1, from: list.from }), list.limit, (k) => k.id);
    return json(200, page.data, list.nextPageHeaders(page.nextCursor));
  });
}

/** Revoking an API key (mounted after the personal-token routes, as it always was, so the route table keeps its order). */
export function mountApiKeyRevokeRoute(ctx: IdentityRouteContext): void {
  const { server, store, auth } = ctx;
  const full = server.scoped('full');
  full.delete('/v1/api-keys/:id', async (req) => {
    const session = await auth.session(req);
    const id = idParam(req.params.id, 'API key');
    if (!(await store.revokeApiKey(session.tenant.id, id))) throw new HttpError('not_found', `No API key with id ${id}.`);
    return empty(204);
  });
}
