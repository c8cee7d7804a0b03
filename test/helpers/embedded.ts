import { join } from 'node:path';
import { startEmbedded, type Embedded, type EmbeddedOptions } from '../../src/embedded/start.js';
import { tempDir } from './paths.js';

export const ADMIN_TOKEN = 'bsa_test_admin_token';

export interface TestServer extends Embedded {
  dir: string;
  /** fetch against the server with optional bearer token and JSON body. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

/** A real embedded server on port 0 over a SQLite file in a fresh temp dir (or on `options.database`). */
export async function startTestServer(options: Partial<EmbeddedOptions> = {}): Promise<TestServer> {
  const dir = tempDir();
  const server = await startEmbedded({ port: 0, db: join(dir.path, 'test.db'), adminToken: ADMIN_TOKEN, ...options }).catch((err: unknown) => {
    dir.dispose();
    throw err;
  });
  // Built on the server rather than spread from it: spreading would read its `db` getter, which throws on PostgreSQL.
  return Object.assign(Object.create(server) as Embedded, {
    dir: dir.path,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      }
      const res = await fetch(server.url + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async stop() {
      await server.close();
      dir.dispose();
    },
  } satisfies Omit<TestServer, keyof Embedded>);
}

/** Creates a tenant with a user and logs in; returns the tenant id and a session token. */
export async function tenantSession(
  s: TestServer,
  plan = 'agency',
  email = `u${Math.random().toString(36).slice(2)}@example.com`,
): Promise<{ tenantId: number; token: string; email: string }> {
  const tenant = await s.call('POST', '/v1/admin/tenants', { token: ADMIN_TOKEN, body: { name: `t-${email}`, plan } });
  if (tenant.status !== 201) throw new Error(`create tenant: ${tenant.status} ${JSON.stringify(tenant.body)}`);
  const user = await s.call('POST', `/v1/admin/tenants/${tenant.body.id}/users`, { token: ADMIN_TOKEN, body: { email, password: 'correct horse battery' } });
  if (user.status !== 201) throw new Error(`create user: ${user.status} ${JSON.stringify(user.body)}`);
  const login = await s.call('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  return { tenantId: tenant.body.id, token: login.body.token, email };
}
