import type { Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { scopeAdmits } from './scopes.js';
import type { IdentityStore } from './store.js';
import { TOKEN_PREFIX, hashToken, safeEqual } from './tokens.js';
import type { Principal, TenantRecord } from './types.js';

export type SessionPrincipal = Extract<Principal, { kind: 'session' }>;
export type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;

/** Another credential kind a service owns (server keys, widget keys): tells whether a token is one of its valid ones. */
export type CredentialProbe = (token: string) => Promise<{ tenant: TenantRecord } | null>;

export interface AuthenticatorOptions {
  /** SERVICE_ADMIN_TOKEN; without it the admin routes answer 401 to everyone. */
  adminToken?: string | undefined;
  now?: () => number;
}

/** Reads `Authorization: Bearer <token>`; null when absent or not a bearer credential. */
export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

function active(tenant: TenantRecord): void {
  if (tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this credential is suspended.');
}

/**
 * Resolves bearer tokens to principals for every embedded service. A valid credential of the
 * wrong kind for a route is a 403 (scope); an unknown one is a 401.
 */
export class Authenticator {
  private readonly adminToken: string | undefined;
  private readonly now: () => number;
  private readonly probes: CredentialProbe[] = [];

  constructor(private readonly store: IdentityStore, options: AuthenticatorOptions = {}) {
    this.adminToken = options.adminToken || undefined;
    this.now = options.now ?? Date.now;
  }

  /** Lets a service teach the authenticator its own credential kind, so that it is answered 403 (not 401) elsewhere. */
  addProbe(probe: CredentialProbe): void {
    this.probes.push(probe);
  }

  private async resolve(token: string): Promise<Principal | 'other' | null> {
    if (this.adminToken && safeEqual(token, this.adminToken)) return { kind: 'admin' };
    if (token.startsWith(TOKEN_PREFIX.session)) {
      const hash = hashToken(token);
      const s = await this.store.findSession(hash, this.now());
      return s ? { kind: 'session', tenant: s.tenant, userId: s.userId, tokenHash: hash, scopes: null } : null;
    }
    if (token.startsWith(TOKEN_PREFIX.personal)) {
      const hash = hashToken(token);
      const p = await this.store.usePersonalToken(hash, this.now());
      return p ? { kind: 'session', tenant: p.tenant, userId: p.token.userId, tokenHash: hash, scopes: p.token.scopes } : null;
    }
    if (token.startsWith(TOKEN_PREFIX.apiKey)) {
      const k = await this.store.findApiKey(hashToken(token));
      return k ? { kind: 'apiKey', tenant: k.tenant, keyId: k.keyId } : null;
    }
    for (const probe of this.probes) {
      const found = await probe(token);
      if (found) {
        active(found.tenant);
        return 'other';
      }
    }
    return null;
  }

  private async require<K extends Principal['kind']>(req: Request, kinds: readonly K[], what: string): Promise<Extract<Principal, { kind: K }>> {
    const token = bearerToken(req);
    if (!token) throw new HttpError('unauthorized', 'Missing Authorization: Bearer credential.');
    const principal = await this.resolve(token);
    if (principal === null) throw new HttpError('unauthorized', 'The credential is invalid, expired or revoked.');
    if (principal === 'other' || !kinds.includes(principal.kind as K)) throw new HttpError('forbidden', `This route needs ${what}.`);
    if (principal.kind !== 'admin') active(principal.tenant);
    if (principal.kind === 'session' && principal.scopes && !scopeAdmits(principal.scopes, req.method, req.path)) {
      throw new HttpError('forbidden', `This personal access token's scopes (${principal.scopes.join(', ')}) do not admit ${req.method} ${req.path}.`);
    }
    return principal as Extract<Principal, { kind: K }>;
  }

  session(req: Request): Promise<SessionPrincipal> {
    return this.require(req, ['session'], 'a user session token');
  }

  admin(req: Request): Promise<Extract<Principal, { kind: 'admin' }>> {
    return this.require(req, ['admin'], 'the admin token');
  }

  apiKey(req: Request): Promise<ApiKeyPrincipal> {
    return this.require(req, ['apiKey'], 'a property-video API key');
  }

  /** A session or an API key: both speak for a tenant. */
  tenant(req: Request): Promise<SessionPrincipal | ApiKeyPrincipal> {
    return this.require(req, ['session', 'apiKey'], 'a user session or API key');
  }
}
