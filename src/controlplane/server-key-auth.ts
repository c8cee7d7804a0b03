import { LRUCache } from 'lru-cache';
import type { Request } from '../http/server.js';
import { HttpError } from '../http/errors.js';
import { overLimit } from '../http/ratelimit.js';
import { describeRate, type Rate, type RateLimiter } from '../ratelimit/limiter.js';
import { bearerToken, type Authenticator } from '../identity/auth.js';
import { TOKEN_PREFIX, hashToken } from '../identity/tokens.js';
import type { TenantId, TenantRecord, TenantStatus } from '../identity/types.js';
import { keyVerifier, type KeyVerifier } from '../signing/key-verifier.js';
import { SIGNATURE_HEADER, SIGNATURE_WINDOW_S, TIMESTAMP_HEADER } from '../signing/request.js';
import type { ControlPlaneStore } from './store.js';
import type { KeyOwner } from './types.js';
import { ReplayGuard, type ReplayLedger } from './replay.js';

/** How the control plane reads tenants (the identity store satisfies it). */
export interface TenantLookup {
  getTenant(id: TenantId): Promise<TenantRecord | null>;
}

/** A live key as the hot path holds it: resolved, with its verifier (the HMAC pads) ready. */
export interface CachedKey {
  readonly owner: KeyOwner;
  /** The token's hash (what the store and revocation know it by). */
  readonly hash: string;
  readonly verify: KeyVerifier;
  /** The key's rate-limit key (see limitKey), built once rather than per request. */
  readonly limit: string;
  /**
   * The key's server id as a query names it (decimal, no leading zero): a `server` parameter
   * names the key's own server exactly when it is this text, compared without parsing it.
   */
  readonly server: string;
}

/**
 * A signed request found authentic and new to this replica, its shared replay record not yet
 * written (ServerKeyAuth.deferred): the route writes that record in the statement that stores
 * what the request carries, or hands the request to `shared` to go the usual way.
 */
export interface DeferredRequest {
  readonly owner: KeyOwner;
  readonly status: TenantStatus;
  /** The key's rate-limit key. */
  readonly limit: string;
  /** The check's read of the clock: the key's rate counts the request at this time. */
  readonly now: number;
  /** The unix second the request was signed for, and its signature's slot: its replay record. */
  readonly ts: number;
  readonly slot: number;
}

export interface ServerKeyAuthOptions {
  now: () => number;
  /** Every authentic request is counted per key against `rate`; past it, 429. */
  limiter: RateLimiter;
  rate: Rate;
  /** Signatures remembered for replay detection (default 1,000,000). */
  replayEntries?: number;
  /** Live keys kept resolved in memory (default 10,000). */
  keyEntries?: number;
  /**
   * Signatures shared with the other replicas on the database. With one, every signed request
   * also waits for its signature to be recorded there (the pull shortcut then answers once
   * the record is confirmed).
   */
  ledger?: ReplayLedger;
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
   * The hot path's view: the presented token itself to its owner and verifier, so a cached key
   * costs neither a SHA-256 of the token nor HMAC key set-up. Entries are dropped with the
   * hash entry they came from (revocation).
   */
  private readonly tokens = new Map<string, CachedKey>();
  private readonly maxTokens: number;
  private readonly tokenOfHash = new Map<string, string>();
  /** The Authorization header `resolved` last resolved and its key; cleared whenever a token entry goes. */
  private lastHeader = '';
  private lastKey: CachedKey | undefined;
  /** Counts revocations, so a lookup that raced one does not cache what it read before it. */
  private revocations = 0;
  /** Likewise for tenant status changes. */
  private tenantChanges = 0;
  private readonly tenantStatus = new Map<TenantId, TenantStatus>();
  private readonly seen: ReplayGuard;
  private readonly now: () => number;
  private readonly windowS: number;
  private readonly limiter: RateLimiter;
  private readonly rate: Rate;
  private readonly ledger: ReplayLedger | undefined;

  constructor(
    private readonly store: ControlPlaneStore,
    private readonly tenants: TenantLookup,
    private readonly auth: Authenticator,
    options: ServerKeyAuthOptions,
  ) {
    this.now = options.now;
    this.limiter = options.limiter;
    this.rate = options.rate;
    this.windowS = options.windowS ?? SIGNATURE_WINDOW_S;
    this.keys = new LRUCache({ max: options.keyEntries ?? 10_000 });
    this.maxTokens = options.keyEntries ?? 10_000;
    this.seen = new ReplayGuard(this.windowS, options.replayEntries ?? 1_000_000);
    this.ledger = options.ledger;
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
    this.forgetLast();
  }

  tenantChanged(id: TenantId): void {
    this.tenantChanges++;
    this.tenantStatus.delete(id);
  }

  /** Drops every resolved key and tenant status (changes made elsewhere may have been missed); the next request of each reads the store. */
  forgetAll(): void {
    this.revocations++;
    this.tenantChanges++;
    this.keys.clear();
    this.tokens.clear();
    this.tokenOfHash.clear();
    this.tenantStatus.clear();
    this.forgetLast();
  }

  private forgetLast(): void {
    this.lastHeader = '';
    this.lastKey = undefined;
  }

  /**
   * The key's owner when the request is authentic; synchronous when the key and its tenant
   * are cached (the hot path), a promise otherwise. Throws 401/403 HttpErrors.
   */
  check(req: Request): KeyOwner | Promise<KeyOwner> {
    const header = req.headers.authorization;
    const known = header === undefined ? undefined : this.resolved(header);
    if (known !== undefined) {
      const status = this.tenantStatus.get(known.owner.tenantId);
      if (status) return this.finish(req, known.verify, known.owner, status, known.limit);
    }
    const token = header !== undefined ? plainBearer(header) : undefined;
    if (token === undefined) return this.checkToken(req, bearerToken(req));
    return this.slow(req, token);
  }

  /**
   * What can be told of a signed request before its body is read (the signature covers the
   * body, so it is checked after): a server key in Authorization that this server knows,
   * both signing headers present and the timestamp inside the window. Throws (or rejects with)
   * the 401 `check` would give; another kind of credential is left to the authenticator's
   * check (the handler answers it 403). Records nothing: the replay record and the rate are `check`'s.
   */
  beforeBody(req: Request): void | Promise<void> {
    // A key already resolved is read as `check` reads it, without the general parser (its
    // tokens carry no white space, so the parser would read the same token).
    const header = req.headers.authorization;
    const known = header !== undefined && this.resolved(header) !== undefined;
    const token = known ? '' : bearerToken(req);
    if (!known) {
      if (!token) throw new HttpError('unauthorized', 'Missing Authorization: Bearer server key.');
      if (!token.startsWith(TOKEN_PREFIX.serverKey)) return this.auth.beforeBody(req);
    }
    const timestamp = req.headers[TIMESTAMP_HEADER];
    if (!timestamp || !req.headers[SIGNATURE_HEADER]) throw new HttpError('unauthorized', REASONS[MISSING_HEADERS]);
    const seconds = unixSeconds(timestamp);
    if (seconds < 0) throw new HttpError('unauthorized', REASONS[BAD_TIMESTAMP]);
    if (Math.abs(Math.floor(this.now() / 1000) - seconds) > this.windowS) throw new HttpError('unauthorized', REASONS[STALE_TIMESTAMP]);
    if (known || this.tokens.has(token!)) return;
    return this.lookup(hashToken(token!)).then((owner) => {
      if (!owner) throw new HttpError('unauthorized', 'The server key is invalid or revoked.');
    });
  }

  /**
   * A body shortcut's stand-in for `beforeBody`: true when `beforeBody` would pass the request
   * on these headers without a look-up (a key this server holds resolved, both signing headers,
   * a timestamp inside the window). False changes nothing; `beforeBody` then gives the answer.
   */
  readyForBody(authorization: string | undefined, timestamp: string | undefined, signature: string | undefined): boolean {
    if (authorization === undefined || !timestamp || !signature || this.resolved(authorization) === undefined) return false;
    const seconds = unixSeconds(timestamp);
    return seconds >= 0 && Math.abs(Math.floor(this.now() / 1000) - seconds) <= this.windowS;
  }

  /**
   * `check` of a request a body shortcut read (the method, target and body as the route would
   * see them): the same outcome, answered or thrown, whenever the key and its tenant are still
   * held; undefined, having recorded nothing, when `check` must look something up (the route
   * then runs `check` itself). The body is read before this returns, never after (a body
   * shortcut hands over bytes that are gone then).
   */
  checkRead(
    authorization: string,
    method: string,
    target: string,
    body: Uint8Array | string,
    timestamp: string | undefined,
    signature: string | undefined,
  ): KeyOwner | Promise<KeyOwner> | undefined {
    const known = this.resolved(authorization);
    if (known === undefined) return undefined;
    const status = this.tenantStatus.get(known.owner.tenantId);
    if (!status) return undefined;
    return this.finishWith(known.verify, known.owner, status, known.limit, method, target, body, timestamp, signature);
  }

  /**
   * The first half of a shortcut for a signed route read straight off uWS: the cached key an
   * Authorization header presents when its tenant is known to be active; undefined whenever
   * `check` must decide (unknown or malformed key, tenant not cached or suspended). Changes
   * nothing.
   */
  cached(authorization: string): CachedKey | undefined {
    const known = this.resolved(authorization);
    // The tenant's status is read every time: a suspension drops it, and the next pull must see that.
    return known !== undefined && this.tenantStatus.get(known.owner.tenantId) === 'active' ? known : undefined;
  }

  /**
   * The resolved key a plain `Bearer bsk_…` header presents, or undefined. The last header
   * resolved is compared whole first: a sidecar fleet's requests come from few keys, and the
   * comparison costs less than cutting the token out and hashing it for the map.
   */
  private resolved(authorization: string): CachedKey | undefined {
    if (authorization === this.lastHeader && this.lastKey !== undefined) return this.lastKey;
    const token = plainBearer(authorization);
    const known = token === undefined ? undefined : this.tokens.get(token);
    if (known !== undefined) {
      this.lastHeader = authorization;
      this.lastKey = known;
    }
    return known;
  }

  /**
   * The second half: true when the request is authentic under `key` and its signature was
   * recorded against replay, exactly when `check` would return the owner; a key at its rate
   * throws the 429 `check` would throw, having recorded what `check` records (the signature,
   * not the request). False, having recorded nothing, in every other case; `check` then gives
   * the precise error. `now` is the caller's read of this authenticator's clock. Without a
   * shared ledger only (see `acceptShared`).
   */
  accept(key: CachedKey, method: string, target: string, timestamp: string, signature: string, now: number = this.now()): boolean {
    const slot = this.authentic(key.verify, method, target, undefined, timestamp, signature, now);
    if (slot < 0) return false;
    if (!this.seen.remember(unixSeconds(timestamp), slot, Math.floor(now / 1000))) return false;
    this.admit(key.owner, 'active', now, key.limit);
    return true;
  }

  /**
   * `accept` with a shared ledger: false, having recorded and counted nothing, whenever `check`
   * must decide (so also for a key at its rate: nothing may be recorded on the other replicas'
   * ledger before `check` answers the 429). Otherwise the request is counted against its key's
   * rate now, its signature goes to the shared record, and the promise settles with `then()`
   * run the moment the ledger confirms the signature new on every replica, or rejects with the
   * 401 `check` gives a replay (the count taken back), or with the ledger's failure (likewise).
   * Counting before the record rather than peeking before it and counting after costs the
   * limiter one call instead of two; a request that turns out a replay holds a unit of its key's
   * rate for the round trip only.
   */
  acceptShared<T>(
    key: CachedKey,
    method: string,
    target: string,
    timestamp: string,
    signature: string,
    now: number,
    then: () => T | PromiseLike<T>,
  ): Promise<T> | false {
    const slot = this.authentic(key.verify, method, target, undefined, timestamp, signature, now);
    if (slot < 0) return false;
    const limit = key.limit;
    if (!this.limiter.hit(limit, this.rate, now).allowed) return false;
    const seconds = unixSeconds(timestamp);
    if (!this.seen.remember(seconds, slot, Math.floor(now / 1000))) {
      this.limiter.release(limit, now);
      return false;
    }
    return this.ledger!.record(
      seconds,
      slot,
      (fresh) => {
        if (!fresh) this.replayedAt(limit, now);
        return then();
      },
      () => this.limiter.release(limit, now),
    );
  }

  private checkToken(req: Request, token: string | null): Promise<KeyOwner> {
    if (!token) throw new HttpError('unauthorized', 'Missing Authorization: Bearer server key.');
    if (!token.startsWith(TOKEN_PREFIX.serverKey)) return this.wrongKind(req);
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
      known = { owner, hash, verify: keyVerifier(token), limit: limitKey(owner), server: String(owner.serverId) };
      // A plain Map (cheaper per lookup than an LRU); past its bound the oldest entry goes.
      if (this.tokens.size >= this.maxTokens) {
        const [oldest, entry] = this.tokens.entries().next().value as [string, { hash: string }];
        this.tokens.delete(oldest);
        this.tokenOfHash.delete(entry.hash);
        this.forgetLast();
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
    return this.finish(req, known?.verify ?? keyVerifier(token), owner, status);
  }

  private async lookup(hash: string): Promise<KeyOwner | null> {
    const cached = this.keys.get(hash);
    if (cached) return cached;
    const before = this.revocations;
    const owner = await this.store.findServerKey(hash);
    if (owner && before === this.revocations) this.keys.set(hash, owner);
    return owner;
  }

  private finish(req: Request, verify: KeyVerifier, owner: KeyOwner, status: TenantStatus, limit?: string): KeyOwner | Promise<KeyOwner> {
    return this.finishWith(verify, owner, status, limit, req.method, req.target, req.body, req.headers[TIMESTAMP_HEADER], req.headers[SIGNATURE_HEADER]);
  }

  private finishWith(
    verify: KeyVerifier,
    owner: KeyOwner,
    status: TenantStatus,
    limit: string | undefined,
    method: string,
    target: string,
    body: Uint8Array | string,
    timestamp: string | undefined,
    signature: string | undefined,
  ): KeyOwner | Promise<KeyOwner> {
    const now = this.now();
    const slot = this.freshSlot(verify, method, target, body, timestamp, signature, now);
    if (this.ledger) return this.ledger.record(unixSeconds(timestamp!), slot, (fresh) => this.admitFresh(fresh, owner, status, now, limit));
    return this.admit(owner, status, now, limit);
  }

  /** The signature's replay slot once it is authentic and new to this replica (then remembered); throws the 401 otherwise. */
  private freshSlot(
    verify: KeyVerifier,
    method: string,
    target: string,
    body: Uint8Array | string,
    timestamp: string | undefined,
    signature: string | undefined,
    now: number,
  ): number {
    const slot = this.authentic(verify, method, target, body, timestamp, signature, now);
    if (slot < 0) throw new HttpError('unauthorized', REASONS[slot]);
    // The replay record is the signature alone: a header the signature does not cover (such
    // as If-None-Match) never makes a second use of it look new. Clients that repeat a
    // request within a second vary what is signed (the sidecar adds a random nonce).
    if (!this.seen.remember(unixSeconds(timestamp!), slot, Math.floor(now / 1000))) throw replayed();
    return slot;
  }

  /** Whether `deferred` is open: a shared ledger is there to defer (several replicas on one database). */
  get defers(): boolean {
    return this.ledger !== undefined;
  }

  /**
   * `checkRead` up to the shared replay record, for a route that writes that record itself in
   * the statement storing the request's content (one round trip instead of two), given the key
   * `cached` returned for the request's Authorization (its tenant active): the same checks in
   * the same order, the same 401 thrown; an authentic request new to this replica is remembered
   * here and returned with its replay record unwritten and nothing counted. The route then
   * either writes the record (having counted the request with `admitNow`, and answering a
   * replay with `replayed`), or calls `shared`, which finishes exactly as `checkRead` would
   * have. Only with a shared ledger (`defers`).
   */
  deferred(
    key: CachedKey,
    method: string,
    target: string,
    body: Uint8Array | string,
    timestamp: string | undefined,
    signature: string | undefined,
  ): DeferredRequest {
    const now = this.now();
    const slot = this.freshSlot(key.verify, method, target, body, timestamp, signature, now);
    // The record is written by another statement: the ledger still prunes it on its schedule.
    this.ledger!.written(now);
    return { owner: key.owner, status: 'active', limit: key.limit, now, ts: unixSeconds(timestamp!), slot };
  }

  /** The rest of `checkRead` for a deferred request: its shared replay record, then the tenant's status and the key's rate. */
  shared(d: DeferredRequest): Promise<KeyOwner> {
    return this.ledger!.record(d.ts, d.slot, (fresh) => this.admitFresh(fresh, d.owner, d.status, d.now, d.limit));
  }

  /**
   * Counts a deferred request against its key's rate ahead of its replay record, when that can
   * change no answer: its tenant active and its key under the rate (true, counted). False,
   * counting nothing, otherwise: the request must go `shared`'s way, which answers a replay
   * before a suspension or a 429.
   */
  admitNow(d: DeferredRequest): boolean {
    return d.status === 'active' && this.limiter.hit(d.limit, this.rate, d.now).allowed;
  }

  /** A deferred request counted by `admitNow` turned out a replay: the count is taken back, and the 401 `check` gives a replay is thrown. */
  replayed(d: DeferredRequest): never {
    return this.replayedAt(d.limit, d.now);
  }

  /** A request counted under `limit` at `now` turned out a replay: the count is taken back, and the 401 is thrown. */
  private replayedAt(limit: string, now: number): never {
    this.limiter.release(limit, now);
    throw replayed();
  }

  /** Takes back the count of `admitNow` (the request goes `shared`'s way after all). */
  uncount(d: DeferredRequest): void {
    this.limiter.release(d.limit, d.now);
  }

  /** `admit` once the shared ledger has answered whether the signature is new. */
  private admitFresh(fresh: boolean, owner: KeyOwner, status: TenantStatus, now: number, limit?: string): KeyOwner {
    if (!fresh) throw replayed();
    return this.admit(owner, status, now, limit);
  }

  /** The last checks of an authentic, fresh request: the tenant's status and the key's rate. */
  private admit(owner: KeyOwner, status: TenantStatus, now: number, limit: string = limitKey(owner)): KeyOwner {
    if (status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this server key is suspended.');
    const d = this.limiter.hit(limit, this.rate, now);
    if (!d.allowed) throw overLimit(d, `${describeRate(this.rate)} per server key`);
    return owner;
  }

  /**
   * The timestamp and signature checks of verifyRequest (same order, same outcomes) with a
   * key's verifier: the signature's replay slot (≥ 0), or a negative reason code. A number
   * rather than a result object because it runs on every signed request.
   */
  private authentic(
    verify: KeyVerifier,
    method: string,
    target: string,
    body: Uint8Array | string | undefined,
    timestamp: string | undefined,
    signature: string | undefined,
    now: number,
  ): number {
    if (!timestamp || !signature) return MISSING_HEADERS;
    const seconds = unixSeconds(timestamp);
    if (seconds < 0) return BAD_TIMESTAMP;
    if (Math.abs(Math.floor(now / 1000) - seconds) > this.windowS) return STALE_TIMESTAMP;
    let slot = verify(method, target, seconds, body, signature);
    // As verifyRequest: a signature over the path without its query is accepted too. Tried only
    // after a miss, so the signature over the whole target costs what it did.
    const query = slot < 0 ? target.indexOf('?') : -1;
    if (query >= 0) slot = verify(method, target.slice(0, query), seconds, body, signature);
    return slot < 0 ? BAD_SIGNATURE : slot;
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

const limitKey = (owner: KeyOwner): string => `server-key:${owner.keyId}`;
const replayed = (): HttpError => new HttpError('unauthorized', 'This signature was already used (replay).');

const MISSING_HEADERS = -1;
const BAD_TIMESTAMP = -2;
const STALE_TIMESTAMP = -3;
const BAD_SIGNATURE = -4;

const REASONS: Record<number, string> = {
  [MISSING_HEADERS]: 'Signed requests need X-Service-Timestamp and X-Service-Signature.',
  [BAD_TIMESTAMP]: 'X-Service-Timestamp must be unix seconds.',
  [STALE_TIMESTAMP]: 'X-Service-Timestamp is outside the 300 second window.',
  [BAD_SIGNATURE]: 'X-Service-Signature does not match the request.',
};

/** The token of `Bearer bsk_…` (the form sidecars send), parsed without a regular expression; undefined for any other form. */
function plainBearer(header: string): string | undefined {
  return header.startsWith('Bearer bsk_') && header.indexOf(' ', 7) < 0 ? header.slice(7) : undefined;
}

/** A timestamp header's unix seconds (1 to 12 digits, as verifyRequest accepts), or -1. */
function unixSeconds(value: string): number {
  if (value.length > 12) return -1;
  let seconds = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    seconds = seconds * 10 + digit;
  }
  return seconds;
}
