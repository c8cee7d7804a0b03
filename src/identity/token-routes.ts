import { HttpError, quoteValue } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { Fields, idParam, readJsonObject } from '../http/validate.js';
import { pageOf } from '../store/page.js';
import type { IdentityRouteContext } from './route-context.js';
import { hashToken, newToken } from './tokens.js';
import { TOKEN_SCOPES, type TokenScope } from '../http/scope.js';
import type { PersonalTokenRecord } from './types.js';

/** Live (not revoked, not expired) personal access tokens one user may hold. */
export const MAX_LIVE_PERSONAL_TOKENS = 20;
/** The longest lifetime a personal access token may be given when it is given one. */
export const MAX_TOKEN_DAYS = 3650;

function readScopes(f: Fields, body: Record<string, unknown>): TokenScope[] | undefined {
  const v = body.scopes;
  if (v === undefined || v === null) return void f.problem('scopes', `is required: a non-empty array of ${TOKEN_SCOPES.join(', ')}`);
  if (!Array.isArray(v) || v.length === 0) return void f.problem('scopes', `must be a non-empty array of ${TOKEN_SCOPES.join(', ')}`);
  const bad = v.find((s) => typeof s !== 'string' || !(TOKEN_SCOPES as readonly string[]).includes(s));
  if (bad !== undefined) return void f.problem('scopes', `must contain only ${TOKEN_SCOPES.join(', ')}, got ${quoteValue(bad)}`);
  return [...new Set(v as TokenScope[])];
}

const tokenView = (t: PersonalTokenRecord) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  preview: t.preview,
  createdAt: t.createdAt,
  expiresAt: t.expiresAt,
  lastUsedAt: t.lastUsedAt,
  revokedAt: t.revokedAt,
});

/**
 * Personal access tokens (`bsu_`): long-lived credentials a user creates for scripts and CI
 * (`brainstem config publish`). Only a login session manages them; a token never can.
 */
export function mountPersonalTokenRoutes(ctx: IdentityRouteContext): void {
  const { server, store, auth, now } = ctx;
  const loginSession = server.scoped('login');

  loginSession.post('/v1/tokens', async (req) => {
    const session = await auth.session(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    // A credential's body: a misspelt field (`expires_at`, `expiresInDays`) must not mint a token
    // that never expires while its maker believes otherwise.
    f.onlyKnown(['name', 'scopes', 'expires_in_days']);
    const name = f.string('name', { required: true, max: 200, notBlank: true });
    const scopes = readScopes(f, body);
    const days = f.number('expires_in_days', { integer: true, min: 1, max: MAX_TOKEN_DAYS });
    f.done();
    const token = newToken('personal');
    // Counted with the insert, in one transaction: concurrent requests (or replicas) must not all take the last place.
    const record = await store.createPersonalToken(
      {
        userId: session.userId,
        tenantId: session.tenant.id,
        name: name!,
        scopes: scopes!,
        tokenHash: hashToken(token),
        preview: token.slice(0, 8),
        expiresAt: days === undefined ? null : now() + days * 86_400_000,
      },
      MAX_LIVE_PERSONAL_TOKENS,
      now(),
    );
    if (record === 'limit') {
      throw new HttpError('plan_limit', `A user may hold at most ${MAX_LIVE_PERSONAL_TOKENS} live personal access tokens; revoke one first.`);
    }
    return json(201, { ...tokenView(record), token });
  });

  loginSession.get('/v1/tokens', async (req) => {
    const session = await auth.session(req);
    const list = new ListPage(req, { list: 'tokens', owner: `user:${session.userId}` }, ARRAY_PAGE_LIMIT);
    const page = pageOf(await store.listPersonalTokens(session.userId, { limit: list.limit + 1, from: list.from }), list.limit, (t) => t.id);
    return json(200, page.data.map(tokenView), list.nextPageHeaders(page.nextCursor));
  });

  loginSession.delete('/v1/tokens/:id', async (req) => {
    const session = await auth.session(req);
    const id = idParam(req.params.id, 'personal access token');
    if (!(await store.revokePersonalToken(session.userId, id))) throw new HttpError('not_found', `No personal access token with id ${id}.`);
    return empty(204);
  });
}
