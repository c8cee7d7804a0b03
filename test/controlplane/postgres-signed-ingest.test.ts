import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { PgReplayLedger } from '../../src/controlplane/postgres-replay.js';
import type { SignedRecord, TelemetryRecord, TelemetryReport } from '../../src/controlplane/types.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import { MemoryRateLimiter } from '../../src/ratelimit/limiter.js';
import { PgRateLimiter } from '../../src/store/pg-rate-limiter.js';
import { postgresTestDatabase } from '../helpers/databases.js';
import { startTestServer, tenantSession, type TestServer } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call, startReplica, tenantSession as replicaSession } from '../helpers/replicas.js';
import { signRequest } from '../../src/signing/request.js';
import { BURST_LIMITS, report, serverWithKey, signed } from './helpers.js';

/**
 * With replicas, a signed report's shared replay record is written by the statement that stores
 * the report (one round trip): a replay stores nothing and is answered as before, and every
 * answer is the one the record-first order gives.
 */

const AT = Date.parse('2026-05-02T10:00:00Z');

test('ingestSigned: a signature new to the shared record stores its report, a replay stores nothing and hides no later report of its id', async () => {
  const t = await postgresTestDatabase();
  try {
    const tenant = await (await openIdentityStore(t.database)).createTenant('t', 'pro');
    const a = await openControlPlaneStore(t.database);
    const b = await openControlPlaneStore(t.second());
    const server = await a.createServer(tenant.id, 's', DEFAULT_BUNDLE, 'system');
    const rec = (id: string, slot?: number): TelemetryRecord | SignedRecord => ({
      serverId: server.id,
      receivedAt: AT,
      report: report(server.id, { reportId: id }) as unknown as TelemetryReport,
      ...(slot === undefined ? {} : { signature: { ts: 1_800_000_000, slot } }),
    });
    // A signature recorded by the ledger (a pull's, or an invalid report's) is a replay here.
    if (t.database.kind !== 'postgres') throw new Error('postgres expected');
    const ledger = new PgReplayLedger(t.database.pool, 300, () => 1_800_000_000_000);
    assert.equal(await ledger.record(1_800_000_000, 9), true);
    const first = await a.ingestSigned!([rec('r1', 1), rec('r2', 9), rec('r2', 2), rec('plain'), rec('r1', 3)]);
    const stored = { accepted: true, received: 2 };
    assert.deepEqual(first, [stored, null, stored, stored, { accepted: false, received: 0 }]);
    // Through another replica's handle: the same signature is a replay, stored once in all.
    const again = await b.ingestSigned!([rec('r3', 1), rec('r3', 4)]);
    assert.deepEqual(again, [null, stored]);
    assert.equal(await a.countReports(server.id), 4);
    assert.equal((await a.dailyUsage(server.id, '2026-05-02', '2026-05-02'))[0]!.reports, 4);
    // A signature stored by the report's statement is a replay for the ledger too.
    assert.equal(await ledger.record(1_800_000_000, 4), false);
    // One signature sent through both replicas at once: exactly one stores its report.
    const both = await Promise.all([a.ingestSigned!([rec('race', 77)]), b.ingestSigned!([rec('race', 77)])]);
    assert.deepEqual(both.map(([o]) => o === null).sort(), [false, true]);
    assert.equal(await a.countReports(server.id), 5);
  } finally {
    await t.dispose();
  }
});

test('a rate limiter takes back a released hit: the count is as if the request had never been admitted', async () => {
  const rate = { limit: 2, windowMs: 60_000 };
  const memory = new MemoryRateLimiter();
  assert.equal(memory.hit('k', rate, 1000).allowed, true);
  assert.equal(memory.hit('k', rate, 2000).allowed, true);
  assert.equal(memory.hit('k', rate, 3000).allowed, false);
  memory.release('k', 1000);
  assert.equal(memory.peek('k', rate, 3000).remaining, 1);
  // The hit left is the one at 2000: room again once it leaves the window, not before.
  assert.equal(memory.hit('k', rate, 3000).allowed, true);
  assert.equal(memory.hit('k', rate, 61_999).allowed, false);
  assert.equal(memory.hit('k', rate, 62_001).allowed, true);
  memory.release('other', 5);

  // Shared: a hit written by a sync and released afterwards no longer counts on another replica.
  const t = await postgresTestDatabase();
  try {
    if (t.database.kind !== 'postgres') throw new Error('postgres expected');
    const second = t.second();
    if (second.kind !== 'postgres') throw new Error('postgres expected');
    const now = Date.now();
    const a = await PgRateLimiter.open(t.database.pool, { syncMs: 3_600_000, now: () => now });
    const b = await PgRateLimiter.open(second.pool, { syncMs: 3_600_000, now: () => now });
    try {
      const wide = { limit: 3, windowMs: 60_000 };
      b.peek('k', wide, now);
      assert.equal(a.hit('k', wide, now).allowed, true);
      assert.equal(a.hit('k', wide, now).allowed, true);
      await a.sync();
      b.hit('k', wide, now);
      await b.sync();
      assert.equal(b.peek('k', wide, now).allowed, false, 'two hits on a and one on b: the limit');
      a.release('k', now);
      await a.sync();
      await b.sync();
      assert.equal(b.peek('k', wide, now).remaining, 1);
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await t.dispose();
  }
});

interface Pair {
  a: TestServer;
  b: TestServer;
  key: string;
  serverId: number;
  token: string;
  dispose(): Promise<void>;
}

/** Two replicas on one fresh database, a server and its key, each replica holding the key and its tenant (the common path). */
async function pair(limits: Record<string, unknown> = {}): Promise<Pair> {
  const url = await freshDatabase();
  const options = { database: { kind: 'postgres' as const, url }, limits: { ...BURST_LIMITS, ...limits } };
  const a = await startTestServer(options);
  const b = await startTestServer(options);
  const { token } = await tenantSession(a, 'pro');
  const { serverId, key } = await serverWithKey(a, token);
  for (const [i, s] of [a, b].entries()) assert.equal((await signed(s, key, 'GET', `/v1/config?server=${serverId}&n=warm${i}`)).status, 200);
  return {
    a,
    b,
    key,
    serverId,
    token,
    async dispose() {
      await a.stop();
      await b.stop();
    },
  };
}

const usage = async (p: Pair) => (await p.a.call('GET', `/v1/servers/${p.serverId}/usage`, { token: p.token })).body;

test('a valid report replayed to another replica is refused 401 and stores nothing, with or without a nonce in its target', async () => {
  const p = await pair();
  try {
    for (const target of ['/v1/telemetry', '/v1/telemetry?nonce=0123456789abcdef']) {
      const once = { at: Date.now(), body: report(p.serverId, { reportId: `replayed${target.length}` }) };
      assert.equal((await signed(p.a, p.key, 'POST', target, once)).status, 202);
      const replay = await signed(p.b, p.key, 'POST', target, once);
      assert.equal(replay.status, 401);
      assert.match(replay.body.error.message, /replay/);
      // And once more on the first: its own record refuses it too.
      assert.equal((await signed(p.a, p.key, 'POST', target, once)).status, 401);
    }
    assert.equal((await usage(p)).linesSpoken, 80, 'each report counted once');
  } finally {
    await p.dispose();
  }
});

test('a replayed invalid report is refused 401 (replay before body); a valid report after a refused one with the same nonce and id is stored', async () => {
  const p = await pair();
  try {
    const target = '/v1/telemetry?nonce=00000000000000aa';
    const invalid = { at: Date.now(), body: report(p.serverId, { reportId: 'same', botCount: -1 }) };
    const first = await signed(p.a, p.key, 'POST', target, invalid);
    assert.equal(first.status, 422);
    for (const s of [p.b, p.a]) {
      const replay = await signed(s, p.key, 'POST', target, invalid);
      assert.equal(replay.status, 401);
      assert.match(replay.body.error.message, /replay/);
    }
    // The same nonce and report id, a valid body: another signature, stored.
    const valid = await signed(p.b, p.key, 'POST', target, { at: invalid.at, body: report(p.serverId, { reportId: 'same' }) });
    assert.equal(valid.status, 202);
    assert.deepEqual(valid.body, { accepted: true, received: 2 });
    assert.equal((await usage(p)).linesSpoken, 40);
  } finally {
    await p.dispose();
  }
});

test('a replay is answered 401 before a 429 or a 403 plan_limit, on the replica that did not see it and on the one that did', async () => {
  // The key's rate: two warm-up pulls and one report use it up. The server's quota: one report.
  for (const [limits, status, code] of [
    [{ serverKey: { limit: 3, windowMs: 3_600_000 } }, 429, 'rate_limited'],
    [{ telemetryReports: { limit: 1, windowMs: 3_600_000 } }, 403, 'plan_limit'],
  ] as const) {
    const p = await pair(limits);
    try {
      const once = { at: Date.now(), body: report(p.serverId, { reportId: 'limit' }) };
      assert.equal((await signed(p.a, p.key, 'POST', '/v1/telemetry', once)).status, 202);
      // Until the first replica refuses (the other's warm-up pull counts there once its limiter has synced).
      let over = await signed(p.a, p.key, 'POST', '/v1/telemetry', { body: report(p.serverId, { reportId: 'over0' }) });
      for (let i = 1; i < 3 && over.status === 202; i++)
        over = await signed(p.a, p.key, 'POST', '/v1/telemetry', { body: report(p.serverId, { reportId: `over${i}` }) });
      assert.equal(over.status, status);
      assert.equal(over.body.error.code, code);
      // The other replica may or may not know of the limit yet (the limiter's sync): either way a replay is a 401.
      for (const s of [p.b, p.a]) {
        const replay = await signed(s, p.key, 'POST', '/v1/telemetry', once);
        assert.equal(replay.status, 401, `${code}: ${JSON.stringify(replay.body)}`);
        assert.match(replay.body.error.message, /replay/);
      }
    } finally {
      await p.dispose();
    }
  }
});

test('a replica killed (SIGKILL) with signed reports in flight: every report acknowledged is stored, and with the rest sent again to another replica each is stored once', async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  const limits = { serverKey: { limit: 100_000, windowSeconds: 60 }, telemetryReports: { limit: 100_000, windowSeconds: 1 } };
  const first = await startReplica(url, dir.path, [], limits);
  const second = await startReplica(url, dir.path, [], limits);
  try {
    const { token } = await replicaSession(first.url);
    const server = await call(first.url, 'POST', '/v1/servers', token, { name: 'killed' });
    const { key } = await call(first.url, 'POST', `/v1/servers/${server.id}/keys`, token);
    const send = (base: string, i: number, nonce: string) => {
      const text = JSON.stringify(report(server.id, { reportId: `k${i}` }));
      const target = `/v1/telemetry?nonce=${nonce}`;
      const headers = { ...signRequest(key, { method: 'POST', target, body: text }), authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      return fetch(base + target, { method: 'POST', headers, body: text }).then(
        (r) => r.status,
        () => 0,
      );
    };
    // Both replicas hold the key and its tenant: the reports go the one-statement way.
    for (const [j, base] of [first.url, second.url].entries()) assert.equal(await send(base, -1 - j, `warm${j}`), 202);
    const n = 300;
    const inFlight = Array.from({ length: n }, (_, i) => send(first.url, i, `a${i}`));
    await Promise.race(inFlight);
    await first.kill();
    const statuses = await Promise.all(inFlight);
    assert.ok(
      statuses.every((s) => s === 202 || s === 0),
      `only 202s and lost connections: ${[...new Set(statuses)].join(', ')}`,
    );
    // Every report acknowledged is there; the sidecar sends the others again (new nonce, same id).
    for (let i = 0; i < n; i++) if (statuses[i] !== 202) assert.equal(await send(second.url, i, `b${i}`), 202);
    const usage = await call(second.url, 'GET', `/v1/servers/${server.id}/usage`, token);
    assert.equal(usage.linesSpoken, 40 * (n + 2), 'each report stored exactly once (the two warm-up reports included)');
    // None twice: every report sent again (or acknowledged) is a duplicate now.
    for (const i of [0, n - 1]) assert.equal(await send(second.url, i, `c${i}`), 202);
    assert.equal((await call(second.url, 'GET', `/v1/servers/${server.id}/usage`, token)).linesSpoken, 40 * (n + 2));
  } finally {
    await first.kill();
    await second.kill();
    dir.dispose();
  }
});
