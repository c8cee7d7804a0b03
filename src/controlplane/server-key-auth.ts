import { LRUCache } from 'lru-cache';
import type { Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { bearerToken, type Authenticator } from '../identity/auth.js';
import { TOKEN_PREFIX, hashToken } from '../identity/tokens.js';
import type { TenantId, TenantRecord, TenantStatus } from '../identity/types.js';
import { SIGNATURE_HEADER, SIGNATURE_WINDOW_S, TIMESTAMP_HEADER, keySigner, verifyRequest, type SignedParts } from '../signing/request.js';
import type { ControlPlaneStore } from './store.js';
import type { KeyOwner } from './types.js';
import { ReplayGuard } from './replay.js';

/** How the control plane reads tenants (the identity store satisfies it). */
export interface TenantLookup {
  getTenant(id: TenantId): Promise<TenantRecord | null>;
}

export interface ServerKeyAuthOptions {
  now: () => number;
  /** Signatures remembered for replay detection (default 1,000,000). */
  replayEntries?: number;
  /** Live keys kept resolved in memory (default 10,000). */
  keyEntries?: number;
  windowS?: number;
}

/**
 * Authenticates signed sidecar requests (spec 001 §5) with no storage read once a key has been
 * seen: keys and tenant status are cached in memory and dropped the moment a key is revoked
 * or a tenant changes, so revocation and suspension take effect on the next request.
 */
export class ServerKeyAuth {
  /** Live keys by token hash (what the store knows). */
  private readonly keys: LRUCache<string, KeyOwner>;
  /**
   * The hot path's view: the presented token itself to its owner and signer, so a cached key
   * costs neither a SHA-256 of the token nor HMAC key set-up. Entries are dropped with the
   * hash entry they came from (revocation).
   */
  private readonly tokens = new Map<string, { owner: KeyOwner; hash: string; sign: (parts: SignedParts) => string }>();
  private readonly maxTokens: number;
  private readonly tokenOfHash = new Map<string, string>();
  /** Counts revocations, so a lookup that raced one does not cache what it read before it. */
  private revocations = 0;
  /** Likewise for tenant status changes. */
  private tenantChanges = 0;
  private readonly tenantStatus = new Map<TenantId, TenantStatus>();
  private readonly seen: ReplayGuard;
  private readonly now: () => number;
  private readonly windowS: number;

  constructor(
    private readonly store: ControlPlaneStore,
    private readonly tenants: TenantLookup,
    private readonly auth: Authenticator,
    options: ServerKeyAuthOptions,
  ) {
    this.now = options.now;
    this.windowS = options.windowS ?? SIGNATURE_WINDOW_S;
    this.keys = new LRUCache({ max: options.keyEntries ?? 10_000 });
    this.maxTokens = options.keyEntries ?? 10_000;
    this.seen = new ReplayGuard(this.windowS, options.replayEntries ?? 1_000_000);
  }

  /** For `auth.addProbe`: a live server key anywhere else is a 403 (or tenant_suspended). */
  readonly probe = async (token: string): Promise<{ tenant: TenantRecord } | null> => {
    if (!token.startsWith(TOKEN_PREFIX.serverKey)) return null;
    const owner = await this.lookup(hashToken(token));
    if (!owner) return null;
    const tenant = await this.tenants.getTenant(owner.tenantId);
    return tenant ? { tenant } : null;
  };

  keyRevoked(tokenHash: string): void {
    this.revocations++;
    this.keys.delete(tokenHash);
    const token = this.tokenOfHash.get(tokenHash);
    if (token !== undefined) this.tokens.delete(token);
    this.tokenOfHash.delete(tokenHash);
  }

  tenantChanged(id: TenantId): void {
    this.tenantChanges++;
    this.tenantStatus.delete(id);
  }

  /**
   * The key's owner when the request is authentic; synchronous when the key and its tenant
   * are cached (the hot path), a promise otherwise. Throws 401/403 HttpErrors.
   */
  check(req: Request): KeyOwner | Promise<KeyOwner> {
    const header = req.headers.authorization;
    // The common form is parsed without a regular expression; anything else goes the long way.
    const token = header !== undefined && header.startsWith('Bearer bsk_') && header.indexOf(' ', 7) < 0 ? header.slice(7) : bearerToken(req);
    if (!token) throw new HttpError('unauthorized', 'Missing Authorization: Bearer server key.');
    if (!token.startsWith(TOKEN_PREFIX.serverKey)) return this.wrongKind(req);
    const known = this.tokens.get(token);
    if (known) {
      const status = this.tenantStatus.get(known.owner.tenantId);
      if (status) return this.finish(req, known.sign, known.owner, status);
    }
    return this.slow(req, token);
  }

  private async slow(req: Request, token: string): Promise<KeyOwner> {
    const hash = hashToken(token);
    const owner = await this.lookup(hash);
    if (!owner) throw new HttpError('unauthorized', 'The server key is invalid or revoked.');
    // Only a key that still resolves after the await is remembered, so a revocation that
    // landed meanwhile is not undone.
    let known = this.tokens.get(token);
    if (!known && this.keys.get(hash)) {
      known = { owner, hash, sign: keySigner(token) };
      // A plain Map (cheaper per lookup than an LRU); past its bound the oldest entry goes.
      if (this.tokens.size >= this.maxTokens) {
        const [oldest, entry] = this.tokens.entries().next().value as [string, { hash: string }];
        this.tokens.delete(oldest);
        this.tokenOfHash.delete(entry.hash);
      }
      this.tokens.set(token, known);
      this.tokenOfHash.set(hash, token);
    }
    let status = this.tenantStatus.get(owner.tenantId);
    if (!status) {
      const before = this.tenantChanges;
      const tenant = await this.tenants.getTenant(owner.tenantId);
      if (!tenant) throw new HttpError('unauthorized', 'The server key is invalid or revoked.');
      status = tenant.status;
      if (before === this.tenantChanges) this.tenantStatus.set(owner.tenantId, status);
    }
    return this.finish(req, known?.sign ?? keySigner(token), owner, status);
  }

  private async lookup(hash: string): Promise<KeyOwner | null> {
    const cached = this.keys.get(hash);
    if (cached) return cached;
    const before = this.revocations;
    const owner = await this.store.findServerKey(hash);
    if (owner && before === this.revocations) this.keys.set(hash, owner);
    return owner;
  }

  private finish(req: Request, sign: (parts: SignedParts) => string, owner: KeyOwner, status: TenantStatus): KeyOwner {
    const now = this.now();
    const result = verifyRequest(
      sign,
      { method: req.method, target: req.target, body: req.body, timestamp: req.headers[TIMESTAMP_HEADER], signature: req.headers[SIGNATURE_HEADER] },
      now,
      this.windowS,
    );
    if (!result.ok) throw new HttpError('unauthorized', REASONS[result.reason]);
    // A conditional pull is a different request from the plain pull it follows, though both
    // carry the same signature when sent within one second: the If-None-Match value is part
    // of what a replay must repeat, so a sidecar's 200-then-304 is never taken for a replay.
    const slot = mixValidator(parseInt(req.headers[SIGNATURE_HEADER]!.slice(0, 13), 16), req.headers['if-none-match']);
    if (!this.seen.remember(result.timestamp, slot, Math.floor(now / 1000))) throw new HttpError('unauthorized', 'This signature was already used (replay).');
    if (status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this server key is suspended.');
    return owner;
  }

  /** Another credential kind on a sidecar route: 401 when it is not valid, else 403. */
  private async wrongKind(req: Request): Promise<never> {
    try {
      await this.auth.session(req);
    } catch (err) {
      // A valid credential of another kind (the admin token, an API key) is told what this
      // route needs, not what the session check wanted.
      if (!(err instanceof HttpError) || err.code !== 'forbidden') throw err;
    }
    throw new HttpError('forbidden', 'This route needs a server key.');
  }
}

const REASONS = {
  missing_headers: 'Signed requests need X-Service-Timestamp and X-Service-Signature.',
  bad_timestamp: 'X-Service-Timestamp must be unix seconds.',
  stale_timestamp: 'X-Service-Timestamp is outside the 300 second window.',
  bad_signature: 'X-Service-Signature does not match the request.',
} as const;

/** Folds an If-None-Match value into a 52-bit replay slot (FNV-1a of the value). */
function mixValidator(slot: number, validator: string | undefined): number {
  if (!validator) return slot;
  let h = 0x811c9dc5;
  for (let i = 0; i < validator.length; i++) h = Math.imul(h ^ validator.charCodeAt(i), 0x01000193) >>> 0;
  return (slot + (h + 1) * 4096) % 2 ** 52;
}
