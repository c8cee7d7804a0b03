import type { ApiKeyRecord, PersonalTokenRecord, Plan, TenantId, TenantRecord, TenantStatus, TokenScope, UserId } from './types.js';

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
