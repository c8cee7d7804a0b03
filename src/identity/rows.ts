import type { ApiKeyRecord, PersonalTokenRecord, Plan, TenantId, TenantRecord, TenantStatus, UserId } from './types.js';
import type { TokenScope } from '../http/scope.js';

/** Rows of the identity tables as both stores read them (the schemas match column for column). */
export interface PersonalTokenRow {
  id: number;
  user_id: number;
  name: string;
  scopes: string;
  preview: string;
  created_at: string;
  expires_at: number | null;
  last_used_at: number | null;
  revoked_at: string | null;
}

export function personalTokenOf(row: PersonalTokenRow): PersonalTokenRecord {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    userId: row.user_id as UserId,
    name: row.name,
    scopes: JSON.parse(row.scopes) as TokenScope[],
    preview: row.preview,
    createdAt: row.created_at,
    expiresAt: iso(row.expires_at),
    lastUsedAt: iso(row.last_used_at),
    revokedAt: row.revoked_at,
  };
}

export interface TenantRow {
  id: number;
  name: string;
  plan: string;
  status: string;
  created_at: string;
}

export function tenantOf(row: TenantRow): TenantRecord {
  return { id: row.id as TenantId, name: row.name, plan: row.plan as Plan, status: row.status as TenantStatus, createdAt: row.created_at };
}

export interface ApiKeyRow {
  id: number;
  tenant_id: number;
  name: string;
  preview: string;
  created_at: string;
  revoked_at: string | null;
}

export function apiKeyOf(row: ApiKeyRow): ApiKeyRecord {
  return { id: row.id, tenantId: row.tenant_id as TenantId, name: row.name, preview: row.preview, createdAt: row.created_at, revokedAt: row.revoked_at };
}

/** A live personal token joined with its tenant (columns of the token prefixed p_), as usePersonalToken reads it. */
export type PersonalTokenUseRow = TenantRow & {
  p_id: number;
  p_user_id: number;
  p_name: string;
  p_scopes: string;
  p_preview: string;
  p_created_at: string;
  p_expires_at: number | null;
  p_last_used_at: number | null;
};

/** The SELECT of a live token by hash (placeholders `?`-free: each store adds its own, for the hash and for now). */
export const PERSONAL_TOKEN_USE_COLUMNS = `p.id AS p_id, p.user_id AS p_user_id, p.name AS p_name, p.scopes AS p_scopes, p.preview AS p_preview, p.created_at AS p_created_at,
  p.expires_at AS p_expires_at, p.last_used_at AS p_last_used_at, t.*`;

/** The token as used at `now` (its last use is now) and its tenant. */
export function personalTokenUseOf(row: PersonalTokenUseRow, now: number): { token: PersonalTokenRecord; tenant: TenantRecord } {
  const token = personalTokenOf({
    id: row.p_id,
    user_id: row.p_user_id,
    name: row.p_name,
    scopes: row.p_scopes,
    preview: row.p_preview,
    created_at: row.p_created_at,
    expires_at: row.p_expires_at,
    last_used_at: now,
    revoked_at: null,
  });
  return { token, tenant: tenantOf(row) };
}
