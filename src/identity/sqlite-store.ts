import { pageOf, type PageRead } from '../store/page.js';
import type { Db } from '../store/sqlite.js';
import { migrate } from '../store/sqlite.js';
import { LAST_USED_RESOLUTION_MS, type IdentityStore, type NewPersonalToken } from './store.js';
import {
  apiKeyOf,
  PERSONAL_TOKEN_USE_COLUMNS,
  personalTokenOf,
  personalTokenUseOf,
  tenantOf,
  type ApiKeyRow,
  type PersonalTokenRow,
  type PersonalTokenUseRow,
  type TenantRow,
} from './rows.js';
import type { ApiKeyRecord, PersonalTokenRecord, Plan, TenantId, TenantRecord, TenantStatus, UserId, UserRecord } from './types.js';

const MIGRATIONS = [
  {
    version: 1,
    sql: `
      CREATE TABLE tenants (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        plan TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'active',
        created_at TEXT NOT NULL
      );
      CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        expires_at INTEGER NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX sessions_expiry ON sessions(expires_at);
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        preview TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
    `,
  },
  {
    version: 2,
    sql: `
      CREATE TABLE personal_tokens (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        preview TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at INTEGER,
        last_used_at INTEGER,
        revoked_at TEXT
      );
      CREATE INDEX personal_tokens_user ON personal_tokens(user_id);
    `,
  },
];

export class SqliteIdentityStore implements IdentityStore {
  private readonly q;
  private readonly createKeyTx;
  private readonly createPersonalTx;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db, 'identity', MIGRATIONS);
    this.q = {
      insertTenant: db.prepare('INSERT INTO tenants (name, plan, created_at) VALUES (?, ?, ?) RETURNING *'),
      tenant: db.prepare('SELECT * FROM tenants WHERE id = ?'),
      tenants: db.prepare('SELECT * FROM tenants WHERE id > ? ORDER BY id LIMIT ?'),
      setStatus: db.prepare('UPDATE tenants SET status = ? WHERE id = ? RETURNING *'),
      setPlan: db.prepare('UPDATE tenants SET plan = ? WHERE id = ? RETURNING *'),
      insertUser: db.prepare('INSERT INTO users (tenant_id, email, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING id, tenant_id, email, created_at'),
      userByEmail: db.prepare('SELECT * FROM users WHERE email = ?'),
      user: db.prepare('SELECT id, tenant_id, email, created_at FROM users WHERE id = ?'),
      insertSession: db.prepare('INSERT INTO sessions (token_hash, user_id, tenant_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?)'),
      session: db.prepare(
        'SELECT s.user_id, s.expires_at, t.* FROM sessions s JOIN tenants t ON t.id = s.tenant_id WHERE s.token_hash = ? AND s.expires_at > ?',
      ),
      deleteSession: db.prepare('DELETE FROM sessions WHERE token_hash = ?'),
      purgeSessions: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
      insertKey: db.prepare('INSERT INTO api_keys (tenant_id, name, token_hash, preview, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *'),
      keys: db.prepare('SELECT * FROM api_keys WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?'),
      liveKeys: db.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL'),
      insertPersonal: db.prepare(
        'INSERT INTO personal_tokens (user_id, tenant_id, name, scopes, token_hash, preview, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *',
      ),
      personalTokens: db.prepare('SELECT * FROM personal_tokens WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
      livePersonal: db.prepare('SELECT COUNT(*) AS n FROM personal_tokens WHERE user_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)'),
      revokePersonal: db.prepare('UPDATE personal_tokens SET revoked_at = ? WHERE user_id = ? AND id = ? AND revoked_at IS NULL'),
      personalByHash: db.prepare(
        `SELECT ${PERSONAL_TOKEN_USE_COLUMNS} FROM personal_tokens p JOIN tenants t ON t.id = p.tenant_id
          WHERE p.token_hash = ? AND p.revoked_at IS NULL AND (p.expires_at IS NULL OR p.expires_at > ?)`,
      ),
      touchPersonal: db.prepare('UPDATE personal_tokens SET last_used_at = ? WHERE id = ?'),
      keyByHash: db.prepare('SELECT k.id AS key_id, t.* FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.token_hash = ? AND k.revoked_at IS NULL'),
    };
    this.createKeyTx = db.transaction((tenantId: TenantId, name: string, tokenHash: string, preview: string, maxLive: number): ApiKeyRecord | 'limit' => {
      if ((this.q.liveKeys.get(tenantId) as { n: number }).n >= maxLive) return 'limit';
      return apiKeyOf(this.q.insertKey.get(tenantId, name, tokenHash, preview, this.iso()) as ApiKeyRow);
    });
    this.createPersonalTx = db.transaction((input: NewPersonalToken, maxLive: number, now: number): PersonalTokenRecord | 'limit' => {
      if ((this.q.livePersonal.get(input.userId, now) as { n: number }).n >= maxLive) return 'limit';
      return this.insertPersonalToken(input);
    });
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  async createTenant(name: string, plan: Plan): Promise<TenantRecord> {
    return tenantOf(this.q.insertTenant.get(name, plan, this.iso()) as TenantRow);
  }

  async getTenant(id: TenantId): Promise<TenantRecord | null> {
    const row = this.q.tenant.get(id) as TenantRow | undefined;
    return row ? tenantOf(row) : null;
  }

  async listTenants(limit: number, after: number | null) {
    const rows = (this.q.tenants.all(after ?? 0, limit + 1) as TenantRow[]).map(tenantOf);
    return pageOf(rows, limit, (t) => t.id);
  }

  async setTenantStatus(id: TenantId, status: TenantStatus): Promise<TenantRecord | null> {
    const row = this.q.setStatus.get(status, id) as TenantRow | undefined;
    return row ? tenantOf(row) : null;
  }

  async setTenantPlan(id: TenantId, plan: Plan): Promise<TenantRecord | null> {
    const row = this.q.setPlan.get(plan, id) as TenantRow | undefined;
    return row ? tenantOf(row) : null;
  }

  async createUser(tenantId: TenantId, email: string, passwordHash: string): Promise<UserRecord | 'email_taken'> {
    try {
      const row = this.q.insertUser.get(tenantId, email, passwordHash, this.iso()) as { id: number; tenant_id: number; email: string; created_at: string };
      return { id: row.id as UserId, tenantId: row.tenant_id as TenantId, email: row.email, createdAt: row.created_at };
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return 'email_taken';
      throw err;
    }
  }

  async findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string }) | null> {
    const row = this.q.userByEmail.get(email) as { id: number; tenant_id: number; email: string; password_hash: string; created_at: string } | undefined;
    return row
      ? { id: row.id as UserId, tenantId: row.tenant_id as TenantId, email: row.email, createdAt: row.created_at, passwordHash: row.password_hash }
      : null;
  }

  async getUser(id: UserId): Promise<UserRecord | null> {
    const row = this.q.user.get(id) as { id: number; tenant_id: number; email: string; created_at: string } | undefined;
    return row ? { id: row.id as UserId, tenantId: row.tenant_id as TenantId, email: row.email, createdAt: row.created_at } : null;
  }

  async createSession(tokenHash: string, userId: UserId, tenantId: TenantId, expiresAt: number): Promise<void> {
    this.q.purgeSessions.run(this.now());
    this.q.insertSession.run(tokenHash, userId, tenantId, expiresAt, this.iso());
  }

  async findSession(tokenHash: string, now: number): Promise<{ userId: UserId; tenant: TenantRecord; expiresAt: number } | null> {
    const row = this.q.session.get(tokenHash, now) as (TenantRow & { user_id: number; expires_at: number }) | undefined;
    return row ? { userId: row.user_id as UserId, expiresAt: row.expires_at, tenant: tenantOf(row) } : null;
  }

  async deleteSession(tokenHash: string): Promise<void> {
    this.q.deleteSession.run(tokenHash);
  }

  createApiKey(tenantId: TenantId, name: string, tokenHash: string, preview: string): Promise<ApiKeyRecord>;
  createApiKey(tenantId: TenantId, name: string, tokenHash: string, preview: string, maxLive: number): Promise<ApiKeyRecord | 'limit'>;
  async createApiKey(tenantId: TenantId, name: string, tokenHash: string, preview: string, maxLive = Infinity): Promise<ApiKeyRecord | 'limit'> {
    return this.createKeyTx.immediate(tenantId, name, tokenHash, preview, maxLive);
  }

  async listApiKeys(tenantId: TenantId, page?: PageRead): Promise<ApiKeyRecord[]> {
    return (this.q.keys.all(tenantId, page?.from ?? 0, page?.limit ?? -1) as ApiKeyRow[]).map(apiKeyOf);
  }

  async revokeApiKey(tenantId: TenantId, id: number): Promise<boolean> {
    return this.q.revokeKey.run(this.iso(), tenantId, id).changes > 0;
  }

  async findApiKey(tokenHash: string): Promise<{ keyId: number; tenant: TenantRecord } | null> {
    const row = this.q.keyByHash.get(tokenHash) as (TenantRow & { key_id: number }) | undefined;
    return row ? { keyId: row.key_id, tenant: tenantOf(row) } : null;
  }

  createPersonalToken(input: NewPersonalToken): Promise<PersonalTokenRecord>;
  createPersonalToken(input: NewPersonalToken, maxLive: number, now: number): Promise<PersonalTokenRecord | 'limit'>;
  async createPersonalToken(input: NewPersonalToken, maxLive = Infinity, now = 0): Promise<PersonalTokenRecord | 'limit'> {
    return Number.isFinite(maxLive) ? this.createPersonalTx(input, maxLive, now) : this.insertPersonalToken(input);
  }

  private insertPersonalToken(input: NewPersonalToken): PersonalTokenRecord {
    const row = this.q.insertPersonal.get(
      input.userId,
      input.tenantId,
      input.name,
      JSON.stringify(input.scopes),
      input.tokenHash,
      input.preview,
      this.iso(),
      input.expiresAt,
    );
    return personalTokenOf(row as PersonalTokenRow);
  }

  async listPersonalTokens(userId: UserId, page?: PageRead): Promise<PersonalTokenRecord[]> {
    return (this.q.personalTokens.all(userId, page?.from ?? Number.MAX_SAFE_INTEGER, page?.limit ?? -1) as PersonalTokenRow[]).map(personalTokenOf);
  }

  async revokePersonalToken(userId: UserId, id: number): Promise<boolean> {
    return this.q.revokePersonal.run(this.iso(), userId, id).changes > 0;
  }

  async usePersonalToken(tokenHash: string, now: number): Promise<{ token: PersonalTokenRecord; tenant: TenantRecord } | null> {
    const row = this.q.personalByHash.get(tokenHash, now) as PersonalTokenUseRow | undefined;
    if (!row) return null;
    // Checked here, not only in the UPDATE's WHERE: an UPDATE that changes nothing still takes the write lock.
    if (row.p_last_used_at === null || row.p_last_used_at < now - LAST_USED_RESOLUTION_MS) this.q.touchPersonal.run(now, row.p_id);
    return personalTokenUseOf(row, now);
  }
}
