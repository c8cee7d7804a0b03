import { randomBytes } from 'node:crypto';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { openControlPlaneStore } from '../controlplane/open-store.js';
import type { ControlPlaneStore } from '../controlplane/store.js';
import type { ServerId } from '../controlplane/types.js';
import { openIdentityStore } from '../identity/open-store.js';
import type { IdentityStore } from '../identity/store.js';
import { hashPassword, hashToken, newToken } from '../identity/tokens.js';
import type { TenantId } from '../identity/types.js';
import { openDatabaseAt, type Database, type DatabaseLocation } from '../store/database.js';
import { migratePg, queryRow, type Pool } from '../store/postgres.js';
import { migrate, type Db } from '../store/sqlite.js';

/** What `brainstem up` creates on its first run and reuses afterwards. */
export interface LocalStack {
  tenantId: number;
  email: string;
  password: string;
  serverId: number;
  serverKey: string;
  /** A property-video API key of the tenant (`bpk_`), so the API answers without a login first. */
  apiKey: string;
  adminToken: string;
  /** The sidecar's token (`bst_`): every route but /health needs it. */
  brainToken: string;
}

/**
 * Component `up` of the schema: one row holding the local stack's credentials in plain text.
 * This is a local development stack: whoever can read the DB file already holds every record
 * these credentials protect, and keeping them lets every run print the same login and start
 * the sidecar with a working key. Do not run `brainstem up` on a database that serves others.
 */
const MIGRATIONS = [
  {
    version: 1,
    sql: `CREATE TABLE local_stack (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      tenant_id INTEGER NOT NULL,
      email TEXT NOT NULL,
      password TEXT NOT NULL,
      server_id INTEGER NOT NULL,
      server_key TEXT NOT NULL,
      admin_token TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`,
  },
  { version: 2, sql: 'ALTER TABLE local_stack ADD COLUMN api_key TEXT' },
  { version: 3, sql: 'ALTER TABLE local_stack ADD COLUMN brain_token TEXT' },
];

const PG_MIGRATIONS = [
  {
    version: 1,
    sql: `CREATE TABLE local_stack (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      tenant_id BIGINT NOT NULL,
      email TEXT NOT NULL,
      password TEXT NOT NULL,
      server_id BIGINT NOT NULL,
      server_key TEXT NOT NULL,
      admin_token TEXT NOT NULL,
      created_at TEXT NOT NULL
    )`,
  },
  { version: 2, sql: 'ALTER TABLE local_stack ADD COLUMN api_key TEXT' },
  { version: 3, sql: 'ALTER TABLE local_stack ADD COLUMN brain_token TEXT' },
];

interface Row {
  tenant_id: number;
  email: string;
  password: string;
  server_id: number;
  server_key: string;
  /** Null in a stack made before the stack kept one; issued on its next run. */
  api_key: string | null;
  admin_token: string;
  /** Null in a stack made before its sidecar had a token; made on its next run. */
  brain_token: string | null;
}

/**
 * Opens the database, creates the local stack's tenant (plan agency, so every feature works),
 * user, server, server key and property-video API key when it has none, and returns them. A
 * stored key that was revoked meanwhile (or an API key the stack did not keep yet) is replaced
 * by a fresh one. `adminToken` (SERVICE_ADMIN_TOKEN) wins over the stored one without
 * replacing it, and so does `brainToken` (SERVICE_BRAIN_TOKEN) over the stored sidecar token,
 * which is made once and kept, so a mod configured with it keeps working across restarts.
 * The database is closed again before returning.
 */
export async function ensureLocalStack(
  location: DatabaseLocation,
  options: { adminToken?: string; brainToken?: string; now?: () => number } = {},
): Promise<{ stack: LocalStack; created: boolean }> {
  const database = openDatabaseAt(location);
  try {
    const identity = await openIdentityStore(database, options.now);
    const controlPlane = await openControlPlaneStore(database, options.now);
    const rows = await localStackRows(database);
    const row = await rows.read();
    if (row && (await identity.getTenant(row.tenant_id as TenantId)) && (await controlPlane.getServer(row.server_id as ServerId))) {
      const keys = {
        serverKey: (await controlPlane.findServerKey(hashToken(row.server_key))) ? row.server_key : await issueKey(controlPlane, row.server_id as ServerId),
        apiKey: row.api_key && (await identity.findApiKey(hashToken(row.api_key))) ? row.api_key : await issueApiKey(identity, row.tenant_id as TenantId),
      };
      const brainToken = row.brain_token ?? newToken('brainToken');
      if (keys.serverKey !== row.server_key || keys.apiKey !== row.api_key || brainToken !== row.brain_token)
        await rows.save({ ...row, server_key: keys.serverKey, api_key: keys.apiKey, brain_token: brainToken }, options.now ?? Date.now);
      return { stack: toStack({ ...row, brain_token: brainToken }, keys, options), created: false };
    }
    const tenant = await identity.createTenant('Local stack', 'agency');
    const password = randomBytes(12).toString('base64url');
    let email = 'dev@brainstem.local';
    let user = await identity.createUser(tenant.id, email, await hashPassword(password));
    if (user === 'email_taken') {
      email = `dev-${randomBytes(4).toString('hex')}@brainstem.local`;
      user = await identity.createUser(tenant.id, email, await hashPassword(password));
      if (user === 'email_taken') throw new Error('could not create the local user: e-mail taken');
    }
    const server = await controlPlane.createServer(tenant.id, 'Local game server', DEFAULT_BUNDLE, 'brainstem up');
    const keys = { serverKey: await issueKey(controlPlane, server.id), apiKey: await issueApiKey(identity, tenant.id) };
    const stored: Row & { brain_token: string } = {
      tenant_id: tenant.id,
      email,
      password,
      server_id: server.id,
      server_key: keys.serverKey,
      api_key: keys.apiKey,
      admin_token: newToken('admin'),
      brain_token: newToken('brainToken'),
    };
    await rows.save(stored, options.now ?? Date.now);
    return { stack: toStack(stored, keys, options), created: true };
  } finally {
    await database.close();
  }
}

async function issueKey(store: ControlPlaneStore, server: ServerId): Promise<string> {
  const key = newToken('serverKey');
  await store.createServerKey(server, hashToken(key), key.slice(0, 8));
  return key;
}

async function issueApiKey(store: IdentityStore, tenant: TenantId): Promise<string> {
  const key = newToken('apiKey');
  await store.createApiKey(tenant, 'brainstem up', hashToken(key), key.slice(0, 8));
  return key;
}

/** The one row of local_stack, on either database. */
interface LocalStackRows {
  read(): Promise<Row | undefined>;
  save(row: Row, now: () => number): Promise<void>;
}

const SAVE_COLUMNS = 'id, tenant_id, email, password, server_id, server_key, api_key, admin_token, brain_token, created_at';
const ON_CONFLICT = `ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, email = excluded.email, password = excluded.password,
  server_id = excluded.server_id, server_key = excluded.server_key, api_key = excluded.api_key, admin_token = excluded.admin_token,
  brain_token = excluded.brain_token, created_at = excluded.created_at`;
const READ = 'SELECT tenant_id, email, password, server_id, server_key, api_key, admin_token, brain_token FROM local_stack WHERE id = 1';
const values = (r: Row, now: () => number) => [
  r.tenant_id,
  r.email,
  r.password,
  r.server_id,
  r.server_key,
  r.api_key,
  r.admin_token,
  r.brain_token,
  new Date(now()).toISOString(),
];

async function localStackRows(database: Database): Promise<LocalStackRows> {
  if (database.kind === 'sqlite') {
    const db: Db = database.db;
    migrate(db, 'up', MIGRATIONS);
    return {
      read: async () => db.prepare(READ).get() as Row | undefined,
      save: async (r, now) =>
        void db.prepare(`INSERT INTO local_stack (${SAVE_COLUMNS}) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${ON_CONFLICT}`).run(...values(r, now)),
    };
  }
  const pool: Pool = database.pool;
  await migratePg(pool, 'up', PG_MIGRATIONS);
  return {
    read: () => queryRow<Row>(pool, READ, []),
    save: async (r, now) =>
      void (await pool.query(`INSERT INTO local_stack (${SAVE_COLUMNS}) VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8, $9) ${ON_CONFLICT}`, values(r, now))),
  };
}

function toStack(
  r: Row & { brain_token: string },
  keys: { serverKey: string; apiKey: string },
  given: { adminToken?: string; brainToken?: string },
): LocalStack {
  return {
    tenantId: r.tenant_id,
    email: r.email,
    password: r.password,
    serverId: r.server_id,
    ...keys,
    adminToken: given.adminToken || r.admin_token,
    brainToken: given.brainToken || r.brain_token,
  };
}
