import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from './paths.js';

export const REPLICA_ADMIN = 'bsa_replica_test_admin';

export interface Replica {
  child: ChildProcess;
  pid: number;
  url: string;
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
}

/**
 * One real `brainstem serve` process on a shared database (`--database URL`), with extra
 * flags; resolves once it listens. Limits from `limits` go through a `--limits` file in `dir`.
 */
export async function startReplica(database: string, dir: string, flags: string[] = [], limits: Record<string, unknown> = {}): Promise<Replica> {
  const limitsFile = join(dir, `limits-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(limitsFile, JSON.stringify(limits));
  const child = spawn(process.execPath, [cli, 'serve', '--addr', '127.0.0.1:0', '--database', database, '--limits', limitsFile, ...flags], {
    env: { ...process.env, SERVICE_ADMIN_TOKEN: REPLICA_ADMIN, BRAINSTEM_LOG: process.env.REPLICA_LOG ?? 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited early (${code}): ${out}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    pid: child.pid!,
    url,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A JSON call against a replica; throws on a status of 300 or more. */
export async function call(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A tenant on `plan` with one user, logged in through `base`: the session token. */
export async function tenantSession(base: string, plan = 'enterprise'): Promise<{ token: string; tenantId: number }> {
  const tenant = await call(base, 'POST', '/v1/admin/tenants', REPLICA_ADMIN, { name: 'replicas', plan });
  const email = `r${tenant.id}@replicas.test`;
  await call(base, 'POST', `/v1/admin/tenants/${tenant.id}/users`, REPLICA_ADMIN, { email, password: 'long enough password' });
  const { token } = await call(base, 'POST', '/v1/auth/login', null, { email, password: 'long enough password' });
  return { token, tenantId: tenant.id };
}
