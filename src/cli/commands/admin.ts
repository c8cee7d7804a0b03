import type { Command } from 'commander';
import type { IdentityStore } from '../../identity/store.js';
import { hashPassword, hashToken, newToken } from '../../identity/tokens.js';
import { PLANS, planAtLeast, type Plan, type TenantId } from '../../identity/types.js';
import { CliError, parseInteger, withDatabaseOptions } from '../util.js';
import { withDataDirOption } from '../data-dir.js';
import { withStackDatabase } from './stack-database.js';
import type { ControlPlaneStore } from '../../controlplane/store.js';
import type { ServerId } from '../../controlplane/types.js';

/** Runs `fn` on the stores of the command's database and prints what it returns as JSON. */
const withStore: WithStore = (cmd, fn) =>
  withStackDatabase(cmd, (database, identity) => fn(identity, async () => (await import('../../controlplane/open-store.js')).openControlPlaneStore(database)));

/** The tenant of `--tenant`, or a CLI error naming the id. */
const tenantOf = async (store: IdentityStore, raw: string) => {
  const tenant = await store.getTenant(parseInteger(raw, '--tenant', 1, Number.MAX_SAFE_INTEGER) as TenantId);
  if (!tenant) throw new CliError(`no tenant with id ${raw}`);
  return tenant;
};

/**
 * Offline bootstrap on the services' database (a SQLite file or PostgreSQL): the same records the admin routes make, without a running
 * server. Each prints JSON (secrets are shown once, here).
 */
export function registerAdmin(program: Command): void {
  const admin = withDataDirOption(
    withDatabaseOptions(program.command('admin').description("offline bootstrap on the services' database (prints JSON)")),
    'the data directory whose brainstem.db to use, as serve and up find it',
  );

  admin
    .command('create-tenant')
    .description('create a tenant')
    .requiredOption('--name <name>', 'tenant name')
    .option('--plan <plan>', `one of ${PLANS.join(', ')}`, 'trial')
    .action(async (opts: { name: string; plan: string }, cmd: Command) => {
      if (!PLANS.includes(opts.plan as Plan)) throw new CliError(`--plan must be one of ${PLANS.join(', ')}, got "${opts.plan}"`);
      if (!opts.name.trim()) throw new CliError('--name must not be empty');
      // Printed as the spec's Tenant (§2.5), like POST /v1/admin/tenants: a new tenant has no
      // servers and no spend yet.
      await withStore(cmd, async (store) => {
        const t = await store.createTenant(opts.name, opts.plan as Plan);
        return { id: t.id, name: t.name, plan: t.plan, serverCount: 0, monthlySpendUsd: 0, status: t.status, createdAt: t.createdAt };
      });
    });

  admin
    .command('create-user')
    .description('create a user of a tenant')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--email <email>', 'login e-mail')
    .requiredOption('--password <password>', 'password (at least 8 characters)')
    .action(async (opts: { tenant: string; email: string; password: string }, cmd: Command) => {
      if (opts.password.length < 8) throw new CliError('--password must be at least 8 characters');
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(opts.email)) throw new CliError(`--email must be an e-mail address, got "${opts.email}"`);
      await withStore(cmd, async (store) => {
        const tenant = await tenantOf(store, opts.tenant);
        const user = await store.createUser(tenant.id, opts.email, await hashPassword(opts.password));
        if (user === 'email_taken') throw new CliError(`a user with e-mail ${opts.email} already exists`);
        return user;
      });
    });

  admin
    .command('create-api-key')
    .description('issue a property-video API key for a tenant (shown once)')
    .requiredOption('--tenant <id>', 'tenant id')
    .option('--name <name>', 'key name', 'default')
    .action(async (opts: { tenant: string; name: string }, cmd: Command) => {
      await withStore(cmd, async (store) => {
        const tenant = await tenantOf(store, opts.tenant);
        // Same rule as POST /v1/api-keys: a key below agency would only ever answer 403.
        if (!planAtLeast(tenant.plan, 'agency')) throw new CliError(`API keys need the agency plan or higher; tenant ${tenant.id} is on ${tenant.plan}`);
        const key = newToken('apiKey');
        // The operator's own tool: the live-key quota binds tenants' sessions, not this.
        const record = await store.createApiKey(tenant.id, opts.name, hashToken(key), key.slice(0, 8));
        return { id: record.id, name: record.name, key, createdAt: record.createdAt };
      });
    });

  registerControlPlaneAdmin(admin, withStore, tenantOf);
}

/** Control-plane records (servers and server keys), same as the dashboard routes make. */
function registerControlPlaneAdmin(admin: Command, withStore: WithStore, tenantOf: (store: IdentityStore, raw: string) => Promise<{ id: TenantId }>): void {
  admin
    .command('create-server')
    .description('create a game server for a tenant, with the default bundle published as version 1')
    .requiredOption('--tenant <id>', 'tenant id')
    .requiredOption('--name <name>', 'server name')
    .action(async (opts: { tenant: string; name: string }, cmd: Command) => {
      if (!opts.name.trim() || opts.name.length > 200) throw new CliError('--name must be 1 to 200 characters');
      await withStore(cmd, async (store, controlPlane) => {
        const tenant = await tenantOf(store, opts.tenant);
        const { DEFAULT_BUNDLE } = await import('../../../brain/index.js');
        const server = await (await controlPlane()).createServer(tenant.id, opts.name, DEFAULT_BUNDLE, 'system');
        return { ...server, configVersion: 1 };
      });
    });

  admin
    .command('create-server-key')
    .description('issue a server key for a sidecar (shown once)')
    .requiredOption('--server <id>', 'server id')
    .action(async (opts: { server: string }, cmd: Command) => {
      await withStore(cmd, async (_store, controlPlane) => {
        const cp = await controlPlane();
        const server = await cp.getServer(parseInteger(opts.server, '--server', 1, Number.MAX_SAFE_INTEGER) as ServerId);
        if (!server) throw new CliError(`no server with id ${opts.server}`);
        const key = newToken('serverKey');
        const record = await cp.createServerKey(server.id, hashToken(key), key.slice(0, 8));
        return { id: record.id, key, serverId: server.id, preview: record.preview, createdAt: record.createdAt };
      });
    });
}

type WithStore = <T>(cmd: Command, fn: (store: IdentityStore, controlPlane: () => Promise<ControlPlaneStore>) => Promise<T>) => Promise<void>;
