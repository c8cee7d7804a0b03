import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { BURST_LIMITS, report, serverWithKey, signed, type Sidecar } from './helpers.js';
import type { TestServer } from '../helpers/embedded.js';

// Once a key and its tenant are cached, a report is taken by a body shortcut (sidecar-routes.ts,
// RouteOptions.bodyShortcut): no request object, its body handed over as a string when ASCII.
// It must answer exactly what the route answers, and leave every other request to the route:
// each case below is sent as a key's first request (the route: nothing is cached yet) and again
// with a warm key, and the two answers must be the same.

type Case = [name: string, send: (s: TestServer, k: Sidecar, n: string) => ReturnType<typeof signed>];

const push = (s: TestServer, k: Sidecar, body: unknown, o: Parameters<typeof signed>[4] = {}) => signed(s, k.key, 'POST', '/v1/telemetry', { body, ...o });

const CASES: Case[] = [
  ['a valid report', (s, k, n) => push(s, k, report(k.serverId, { reportId: `ok-${n}` }))],
  ['a report without reportId or events', (s, k) => push(s, k, report(k.serverId, { events: [] }))],
  [
    'a report with text that is not ASCII (the body as a Buffer)',
    (s, k, n) => push(s, k, report(k.serverId, { reportId: `é-${n}`, events: [{ kind: 'sprach→', count: 1 }] })),
  ],
  ['a report that fails validation', (s, k) => push(s, k, report(k.serverId, { botCount: -1, events: [{ kind: '', count: 1.5 }], extra: 1 }))],
  ['a body that is not JSON', (s, k) => push(s, k, '{"serverId":')],
  ['a JSON array', (s, k) => push(s, k, '[1,2]')],
  ['an empty body', (s, k) => push(s, k, '')],
  ['a poisoned key', (s, k) => push(s, k, '{"__proto__":{"x":1}}')],
  ['a body nested too deep', (s, k) => push(s, k, `${'['.repeat(40)}${']'.repeat(40)}`)],
  ['another server of the tenant', (s, k) => push(s, k, report(k.serverId + 1))],
  ['a server that does not exist', (s, k) => push(s, k, report(999_999))],
  [
    'a tampered body',
    (s, k, n) => push(s, k, report(k.serverId, { reportId: `t-${n}` }), { tamper: (r) => void (r.body = r.body!.replace('"botCount":12', '"botCount":13')) }),
  ],
  ['a signature by another key', (s, k, n) => push(s, k, report(k.serverId, { reportId: `o-${n}` }), { signWith: 'bsk_not_this_key' })],
  ['a stale timestamp', (s, k, n) => push(s, k, report(k.serverId, { reportId: `s-${n}` }), { at: Date.now() - 301_000 })],
  ['no signature', (s, k, n) => push(s, k, report(k.serverId, { reportId: `x-${n}` }), { tamper: (r) => void delete r.headers['x-service-signature'] })],
  ['text/plain', (s, k, n) => push(s, k, JSON.stringify(report(k.serverId, { reportId: `p-${n}` })), { headers: { 'content-type': 'text/plain' } })],
  [
    'JSON with a charset',
    (s, k, n) => push(s, k, report(k.serverId, { reportId: `c-${n}` }), { headers: { 'content-type': 'application/json; charset=utf-8' } }),
  ],
  ['a compressed body', (s, k, n) => push(s, k, report(k.serverId, { reportId: `z-${n}` }), { headers: { 'content-encoding': 'gzip' } })],
  ['a query string (signed with it)', (s, k, n) => signed(s, k.key, 'POST', `/v1/telemetry?n=${n}`, { body: report(k.serverId, { reportId: `q-${n}` }) })],
  [
    'a body over the limit',
    (s, k) => push(s, k, report(k.serverId, { roster: [{ agent: 1, name: 'x'.repeat(300 * 1024), alignment: 'a', goal: 'g', state: 's' }] })),
  ],
];

/** What must agree between the route and the shortcut: the status, the headers a client reads and the body. */
const answerOf = (r: Awaited<ReturnType<typeof signed>>) => ({
  status: r.status,
  type: r.headers.get('content-type'),
  nosniff: r.headers.get('x-content-type-options'),
  retry: r.headers.get('retry-after'),
  body: r.body,
});

test('warm reports answer exactly as the route does: stored, refused, malformed, another server, signatures, bodies that are not ASCII', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const warm = await serverWithKey(s, token, 'warm');
    await serverWithKey(s, token, 'neighbour');
    assert.equal((await push(s, warm, report(warm.serverId, { reportId: 'warm-up' }))).status, 202);
    for (const [i, [name, send]] of CASES.entries()) {
      // A key of its own per case: its first request is the route's (nothing of it cached yet).
      const keyed = await s.call('POST', `/v1/servers/${warm.serverId}/keys`, { token });
      assert.equal(keyed.status, 201, name);
      const cold = answerOf(await send(s, { ...warm, key: keyed.body.key }, `cold${i}`));
      const hot = answerOf(await send(s, warm, `warm${i}`));
      assert.deepEqual(hot, cold, name);
      const revoked = await s.call('DELETE', `/v1/servers/${warm.serverId}/keys/${keyed.body.id}`, { token });
      assert.ok(revoked.status < 300, name);
    }
    // Every stored report counted once: the warm-up and both answers of the five cases that store one.
    const usage = await s.call('GET', `/v1/servers/${warm.serverId}/usage`, { token });
    assert.equal(usage.body.linesSpoken, 11 * 40);
  } finally {
    await s.stop();
  }
});

test('a warm report: a replay is 401, a repeated reportId is accepted:false, and the report is stored once', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    assert.equal((await push(s, a, report(a.serverId, { reportId: 'first' }))).status, 202);
    let captured: { headers: Record<string, string>; body: string | undefined } = { headers: {}, body: undefined };
    const sent = await push(s, a, report(a.serverId, { reportId: 'r-1' }), { tamper: (r) => void (captured = { headers: { ...r.headers }, body: r.body }) });
    assert.equal(sent.status, 202);
    assert.deepEqual(sent.body, { accepted: true, received: 2 });
    const replay = await fetch(`${s.url}/v1/telemetry`, { method: 'POST', headers: captured.headers, body: captured.body });
    assert.equal(replay.status, 401);
    assert.match(((await replay.json()) as { error: { message: string } }).error.message, /replay/);
    const again = await push(s, a, report(a.serverId, { reportId: 'r-1', botCount: 99 }));
    assert.deepEqual(again.body, { accepted: false, received: 0 });
    const usage = await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token });
    assert.equal(usage.body.linesSpoken, 80);
  } finally {
    await s.stop();
  }
});

test('a warm key revoked or its tenant suspended: the next report is refused as on the route', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token, tenantId } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    for (const k of [a, b]) assert.equal((await push(s, k, report(k.serverId, { reportId: 'warm' }))).status, 202);
    assert.ok((await s.call('DELETE', `/v1/servers/${a.serverId}/keys/${a.keyId}`, { token })).status < 300);
    const revoked = await push(s, a, report(a.serverId, { reportId: 'after' }));
    assert.equal(revoked.status, 401);
    assert.equal(revoked.body.error.code, 'unauthorized');
    assert.equal((await s.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN })).status, 200);
    const suspended = await push(s, b, report(b.serverId, { reportId: 'after' }));
    assert.equal(suspended.status, 403);
    assert.equal(suspended.body.error.code, 'tenant_suspended');
  } finally {
    await s.stop();
  }
});
