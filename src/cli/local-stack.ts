import { randomBytes } from 'node:crypto';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { SqliteControlPlaneStore } from '../controlplane/sqlite-store.js';
import type { ServerId } from '../controlplane/types.js';
import { SqliteIdentityStore } from '../identity/sqlite-store.js';
import { hashPassword, hashToken, newToken } from '../identity/tokens.js';
import type { TenantId } from '../identity/types.js';
import { migrate, openDatabase, type Db } from '../store/sqlite.js';

/** What `brainstem up` creates on its first run and reuses afterwards. */
export interface LocalStack {
  tenantId: number;
  email: string;
  password: string;
  serverId: number;
  serverKey: string;
  adminToken: string;
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
];

interface Row {
  tenant_id: number;
  email: string;
  password: string;
  server_id: number;
  server_key: string;
  admin_token: string;
}

/**
 * Opens the DB file, creates the local stack's tenant (plan agency, so every feature works),
 * user, server and server key when the file has none, and returns them. A stored key that was
 * revoked meanwhile is replaced by a fresh one. `adminToken` (SERVICE_ADMIN_TOKEN) wins over
 * the stored one without replacing it. The DB is closed again before returning.
 */
export async function ensureLocalStack(file: string, options: { adminToken?: string; now?: () => number } = {}): Promise<{ stack: LocalStack; created: boolean }> {
  const db = openDatabase(file);
  try {
    const identity = new SqliteIdentityStore(db, options.now);
    const controlPlane = new SqliteControlPlaneStore(db, options.now);
    migrate(db, 'up', MIGRATIONS);
    const row = db.prepare('SELECT tenant_id, email, password, server_id, server_key, admin_token FROM local_stack WHERE id = 1').get() as Row | undefined;
    if (row && (await identity.getTenant(row.tenant_id as TenantId)) && (await controlPlane.getServer(row.server_id as ServerId))) {
      let serverKey = row.server_key;
      if (!(await controlPlane.findServerKey(hashToken(serverKey)))) {
        serverKey = await issueKey(controlPlane, row.server_id as ServerId);
        db.prepare('UPDATE local_stack SET server_key = ? WHERE id = 1').run(serverKey);
      }
      return { stack: toStack(row, serverKey, options.adminToken), created: false };
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
    const serverKey = await issueKey(controlPlane, server.id);
    const stored: Row = { tenant_id: tenant.id, email, password, server_id: server.id, server_key: serverKey, admin_token: newToken('admin') };
    save(db, stored, options.now ?? Date.now);
    return { stack: toStack(stored, serverKey, options.adminToken), created: true };
  } finally {
    db.close();
  }
}

async function issueKey(store: SqliteControlPlaneStore, server: ServerId): Promise<string> {
  const key = newToken('serverKey');
  await store.createServerKey(server, hashToken(key), key.slice(0, 8));
  return key;
}

function save(db: Db, r: Row, now: () => number): void {
  db.prepare(
    `INSERT INTO local_stack (id, tenant_id, email, password, server_id, server_key, admin_token, created_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET tenant_id = excluded.tenant_id, email = excluded.email, password = excluded.password,
       server_id = excluded.server_id, server_key = excluded.server_key, admin_token = excluded.admin_token, created_at = excluded.created_at`,
  ).run(r.tenant_id, r.email, r.password, r.server_id, r.server_key, r.admin_token, new Date(now()).toISOString());
}

function toStack(r: Row, serverKey: string, adminToken: string | undefined): LocalStack {
  return {
    tenantId: r.tenant_id,
    email: r.email,
    password: r.password,
    serverId: r.server_id,
    serverKey,
    adminToken: adminToken || r.admin_token,
  };
}
