import type { HttpServer } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { empty, json } from '../http/reply.js';
import { Fields, idParam, readJsonObject } from '../http/validate.js';
import { overLimit } from '../http/ratelimit.js';
import { describeRate } from '../ratelimit/limiter.js';
import type { Authenticator } from './auth.js';
import { HashGate } from './hash-gate.js';
import type { IdentityStore } from './store.js';
import { hashPassword, hashToken, newToken, verifyPassword } from './tokens.js';
import { PLANS, TOKEN_SCOPES, planAtLeast, type PersonalTokenRecord, type Plan, type TenantId, type TenantRecord, type TokenScope } from './types.js';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * What other services know about a tenant (servers, spend): the control plane provides it
 * when it is wired in; without it a tenant has no servers.
 */
export interface TenantInsights {
  stats(tenantId: TenantId): Promise<{ serverCount: number; monthlySpendUsd: number }>;
  servers(tenantId: TenantId): Promise<unknown[]>;
}

const NO_INSIGHTS: TenantInsights = {
  stats: async () => ({ serverCount: 0, monthlySpendUsd: 0 }),
  servers: async () => [],
};

export interface IdentityRoutesOptions {
  store: IdentityStore;
  auth: Authenticator;
  insights?: TenantInsights;
  /** Told after a tenant's status or plan changes, so other services drop what they cached of it. */
  onTenantChange?: (id: TenantId) => void | Promise<void>;
  now?: () => number;
}

export function mountIdentityRoutes(server: HttpServer, options: IdentityRoutesOptions): void {
  const { store, auth } = options;
  const now = options.now ?? Date.now;
  const insights = (): TenantInsights => options.insights ?? NO_INSIGHTS;
  const { limiter, limits } = auth;
  const hashes = new HashGate(limits.passwordHashConcurrency, limits.passwordHashQueue);

  const tenantView = async (t: TenantRecord) => {
    const stats = await insights().stats(t.id);
    return {
      id: t.id,
      name: t.name,
      plan: t.plan,
      serverCount: stats.serverCount,
      monthlySpendUsd: stats.monthlySpendUsd,
      status: t.status,
      createdAt: t.createdAt,
    };
  };

  const tenantOr404 = async (id: string | undefined): Promise<TenantRecord> => {
    const tenant = await store.getTenant(idParam(id, 'tenant') as TenantId);
    if (!tenant) throw new HttpError('not_found', `No tenant with id ${id}.`);
    return tenant;
  };

  server.post('/v1/admin/tenants', async (req) => {
    await auth.admin(req);
    const f = new Fields(readJsonObject(req));
    const name = f.string('name', { required: true, max: 200 });
    const plan = f.oneOf('plan', PLANS, { required: true });
    f.done();
    return json(201, await tenantView(await store.createTenant(name!, plan!)));
  });

  server.get('/v1/admin/tenants', async (req) => {
    await auth.admin(req);
    return json(200, await Promise.all((await store.listTenants()).map(tenantView)));
  });

  server.get('/v1/admin/tenants/:id', async (req) => {
    await auth.admin(req);
    const tenant = await tenantOr404(req.params.id);
    return json(200, { ...(await tenantView(tenant)), servers: await insights().servers(tenant.id) });
  });

  server.patch('/v1/admin/tenants/:id', async (req) => {
    await auth.admin(req);
    const tenant = await tenantOr404(req.params.id);
    const body = readJsonObject(req);
    const f = new Fields(body);
    // Only the plan can be changed here: any other field (a name, a status), or a null plan,
    // would otherwise answer 200 with nothing changed, as if it had been applied.
    f.onlyKnown(['plan']);
    if (body.plan === null) f.problem('plan', `must be one of ${PLANS.join(', ')}, got null`);
    const plan = f.oneOf('plan', PLANS);
    f.done();
    const updated = plan ? await store.setTenantPlan(tenant.id, plan) : tenant;
    if (plan) await options.onTenantChange?.(tenant.id);
    return json(200, await tenantView(updated!));
  });

  for (const [action, status] of [
    ['suspend', 'suspended'],
    ['resume', 'active'],
  ] as const) {
    server.post(
      `/v1/admin/tenants/:id/${action}`,
      async (req) => {
        await auth.admin(req);
        const tenant = await tenantOr404(req.params.id);
        const updated = await store.setTenantStatus(tenant.id, status);
        await options.onTenantChange?.(tenant.id);
        return json(200, { ok: true, tenant: await tenantView(updated!) });
      },
      { body: 'none' },
    );
  }

  server.post('/v1/admin/tenants/:id/users', async (req) => {
    await auth.admin(req);
    const tenant = await tenantOr404(req.params.id);
    const f = new Fields(readJsonObject(req));
    const email = f.string('email', { required: true, max: 254, pattern: EMAIL, patternHint: 'must be an e-mail address' });
    const password = f.string('password', { required: true, min: 8, max: 1024 });
    f.done();
    const user = await store.createUser(tenant.id, email!, await hashes.run(() => hashPassword(password!)));
    if (user === 'email_taken') throw new HttpError('conflict', `A user with e-mail ${email} already exists.`);
    return json(201, user);
  });

  server.post(
    '/v1/auth/login',
    async (req) => {
      // Every attempt counts against the client's address, malformed ones included.
      const byAddress = limiter.hit(`login-address:${req.remoteAddress}`, limits.loginAttemptsPerAddress, now());
      if (!byAddress.allowed) throw overLimit(byAddress, `${describeRate(limits.loginAttemptsPerAddress, 'login attempts')} per client address`);
      const f = new Fields(readJsonObject(req));
      const email = f.string('email', { required: true, max: 254 });
      const password = f.string('password', { required: true, max: 1024 });
      f.done();
      // Only failures count against an e-mail; once it has too many, even the right password
      // waits out the window, and nothing is hashed meanwhile.
      const emailKey = `login-email:${email!.toLowerCase()}`;
      const failures = limiter.peek(emailKey, limits.loginFailuresPerEmail, now());
      if (!failures.allowed) throw overLimit(failures, `${describeRate(limits.loginFailuresPerEmail, 'failed logins')} per e-mail address`);
      const user = await store.findUserByEmail(email!);
      // Verify against a dummy hash when the user is unknown, so timing does not reveal which e-mails exist.
      const ok = await hashes.run(() => verifyPassword(password!, user?.passwordHash ?? DUMMY_HASH));
      if (!user || !ok) {
        limiter.hit(emailKey, limits.loginFailuresPerEmail, now());
        throw new HttpError('unauthorized', 'Wrong e-mail or password.');
      }
      const tenant = await store.getTenant(user.tenantId);
      if (!tenant) throw new HttpError('unauthorized', 'Wrong e-mail or password.');
      if (tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this user is suspended.');
      const token = newToken('session');
      const expiresAt = now() + SESSION_TTL_MS;
      await store.createSession(hashToken(token), user.id, user.tenantId, expiresAt);
      return json(200, { token, expiresAt: new Date(expiresAt).toISOString() });
    },
    { credentials: 'public' },
  );

  server.post(
    '/v1/auth/logout',
    async (req) => {
      const session = await auth.session(req);
      await store.deleteSession(session.tokenHash);
      return empty(204);
    },
    { body: 'none' },
  );

  server.get('/v1/auth/me', async (req) => {
    const session = await auth.session(req);
    return json(200, { userId: session.userId, tenant: await tenantView(session.tenant) });
  });

  server.post('/v1/api-keys', async (req) => {
    const session = await auth.session(req);
    requirePlan(session.tenant.plan, 'agency');
    const f = new Fields(readJsonObject(req));
    const name = f.string('name', { required: true, max: 200 });
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

  server.get('/v1/api-keys', async (req) => {
    const session = await auth.session(req);
    return json(200, await store.listApiKeys(session.tenant.id));
  });

  mountPersonalTokenRoutes(server, options);

  server.delete('/v1/api-keys/:id', async (req) => {
    const session = await auth.session(req);
    const id = idParam(req.params.id, 'API key');
    if (!(await store.revokeApiKey(session.tenant.id, id))) throw new HttpError('not_found', `No API key with id ${id}.`);
    return empty(204);
  });
}

/** Live (not revoked, not expired) personal access tokens one user may hold. */
export const MAX_LIVE_PERSONAL_TOKENS = 20;
/** The longest lifetime a personal access token may be given when it is given one. */
export const MAX_TOKEN_DAYS = 3650;

function readScopes(f: Fields, body: Record<string, unknown>): TokenScope[] | undefined {
  const v = body.scopes;
  if (v === undefined || v === null) return void f.problem('scopes', `is required: a non-empty array of ${TOKEN_SCOPES.join(', ')}`);
  if (!Array.isArray(v) || v.length === 0) return void f.problem('scopes', `must be a non-empty array of ${TOKEN_SCOPES.join(', ')}`);
  const bad = v.find((s) => typeof s !== 'string' || !(TOKEN_SCOPES as readonly string[]).includes(s));
  if (bad !== undefined) return void f.problem('scopes', `must contain only ${TOKEN_SCOPES.join(', ')}, got ${JSON.stringify(bad)}`);
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
export function mountPersonalTokenRoutes(server: HttpServer, options: IdentityRoutesOptions): void {
  const { store, auth } = options;
  const now = options.now ?? Date.now;

  server.post('/v1/tokens', async (req) => {
    const session = await auth.session(req);
    const body = readJsonObject(req);
    const f = new Fields(body);
    const name = f.string('name', { required: true, max: 200 });
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

  server.get('/v1/tokens', async (req) => {
    const session = await auth.session(req);
    return json(200, (await store.listPersonalTokens(session.userId)).map(tokenView));
  });

  server.delete('/v1/tokens/:id', async (req) => {
    const session = await auth.session(req);
    const id = idParam(req.params.id, 'personal access token');
    if (!(await store.revokePersonalToken(session.userId, id))) throw new HttpError('not_found', `No personal access token with id ${id}.`);
    return empty(204);
  });
}

export function requirePlan(plan: Plan, needed: Plan): void {
  if (!planAtLeast(plan, needed)) throw new HttpError('plan_required', `This needs the ${needed} plan or higher; the tenant is on ${plan}.`);
}

const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
