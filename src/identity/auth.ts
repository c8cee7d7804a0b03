import type { Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { limitsWith, type Limits } from '../http/limits.js';
import { overLimit } from '../http/ratelimit.js';
import { TOKEN_SCOPES, tokenAdmits, type RouteScope } from '../http/scope.js';
import { MemoryRateLimiter, describeRate, type RateDecision, type RateLimiter } from '../ratelimit/limiter.js';
import type { IdentityStore } from './store.js';
import { TOKEN_PREFIX, hashToken, safeEqual } from './tokens.js';
import type { Principal, TenantRecord } from './types.js';

export type SessionPrincipal = Extract<Principal, { kind: 'session' }>;
export type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;

/** Another credential kind a service owns (server keys, widget keys): tells whether a token is one of its valid ones. */
/**
 * A service's own credential kind, asked when no identity credential matches. It is given the
 * request so that the service may keep what it resolved for the handler of the same request
 * (one look-up per request, not one here and another in the handler).
 */
export type CredentialProbe = (token: string, req: Request) => Promise<{ tenant: TenantRecord } | null>;

export interface AuthenticatorOptions {
  /** SERVICE_ADMIN_TOKEN; without it the admin routes answer 401 to everyone. */
  adminToken?: string | undefined;
  now?: () => number;
  /** The limiter every route class shares; default a fresh in-memory one. */
  limiter?: RateLimiter;
  /** Default DEFAULT_LIMITS. */
  limits?: Limits;
}

/** Reads `Authorization: Bearer <token>`; null when absent or not a bearer credential. */
export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** A principal's rate before it is counted (never seen outside this module). */
const UNCOUNTED: RateDecision = { allowed: true, limit: 0, remaining: 0, resetAt: 0, retryAfterMs: 0 };

/** What a refused personal access token would need, for the 403's message. */
function needs(scope: RouteScope | null): string {
  if ((TOKEN_SCOPES as readonly (RouteScope | null)[]).includes(scope)) return ` (it needs the ${scope} scope)`;
  return ' (only a login session may)';
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
  /** Shared with the services, which count their own credential kinds (server keys, widget keys) in it. */
  readonly limiter: RateLimiter;
  readonly limits: Limits;

  constructor(
    private readonly store: IdentityStore,
    options: AuthenticatorOptions = {},
  ) {
    this.adminToken = options.adminToken || undefined;
    this.now = options.now ?? Date.now;
    this.limiter = options.limiter ?? new MemoryRateLimiter();
    this.limits = options.limits ?? limitsWith();
  }

  /** Lets a service teach the authenticator its own credential kind, so that it is answered 403 (not 401) elsewhere. */
  addProbe(probe: CredentialProbe): void {
    this.probes.push(probe);
  }

  private async resolve(token: string, req: Request): Promise<Principal | 'other' | null> {
    if (this.adminToken && safeEqual(token, this.adminToken)) return { kind: 'admin' };
    if (token.startsWith(TOKEN_PREFIX.session)) {
      const hash = hashToken(token);
      const s = await this.store.findSession(hash, this.now());
      return s ? { kind: 'session', tenant: s.tenant, userId: s.userId, tokenHash: hash, scopes: null, rate: UNCOUNTED } : null;
    }
    if (token.startsWith(TOKEN_PREFIX.personal)) {
      const hash = hashToken(token);
      const p = await this.store.usePersonalToken(hash, this.now());
      return p ? { kind: 'session', tenant: p.tenant, userId: p.token.userId, tokenHash: hash, scopes: p.token.scopes, rate: UNCOUNTED } : null;
    }
    if (token.startsWith(TOKEN_PREFIX.apiKey)) {
      const k = await this.store.findApiKey(hashToken(token));
      return k ? { kind: 'apiKey', tenant: k.tenant, keyId: k.keyId, rate: UNCOUNTED } : null;
    }
    for (const probe of this.probes) {
      const found = await probe(token, req);
      if (found) {
        active(found.tenant);
        return 'other';
      }
    }
    return null;
  }

  /**
   * resolve() once per request: the check before the body and the handler's check after it
   * share one look-up (a personal token's last use is touched once, nothing is counted twice).
   */
  private resolved(req: Request, token: string): Promise<Principal | 'other' | null> {
    const memo = this.memo.get(req);
    if (memo !== undefined && memo.token === token) return memo.principal;
    const principal = this.resolve(token, req);
    this.memo.set(req, { token, principal });
    return principal;
  }

  private readonly memo = new WeakMap<Request, { token: string; principal: Promise<Principal | 'other' | null> }>();

  /**
   * The check every embedded route with a body runs before reading it: a bearer credential is
   * present and is one this server knows (any kind: the handler then says whether it is the
   * right kind, 403 otherwise). Without one, or with an unknown one, the request is refused
   * 401 with its body unread.
   */
  beforeBody(req: Request): Promise<void> {
    const token = bearerToken(req);
    if (!token) return Promise.reject(new HttpError('unauthorized', 'Missing Authorization: Bearer credential.'));
    return this.resolved(req, token).then((principal) => {
      if (principal !== null) return;
      if (!this.adminToken && req.path.startsWith('/v1/admin/'))
        throw new HttpError('unauthorized', 'This server has no admin token: start it with SERVICE_ADMIN_TOKEN set to use the admin routes and /metrics.');
      throw new HttpError('unauthorized', 'The credential is invalid, expired or revoked.');
    });
  }

  private async require<K extends Principal['kind']>(req: Request, kinds: readonly K[], what: string): Promise<Extract<Principal, { kind: K }>> {
    const token = bearerToken(req);
    if (!token) throw new HttpError('unauthorized', 'Missing Authorization: Bearer credential.');
    const principal = await this.resolved(req, token);
    if (principal === null) throw new HttpError('unauthorized', 'The credential is invalid, expired or revoked.');
    if (principal === 'other' || !kinds.includes(principal.kind as K)) throw new HttpError('forbidden', `This route needs ${what}.`);
    if (principal.kind !== 'admin') active(principal.tenant);
    // A personal access token within its scopes: the route says which it needs where it is mounted.
    if (principal.kind === 'session' && principal.scopes && !tokenAdmits(principal.scopes, req.scope)) {
      throw new HttpError(
        'forbidden',
        `This personal access token's scopes (${principal.scopes.join(', ')}) do not admit ${req.method} ${req.path}${needs(req.scope)}.`,
      );
    }
    if (principal.kind !== 'admin') principal.rate = this.count(principal);
    return principal as Extract<Principal, { kind: K }>;
  }

  /**
   * Counts an authenticated request against its credential's limit; throws 429 past it. An
   * API key is also counted against its tenant's limit across all its keys, so minting more
   * keys buys no more requests; the headers report the key's own limit unless the tenant's refused.
   */
  private count(principal: Exclude<Principal, { kind: 'admin' }>): RateDecision {
    const now = this.now();
    if (principal.kind === 'session') {
      const d = this.limiter.hit(`session:${principal.tokenHash}`, this.limits.session, now);
      if (!d.allowed) throw overLimit(d, `${describeRate(this.limits.session)} per session`);
      return d;
    }
    const keyKey = `api-key:${principal.keyId}`;
    const ahead = this.limiter.peek(keyKey, this.limits.apiKey, now);
    if (!ahead.allowed) throw overLimit(ahead, `${describeRate(this.limits.apiKey)} per API key`);
    const tenant = this.limiter.hit(`api-tenant:${principal.tenant.id}`, this.limits.tenantApiKeys, now);
    if (!tenant.allowed) throw overLimit(tenant, `${describeRate(this.limits.tenantApiKeys)} per tenant, across all its API keys`);
    return this.limiter.hit(keyKey, this.limits.apiKey, now);
  }

  session(req: Request): Promise<SessionPrincipal> {
    return this.require(req, ['session'], 'a user session token');
  }

  admin(req: Request): Promise<Extract<Principal, { kind: 'admin' }>> {
    // Nothing could ever pass: say what would, rather than that the credential is wrong.
    if (!this.adminToken)
      return Promise.reject(
        new HttpError('unauthorized', 'This server has no admin token: start it with SERVICE_ADMIN_TOKEN set to use the admin routes and /metrics.'),
      );
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
