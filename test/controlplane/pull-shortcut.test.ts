import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { report, serverWithKey, signed } from './helpers.js';

// Once a key, its tenant and the server's head are cached, pulls are answered by a shortcut
// read straight off uWS (sidecar-routes.ts). It must answer exactly what the route would, and
// hand every other request to the route untouched: this runs each case with a warm key
// (suspension and revocation of a warm key are in sidecar.test.ts).

test('warm pulls: 200, 304, HEAD and a publish behave as on the route, and every refusal keeps its status and code', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    const target = (n: string) => `/v1/config?server=${a.serverId}&n=${n}`;
    const v1 = { 'if-none-match': '"v1"' };
    const warm = await signed(s, a.key, 'GET', target('warm'));
    assert.equal(warm.status, 200);

    const full = await signed(s, a.key, 'GET', target('full'));
    assert.equal(full.status, 200);
    assert.equal(full.headers.get('etag'), '"v1"');
    assert.equal(full.headers.get('cache-control'), 'no-cache');
    assert.deepEqual(full.body, warm.body);
    const notModified = await signed(s, a.key, 'GET', target('304'), { headers: v1 });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.get('etag'), '"v1"');
    assert.equal(notModified.text, '');
    for (const [i, validator] of ['W/"v1"', '"v0", "v1"', '*'].entries()) {
      assert.equal((await signed(s, a.key, 'GET', target(`list${i}`), { headers: { 'if-none-match': validator } })).status, 304, validator);
    }
    // The id percent-encoded is the same id, as the route reads it.
    const encoded = [...String(a.serverId)].map((d) => `%3${d}`).join('');
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${encoded}&n=enc`, { headers: v1 })).status, 304);
    const head = await signed(s, a.key, 'HEAD', target('head'), { headers: v1 });
    assert.equal(head.status, 304);

    const refusals: [string, Awaited<ReturnType<typeof signed>>, number, string][] = [
      ['another server of the tenant', await signed(s, a.key, 'GET', `/v1/config?server=${b.serverId}`), 403, 'forbidden'],
      ['an unknown server', await signed(s, a.key, 'GET', '/v1/config?server=99999'), 404, 'config_not_found'],
      ['no server parameter', await signed(s, a.key, 'GET', '/v1/config?n=1'), 400, 'bad_request'],
      ['the server id with a leading zero', await signed(s, a.key, 'GET', `/v1/config?server=0${a.serverId}`), 404, 'config_not_found'],
      ['the server id with a sign', await signed(s, a.key, 'GET', `/v1/config?server=%2B${a.serverId}`), 404, 'config_not_found'],
      ['the server parameter twice', await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&server=${a.serverId}`), 400, 'bad_request'],
      ['a stale timestamp', await signed(s, a.key, 'GET', target('stale'), { at: Date.now() - 301_000 }), 401, 'unauthorized'],
      [
        'a malformed timestamp',
        await signed(s, a.key, 'GET', target('ts'), { tamper: (r) => void (r.headers['x-service-timestamp'] = '17e8') }),
        401,
        'unauthorized',
      ],
      ['no signature', await signed(s, a.key, 'GET', target('nosig'), { tamper: (r) => void delete r.headers['x-service-signature'] }), 401, 'unauthorized'],
      ['a tampered query', await signed(s, a.key, 'GET', target('q'), { tamper: (r) => void (r.target += '&x=1') }), 401, 'unauthorized'],
      ['a trailing slash', await signed(s, a.key, 'GET', `/v1/config/?server=${a.serverId}`), 404, 'not_found'],
    ];
    for (const [name, r, status, code] of refusals) {
      assert.equal(r.status, status, name);
      assert.equal(r.body.error.code, code, name);
    }

    // A replay of a request the shortcut answered is refused by the route's own check.
    let captured: Record<string, string> = {};
    assert.equal((await signed(s, a.key, 'GET', target('replayed'), { headers: v1, tamper: (r) => void (captured = { ...r.headers }) })).status, 304);
    const replay = await fetch(`${s.url}${target('replayed')}`, { headers: captured });
    assert.equal(replay.status, 401);
    assert.equal(((await replay.json()) as { error: { code: string } }).error.code, 'unauthorized');

    const put = await s.call('PUT', `/v1/servers/${a.serverId}/config`, { token, body: { ...warm.body, game: { name: 'Z', premise: 'p', goal: 'g' } } });
    assert.equal(put.status, 200);
    const moved = await signed(s, a.key, 'GET', target('moved'), { headers: v1 });
    assert.equal(moved.status, 200);
    assert.equal(moved.headers.get('etag'), '"v2"');
    assert.equal(moved.body.game.name, 'Z');
  } finally {
    await s.stop();
  }
});

test('a warm key at its rate: the pull is 429 as on the route, its signature recorded as the route records it (the same request again is a replay)', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    for (let i = 0; i < 120; i++) assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=${i}`, { at: now })).status, 200);
    const over = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=over`, { at: now });
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, 'rate_limited');
    assert.equal(over.headers.get('retry-after'), '60');
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
    now += 60_000;
    const again = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=over`, { at: now - 60_000 });
    assert.equal(again.status, 401);
    assert.match(again.body.error.message, /replay/);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=fresh`, { at: now })).status, 200);
  } finally {
    await s.stop();
  }
});

test('the last key the shortcut resolved is remembered by its header: other keys, a look-alike header, a revocation and a suspension all answer as on the route', async () => {
  const s = await startTestServer();
  try {
    const { token, tenantId } = await tenantSession(s);
    const other = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    const c = await serverWithKey(s, other.token, 'c');
    const v1 = { 'if-none-match': '"v1"' };
    let n = 0;
    const pull = (k: typeof a, o: Parameters<typeof signed>[4] = {}) =>
      signed(s, k.key, 'GET', `/v1/config?server=${k.serverId}&n=${++n}`, { ...o, headers: { ...v1, ...o.headers } });
    // Warm all three, then alternate: each pull answers for its own key, whichever came last.
    for (const k of [a, b, c]) assert.equal((await pull(k)).status, 304);
    for (const k of [a, a, b, a, c, c, b]) assert.equal((await pull(k)).status, 304);
    // The remembered header with another key's signature, or another server's id, is refused as on the route.
    assert.equal((await pull(b)).status, 304);
    assert.equal((await pull(b, { signWith: a.key })).status, 401);
    const wrongServer = await signed(s, b.key, 'GET', `/v1/config?server=${a.serverId}&n=${++n}`, { headers: v1 });
    assert.equal(wrongServer.status, 403);
    // A header that only looks like the remembered one (another spelling of Bearer) goes the route's way.
    assert.equal((await pull(b, { headers: { authorization: `bearer ${b.key}` } })).status, 304);
    assert.equal((await pull(b, { headers: { authorization: `Bearer  ${b.key}` } })).status, 304);
    // Revoking the remembered key: its next pull is 401 at once; the others still work.
    // (a report goes through the same memo, before its body and at its signature check).
    assert.equal((await pull(a)).status, 304);
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId) })).status, 202);
    assert.equal((await s.call('DELETE', `/v1/servers/${a.serverId}/keys/${a.keyId}`, { token })).status, 204);
    const revoked = await pull(a);
    assert.equal(revoked.status, 401);
    assert.equal(revoked.body.error.code, 'unauthorized');
    const revokedPush = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: 'after' }) });
    assert.equal(revokedPush.status, 401);
    assert.equal(revokedPush.body.error.code, 'unauthorized');
    assert.equal((await pull(b)).status, 304);
    // Suspending the remembered key's tenant: 403 tenant_suspended at once; the other tenant's key still works.
    assert.equal((await s.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN })).status, 200);
    const suspended = await pull(b);
    assert.equal(suspended.status, 403);
    assert.equal(suspended.body.error.code, 'tenant_suspended');
    const suspendedPush = await signed(s, b.key, 'POST', '/v1/telemetry', { body: report(b.serverId) });
    assert.equal(suspendedPush.status, 403);
    assert.equal(suspendedPush.body.error.code, 'tenant_suspended');
    assert.equal((await pull(c)).status, 304);
    assert.equal((await s.call('POST', `/v1/admin/tenants/${tenantId}/resume`, { token: ADMIN_TOKEN })).status, 200);
    assert.equal((await pull(b)).status, 304);
  } finally {
    await s.stop();
  }
});
