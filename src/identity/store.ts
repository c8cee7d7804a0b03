import type { ApiKeyRecord, PersonalTokenRecord, Plan, TenantId, TenantRecord, TenantStatus, UserId, UserRecord } from './types.js';
import type { TokenScope } from '../http/scope.js';
import type { PageRead } from '../store/page.js';

/**
 * Tenants, users, sessions and API keys. Methods return promises so that a store on a
 * network database can stand in for SQLite without touching the services.
 */
export interface IdentityStore {
  createTenant(name: string, plan: Plan): Promise<TenantRecord>;
  getTenant(id: TenantId): Promise<TenantRecord | null>;
  /** Tenants by id, at most `limit` of them after the id `after` (null: from the first); `nextCursor` is the last id given when more follow. */
  listTenants(limit: number, after: number | null): Promise<{ data: TenantRecord[]; nextCursor: number | null }>;
  setTenantStatus(id: TenantId, status: TenantStatus): Promise<TenantRecord | null>;
  setTenantPlan(id: TenantId, plan: Plan): Promise<TenantRecord | null>;
  createUser(tenantId: TenantId, email: string, passwordHash: string): Promise<UserRecord | 'email_taken'>;
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string }) | null>;
  getUser(id: UserId): Promise<UserRecord | null>;
  createSession(tokenHash: string, userId: UserId, tenantId: TenantId, expiresAt: number): Promise<void>;
  /** The session's user and tenant when it exists and has not expired at `now`. */
  findSession(tokenHash: string, now: number): Promise<{ userId: UserId; tenant: TenantRecord; expiresAt: number } | null>;
  deleteSession(tokenHash: string): Promise<void>;
  createApiKey(tenantId: TenantId, name: string, tokenHash: string, preview: string): Promise<ApiKeyRecord>;
  /** Creates a key unless the tenant already has `maxLive` unrevoked ones ('limit'); the count and the insert are one transaction. */
  createApiKey(tenantId: TenantId, name: string, tokenHash: string, preview: string, maxLive: number): Promise<ApiKeyRecord | 'limit'>;
  /** The tenant's keys by id, revoked ones included; with `page`, at most `page.limit` of them with ids above `page.from`. */
  listApiKeys(tenantId: TenantId, page?: PageRead): Promise<ApiKeyRecord[]>;
  revokeApiKey(tenantId: TenantId, id: number): Promise<boolean>;
  findApiKey(tokenHash: string): Promise<{ keyId: number; tenant: TenantRecord } | null>;
  createPersonalToken(input: NewPersonalToken): Promise<PersonalTokenRecord>;
  /** As above unless the user already holds `maxLive` live tokens at `now` ('limit'); the count and the insert are one transaction. */
  createPersonalToken(input: NewPersonalToken, maxLive: number, now: number): Promise<PersonalTokenRecord | 'limit'>;
  /** The user's tokens, newest first, revoked and expired ones included (the page shows why a token stopped working). With `page`, at most `page.limit` of them with ids below `page.from`. */
  listPersonalTokens(userId: UserId, page?: PageRead): Promise<PersonalTokenRecord[]>;
  revokePersonalToken(userId: UserId, id: number): Promise<boolean>;
  /** A live (not revoked, not expired at `now`) token's record, user and tenant; records the use. */
  usePersonalToken(tokenHash: string, now: number): Promise<{ token: PersonalTokenRecord; tenant: TenantRecord } | null>;
}

export interface NewPersonalToken {
  userId: UserId;
  tenantId: TenantId;
  name: string;
  scopes: readonly TokenScope[];
  tokenHash: string;
  preview: string;
  /** Epoch ms, or null for a token that does not expire. */
  expiresAt: number | null;
}

/** A token's last use is written at most this often, so a busy CI job is not a write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;
