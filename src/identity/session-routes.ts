import { HttpError } from '../http/errors.js';
import { clientAddressKey, overLimit } from '../http/ratelimit.js';
import { empty, json } from '../http/reply.js';
import { Fields, readJsonObject } from '../http/validate.js';
import { describeRate } from '../ratelimit/limiter.js';
import type { IdentityRouteContext } from './route-context.js';
import { hashToken, newToken, verifyPassword } from './tokens.js';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Login sessions: log in (rate-limited per address and per e-mail), log out, who am I. */
export function mountSessionRoutes(ctx: IdentityRouteContext): void {
  const { server, store, auth, now, hashes, tenantView } = ctx;
  const { limiter, limits } = auth;
  const anyone = server.scoped('public');
  const full = server.scoped('full');
  const loginSession = server.scoped('login');

  anyone.post(
    '/v1/auth/login',
    async (req) => {
      // Every attempt counts against the client's address, malformed ones included.
      const byAddress = limiter.hit(`login-address:${clientAddressKey(req.remoteAddress)}`, limits.loginAttemptsPerAddress, now());
      if (!byAddress.allowed) throw overLimit(byAddress, `${describeRate(limits.loginAttemptsPerAddress, 'login attempts')} per client address`);
      const f = new Fields(readJsonObject(req));
      f.onlyKnown(['email', 'password']);
      const email = f.string('email', { required: true, max: 254 });
      const password = f.string('password', { required: true, max: 1024 });
      f.done();
      // Only failures count against an e-mail; once it has too many, even the right password
      // waits out the window, and nothing is hashed meanwhile.
      const emailKey = `login-email:${email!.toLowerCase()}`;
      const failures = limiter.peek(emailKey, limits.loginFailuresPerEmail, now());
      if (!failures.allowed) throw overLimit(failures, `${describeRate(limits.loginFailuresPerEmail, 'failed logins')} per e-mail address`);
      const user = await store.findUserByEmail(email!);
      // Verify against a dummy hash when the user is unknown, so timing does not reveal which e-mails exist.
      const ok = await hashes.run(() => verifyPassword(password!, user?.passwordHash ?? DUMMY_HASH));
      if (!user || !ok) {
        limiter.hit(emailKey, limits.loginFailuresPerEmail, now());
        throw new HttpError('unauthorized', 'Wrong e-mail or password.');
      }
      const tenant = await store.getTenant(user.tenantId);
      if (!tenant) throw new HttpError('unauthorized', 'Wrong e-mail or password.');
      if (tenant.status === 'suspended') throw new HttpError('tenant_suspended', 'The tenant of this user is suspended.');
      const token = newToken('session');
      const expiresAt = now() + SESSION_TTL_MS;
      await store.createSession(hashToken(token), user.id, user.tenantId, expiresAt);
      return json(200, { token, expiresAt: new Date(expiresAt).toISOString() });
    },
    { credentials: 'public' },
  );

  loginSession.post(
    '/v1/auth/logout',
    async (req) => {
      const session = await auth.session(req);
      await store.deleteSession(session.tokenHash);
      return empty(204);
    },
    { body: 'none' },
  );

  full.get('/v1/auth/me', async (req) => {
    const session = await auth.session(req);
    return json(200, { userId: session.userId, tenant: await tenantView(session.tenant) });
  });
}
