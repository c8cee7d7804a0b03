import { HttpError } from '../http/errors.js';
import { json } from '../http/reply.js';
import { ARRAY_PAGE_LIMIT, ListPage } from '../http/pagination.js';
import { Fields, readJsonObject } from '../http/validate.js';
import { tenantOr404, type IdentityRouteContext } from './route-context.js';
import { hashPassword } from './tokens.js';
import { PLANS } from './types.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The operator's tenant administration: tenants, their plan and status, and their users. */
export function mountTenantAdminRoutes(ctx: IdentityRouteContext): void {
  const { server, store, auth, options, hashes, tenantView } = ctx;
  const admin = server.scoped('admin');

  admin.post('/v1/admin/tenants', async (req) => {
    await auth.admin(req);
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['name', 'plan']);
    const name = f.string('name', { required: true, max: 200, notBlank: true });
    const plan = f.oneOf('plan', PLANS, { required: true });
    f.done();
    return json(201, await tenantView(await store.createTenant(name!, plan!)));
  });

  admin.get('/v1/admin/tenants', async (req) => {
    await auth.admin(req);
    const list = new ListPage(req, { list: 'tenants', owner: 'admin' }, ARRAY_PAGE_LIMIT);
    const page = await store.listTenants(list.limit, list.from);
    return json(200, await Promise.all(page.data.map(tenantView)), list.nextPageHeaders(page.nextCursor));
  });

  admin.get('/v1/admin/tenants/:id', async (req) => {
    await auth.admin(req);
    const tenant = await tenantOr404(store, req.params.id);
    // The servers are paged like every list (an enterprise tenant's are not counted): ?limit= and ?cursor= page them, Link names the next page.
    const list = new ListPage(req, { list: 'tenant-servers', owner: 'admin' }, ARRAY_PAGE_LIMIT);
    const servers = await ctx.insights().servers(tenant.id, list);
    return json(200, { ...(await tenantView(tenant)), servers: servers.data }, list.nextPageHeaders(servers.nextCursor));
  });

  admin.patch('/v1/admin/tenants/:id', async (req) => {
    await auth.admin(req);
    const tenant = await tenantOr404(store, req.params.id);
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
    admin.post(
      `/v1/admin/tenants/:id/${action}`,
      async (req) => {
        await auth.admin(req);
        const tenant = await tenantOr404(store, req.params.id);
        const updated = await store.setTenantStatus(tenant.id, status);
        await options.onTenantChange?.(tenant.id);
        return json(200, { ok: true, tenant: await tenantView(updated!) });
      },
      { body: 'none' },
    );
  }

  admin.post('/v1/admin/tenants/:id/users', async (req) => {
    await auth.admin(req);
    const tenant = await tenantOr404(store, req.params.id);
    const f = new Fields(readJsonObject(req));
    f.onlyKnown(['email', 'password']);
    const email = f.string('email', { required: true, max: 254, pattern: EMAIL, patternHint: 'must be an e-mail address' });
    const password = f.string('password', { required: true, min: 8, max: 1024 });
    f.done();
    const user = await store.createUser(tenant.id, email!, await hashes.run(() => hashPassword(password!)));
    if (user === 'email_taken') throw new HttpError('conflict', `A user with e-mail ${email} already exists.`);
    return json(201, user);
  });
}
