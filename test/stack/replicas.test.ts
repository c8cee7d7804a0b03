import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { TestServer } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';
import { freshDatabase } from '../helpers/postgres.js';
import { report, signed } from '../controlplane/helpers.js';
import { ADMIN, call, spawnCli, stop, waitFor, type Child } from './helpers.js';

/**
 * Three `serve` replicas on one PostgreSQL database, as behind a load balancer: whatever one
 * replica is told, the others answer the same, at once.
 */
const SESSION_LIMIT = 30;

const dir = tempDir();
const replicas: (Child & { url: string })[] = [];
let url: string;

before(async () => {
  url = await freshDatabase();
  const limits = join(dir.path, 'limits.json');
  writeFileSync(limits, JSON.stringify({ session: SESSION_LIMIT }));
  // One after another: the first creates the schema, the others find it there.
  for (let i = 0; i < 3; i++) {
    const r = await spawnCli(
      ['serve', '--addr', '127.0.0.1:0', '--database', url, '--data', join(dir.path, 'data'), '--limits', limits],
      /listening on (http:\/\/\S+)/,
    );
    replicas.push({ ...r, url: r.match[1]! });
  }
});

after(async () => {
  for (const r of replicas) await stop(r.child);
  dir.dispose();
});

const at = (i: number) => ({ url: replicas[i]!.url }) as TestServer;

async function session(email: string): Promise<string> {
  const [a, b] = [replicas[0]!.url, replicas[1]!.url];
  const tenant = await call(a, 'POST', '/v1/admin/tenants', { token: ADMIN, body: { name: email, plan: 'pro' } });
  assert.equal(tenant.status, 201);
  assert.equal((await call(b, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, { token: ADMIN, body: { email, password: 'long enough' } })).status, 201);
  const login = await call(a, 'POST', '/v1/auth/login', { body: { email, password: 'long enough' } });
  assert.equal(login.status, 200);
  return login.body.token;
}

test('login on one replica, use the session on another, log out there: refused on the third', async () => {
  const token = await session('login@example.com');
  assert.equal((await call(replicas[1]!.url, 'GET', '/v1/auth/me', { token })).status, 200);
  assert.equal((await call(replicas[1]!.url, 'POST', '/v1/auth/logout', { token })).status, 204);
  assert.equal((await call(replicas[2]!.url, 'GET', '/v1/auth/me', { token })).status, 401);
  assert.equal((await call(replicas[0]!.url, 'GET', '/v1/auth/me', { token })).status, 401);
});

test('publish on one replica: a signed pull on another gets the new version at once; a 304 from the third', async () => {
  const token = await session('publish@example.com');
  const server = await call(replicas[0]!.url, 'POST', '/v1/servers', { token, body: { name: 'alpha' } });
  const key = (await call(replicas[0]!.url, 'POST', `/v1/servers/${server.body.id}/keys`, { token })).body.key as string;
  const pull = (i: number, n: number, etag?: string) =>
    signed(at(i), key, 'GET', `/v1/config?server=${server.body.id}&n=${n}`, etag ? { headers: { 'if-none-match': etag } } : {});
  // Every replica has version 1 in memory (the 304 path) before the publish.
  assert.equal((await pull(1, 1)).status, 200);
  assert.equal((await pull(1, 2, '"v1"')).status, 304);
  assert.equal((await pull(2, 3, '"v1"')).status, 304);

  const v1 = await call(replicas[0]!.url, 'GET', `/v1/servers/${server.body.id}/config`, { token });
  const put = await fetch(`${replicas[0]!.url}/v1/servers/${server.body.id}/config`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...v1.body, game: { name: 'Replicated', premise: 'p', goal: 'g' } }),
  });
  assert.equal(put.status, 200);

  // The other replicas hear of it through PostgreSQL's NOTIFY, delivered within milliseconds of
  // the commit; a heavily loaded machine may take a moment more, so the first pull may be early.
  let n = 100;
  const fresh = await waitFor('replica 1 to serve version 2', async () => {
    const r = await pull(1, n++, '"v1"');
    return r.status === 200 ? r : undefined;
  });
  assert.equal(fresh.headers.get('etag'), '"v2"');
  assert.equal(fresh.body.game.name, 'Replicated');
  await waitFor('replica 2 to answer 304 for version 2', async () => ((await pull(2, n++, '"v2"')).status === 304 ? true : undefined));
  assert.equal((await pull(2, n++, '"v1"')).headers.get('etag'), '"v2"');

  // A signature used on one replica is a replay on every other.
  const once = { at: Date.now() };
  const target = `/v1/config?server=${server.body.id}&n=7`;
  assert.equal((await signed(at(0), key, 'GET', target, once)).status, 200);
  const replay = await signed(at(2), key, 'GET', target, once);
  assert.equal(replay.status, 401);
  assert.match(replay.body.error.message, /replay/);

  // A key revoked on one replica is refused on another that had it cached.
  const keys = await call(replicas[0]!.url, 'GET', `/v1/servers/${server.body.id}/keys`, { token });
  assert.equal((await call(replicas[0]!.url, 'DELETE', `/v1/servers/${server.body.id}/keys/${keys.body[0].id}`, { token })).status, 204);
  await waitFor('replica 2 to refuse the revoked key', async () => ((await pull(2, n++, '"v2"')).status === 401 ? true : undefined));
});

test('a replay sent to two replicas at once is accepted by exactly one, on the cached pull path and on telemetry', async () => {
  const token = await session('race@example.com');
  const server = await call(replicas[0]!.url, 'POST', '/v1/servers', { token, body: { name: 'race' } });
  const key = (await call(replicas[0]!.url, 'POST', `/v1/servers/${server.body.id}/keys`, { token })).body.key as string;
  // Both replicas have the key, its tenant and the head in memory: the pull goes the shortcut's way.
  for (const i of [1, 2]) assert.equal((await signed(at(i), key, 'GET', `/v1/config?server=${server.body.id}&n=warm${i}`)).status, 200);
  for (let n = 0; n < 10; n++) {
    const once = { at: Date.now(), headers: { 'if-none-match': '"v1"' } };
    const target = `/v1/config?server=${server.body.id}&n=race${n}`;
    const answers = await Promise.all([signed(at(1), key, 'GET', target, once), signed(at(2), key, 'GET', target, once)]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [304, 401], `signature ${n}`);
    assert.match(answers.find((r) => r.status === 401)!.body.error.message, /replay/);
  }
  const once = { at: Date.now(), body: report(server.body.id, { reportId: 'race' }) };
  const pushes = await Promise.all([signed(at(1), key, 'POST', '/v1/telemetry', once), signed(at(2), key, 'POST', '/v1/telemetry', once)]);
  assert.deepEqual(pushes.map((r) => r.status).sort(), [202, 401]);
  const usage = await call(replicas[0]!.url, 'GET', `/v1/servers/${server.body.id}/usage`, { token });
  assert.equal(usage.body.linesSpoken, 40, 'the report is counted once');
});

test('a suspension on one replica reaches another that had the tenant cached', async () => {
  const token = await session('suspend@example.com');
  const me = await call(replicas[0]!.url, 'GET', '/v1/auth/me', { token });
  const server = await call(replicas[0]!.url, 'POST', '/v1/servers', { token, body: { name: 'beta' } });
  const key = (await call(replicas[0]!.url, 'POST', `/v1/servers/${server.body.id}/keys`, { token })).body.key as string;
  assert.equal((await signed(at(1), key, 'GET', `/v1/config?server=${server.body.id}&n=1`)).status, 200);
  assert.equal((await call(replicas[2]!.url, 'POST', `/v1/admin/tenants/${me.body.tenant.id}/suspend`, { token: ADMIN })).status, 200);
  let n = 2;
  const refused = await waitFor('replica 1 to refuse the suspended tenant', async () => {
    const r = await signed(at(1), key, 'GET', `/v1/config?server=${server.body.id}&n=${n++}`, { headers: { 'if-none-match': '"v1"' } });
    return r.status === 403 ? r : undefined;
  });
  assert.equal(refused.body.error.code, 'tenant_suspended');
});

test(`a rate limit counts across replicas: after ${SESSION_LIMIT} requests on one, another refuses the same session`, async () => {
  const token = await session('limits@example.com');
  for (let i = 0; i < SESSION_LIMIT - 1; i++) assert.equal((await call(replicas[0]!.url, 'GET', '/v1/auth/me', { token })).status, 200, `request ${i + 1}`);
  // Replica 1 has seen almost none of them itself; it refuses once it has read replica 0's count.
  let admittedOnOther = 0;
  const refusal = await waitFor('a 429 from another replica', async () => {
    const r = await call(replicas[1]!.url, 'GET', '/v1/auth/me', { token });
    if (r.status === 200) admittedOnOther++;
    return r.status === 429 ? r : undefined;
  });
  assert.equal(refusal.body.error.code, 'rate_limited');
  assert.ok(admittedOnOther < SESSION_LIMIT / 2, `replica 1 admitted ${admittedOnOther} on its own before it counted replica 0's`);
  await waitFor('a 429 from the third replica', async () =>
    (await call(replicas[2]!.url, 'GET', '/v1/auth/me', { token })).status === 429 ? true : undefined,
  );
});
