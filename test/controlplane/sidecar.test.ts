import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { report, serverWithKey, signed } from './helpers.js';

test('§4.2 GET /v1/config: 200 with ETag "v{version}", then 304 with an empty body for that ETag', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const first = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('etag'), '"v1"');
    assert.match(first.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(first.body.version, 1);
    assert.deepEqual(Object.keys(first.body).sort(), ['flavor', 'game', 'policy', 'population', 'speech', 'version']);
    const again = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=1`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(again.headers.get('etag'), '"v1"');
    const stale = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=2`, { headers: { 'if-none-match': '"v0"' } });
    assert.equal(stale.status, 200);
    // A publish moves the ETag: the next pull with the old one gets the new bundle.
    const put = await s.call('PUT', `/v1/servers/${a.serverId}/config`, { token, body: { ...first.body, game: { name: 'Z', premise: 'p', goal: 'g' } } });
    assert.equal(put.status, 200);
    const moved = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=3`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(moved.status, 200);
    assert.equal(moved.headers.get('etag'), '"v2"');
    assert.equal(moved.body.game.name, 'Z');
  } finally {
    await s.stop();
  }
});

test("§4.2 unknown server and another tenant's server are 404 config_not_found; another server of the key's tenant is 403; missing server is 400", async () => {
  // Four reports in a row from one server: more than the default 2 a second.
  const s = await startTestServer({ limits: { telemetryReports: { limit: 100, windowMs: 1000 } } });
  try {
    const t1 = await tenantSession(s);
    const t2 = await tenantSession(s);
    const a = await serverWithKey(s, t1.token, 'a');
    const b = await serverWithKey(s, t1.token, 'b');
    const c = await serverWithKey(s, t2.token, 'c');
    const unknown = await signed(s, a.key, 'GET', '/v1/config?server=9999');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'config_not_found');
    assert.equal((await signed(s, a.key, 'GET', '/v1/config?server=abc')).body.error.code, 'config_not_found');
    const sibling = await signed(s, a.key, 'GET', `/v1/config?server=${b.serverId}`);
    assert.equal(sibling.status, 403);
    assert.equal(sibling.body.error.code, 'forbidden');
    const foreign = await signed(s, a.key, 'GET', `/v1/config?server=${c.serverId}`);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'config_not_found');
    for (const [id, status, code] of [
      [String(b.serverId), 403, 'forbidden'],
      [String(c.serverId), 404, 'config_not_found'],
      ['9999', 404, 'config_not_found'],
      ['abc', 404, 'config_not_found'],
    ] as const) {
      const r = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { serverId: id }) });
      assert.equal(r.status, status, `telemetry for server ${id}`);
      assert.equal(r.body.error.code, code);
    }
    const none = await signed(s, a.key, 'GET', '/v1/config');
    assert.equal(none.status, 400);
    assert.equal(none.body.error.code, 'bad_request');
  } finally {
    await s.stop();
  }
});

test('§5 signatures: wrong key, tampered body, path, query or signature, missing headers are 401', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const target = `/v1/config?server=${a.serverId}`;
    const cases = {
      'wrong key': await signed(s, a.key, 'GET', target, { signWith: 'bsk_not_the_key' }),
      'query tampered': await signed(s, a.key, 'GET', target, { tamper: (r) => void (r.target = `${target}&x=1`) }),
      'path tampered': await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId), signTarget: '/v1/telemetry/other' }),
      'signature altered': await signed(s, a.key, 'GET', target, {
        signTarget: target,
        tamper: (r) => void (r.headers['x-service-signature'] = r.headers['x-service-signature']!.replace(/^./, (c) => (c === '0' ? '1' : '0'))),
      }),
      'body tampered': await signed(s, a.key, 'POST', '/v1/telemetry', {
        body: report(a.serverId),
        tamper: (r) => void (r.body = r.body!.replace('"botCount":12', '"botCount":13')),
      }),
      'no signature': await signed(s, a.key, 'GET', target, { tamper: (r) => void delete r.headers['x-service-signature'] }),
      'no timestamp': await signed(s, a.key, 'GET', target, { tamper: (r) => void delete r.headers['x-service-timestamp'] }),
      'unknown key': await signed(s, 'bsk_unknown', 'GET', target),
      'no credential': await signed(s, a.key, 'GET', target, { tamper: (r) => void delete r.headers.authorization }),
    };
    for (const [name, r] of Object.entries(cases)) {
      assert.equal(r.status, 401, name);
      assert.equal(r.body.error.code, 'unauthorized', name);
    }
    const ok = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId) });
    assert.equal(ok.status, 202);
  } finally {
    await s.stop();
  }
});

test('§5.6 timestamp window: 300 s either way is accepted, 301 s old or ahead is 401 (injected clock)', async () => {
  let now = Date.parse('2026-06-01T00:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const target = `/v1/config?server=${a.serverId}`;
    assert.equal((await signed(s, a.key, 'GET', target, { at: now - 300_000 })).status, 200);
    assert.equal((await signed(s, a.key, 'GET', target, { at: now + 300_000 })).status, 200);
    assert.equal((await signed(s, a.key, 'GET', `${target}&n=w`, { at: now + 300_999 })).status, 200, 'the window is in whole seconds');
    const old = await signed(s, a.key, 'GET', target, { at: now - 301_000 });
    assert.equal(old.status, 401);
    assert.equal(old.body.error.code, 'unauthorized');
    assert.equal((await signed(s, a.key, 'GET', target, { at: now + 301_000 })).status, 401);
    // The same signed request becomes stale as the server's clock moves on.
    const at = now;
    assert.equal((await signed(s, a.key, 'GET', `${target}&n=1`, { at })).status, 200);
    now += 301_000;
    assert.equal((await signed(s, a.key, 'GET', `${target}&n=2`, { at })).status, 401);
  } finally {
    await s.stop();
  }
});

test('§5.6 replay: the same signature twice inside the window is 401', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    let captured: Record<string, string> = {};
    const first = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId), tamper: (r) => void (captured = { ...r.headers }) });
    assert.equal(first.status, 202);
    const replay = await fetch(`${s.url}/v1/telemetry`, { method: 'POST', headers: captured, body: JSON.stringify(report(a.serverId)) });
    assert.equal(replay.status, 401);
    assert.equal(((await replay.json()) as any).error.code, 'unauthorized');
    const pull = { at: Date.now() };
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`, pull)).status, 200);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}`, pull)).status, 401);
  } finally {
    await s.stop();
  }
});

test('§5.2 scope: a server key on a dashboard route is 403; a session on a sidecar route is 403', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    for (const path of ['/v1/servers', `/v1/servers/${a.serverId}/config`, `/v1/servers/${a.serverId}/overview`, '/v1/billing/plans', '/v1/auth/me']) {
      const r = await s.call('GET', path, { token: a.key });
      assert.equal(r.status, 403, path);
      assert.equal(r.body.error.code, 'forbidden', path);
    }
    const admin = await s.call('GET', '/v1/admin/tenants', { token: a.key });
    assert.equal(admin.status, 403);
    const bySession = await signed(s, token, 'GET', `/v1/config?server=${a.serverId}`);
    assert.equal(bySession.status, 403);
    assert.equal(bySession.body.error.code, 'forbidden');
    const byAdmin = await signed(s, ADMIN_TOKEN, 'GET', `/v1/config?server=${a.serverId}`);
    assert.equal(byAdmin.status, 403);
    // Every wrong kind is told what the route needs (the admin token was told "a user session").
    for (const r of [bySession, byAdmin]) assert.equal(r.body.error.message, 'This route needs a server key.');
  } finally {
    await s.stop();
  }
});

test('a revoked key is refused at once, even after its checks were cached', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const second = await s.call('POST', `/v1/servers/${a.serverId}/keys`, { token });
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=1`, { headers: { 'if-none-match': '"v1"' } })).status, 304);
    assert.equal((await s.call('DELETE', `/v1/servers/${a.serverId}/keys/${a.keyId}`, { token })).status, 204);
    const after = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=2`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'unauthorized');
    // A revoked key elsewhere is simply invalid (401), and the other key still works.
    assert.equal((await s.call('GET', '/v1/servers', { token: a.key })).status, 401);
    assert.equal((await signed(s, second.body.key, 'GET', `/v1/config?server=${a.serverId}`)).status, 200);
  } finally {
    await s.stop();
  }
});

test('suspension: the server keys of a suspended tenant answer 403 tenant_suspended at once; resume restores them', async () => {
  const s = await startTestServer();
  try {
    const { token, tenantId } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    let n = 0;
    const pull = () => signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=${++n}`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal((await pull()).status, 304);
    assert.equal((await s.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN })).status, 200);
    const refused = await pull();
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'tenant_suspended');
    const push = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId) });
    assert.equal(push.body.error.code, 'tenant_suspended');
    const dash = await s.call('GET', '/v1/servers', { token: a.key });
    assert.equal(dash.status, 403);
    assert.equal(dash.body.error.code, 'tenant_suspended');
    assert.equal((await s.call('POST', `/v1/admin/tenants/${tenantId}/resume`, { token: ADMIN_TOKEN })).status, 200);
    assert.equal((await pull()).status, 304);
  } finally {
    await s.stop();
  }
});

test('the 304 path reads no storage: once warm it is answered with the database closed', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=1`)).status, 200);
    s.db.close();
    for (let n = 2; n < 5; n++) {
      const r = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=${n}`, { headers: { 'if-none-match': '"v1"' } });
      assert.equal(r.status, 304);
    }
    const full = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=9`);
    assert.equal(full.status, 200, 'the 200 body comes from the in-memory head too');
    // Anything that needs storage now fails, which shows the database really was closed.
    assert.equal((await s.call('GET', '/v1/servers', { token })).status, 500);
  } finally {
    await s.stop();
  }
});

// The replay guard on GET /v1/config was bypassed by varying the unsigned If-None-Match.
test('issue 14: a signed pull replayed with another If-None-Match is still a replay; a new nonce is a new request', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const target = `/v1/config?server=${a.serverId}`;
    const at = Date.now();
    const first = await signed(s, a.key, 'GET', target, { at });
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    for (const inm of [etag, '"v999"', 'W/"x", *']) {
      const replayed = await signed(s, a.key, 'GET', target, { at, headers: { 'if-none-match': inm } });
      assert.equal(replayed.status, 401, inm);
      assert.match(JSON.parse(replayed.text).error.message, /replay/);
    }
    const again = await signed(s, a.key, 'GET', `${target}&nonce=2`, { at, headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
  } finally {
    await s.stop();
  }
});
