import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, startTestServer, tenantSession } from '../helpers/embedded.js';
import { BURST_LIMITS, report, serverWithKey, signed } from './helpers.js';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';

test('the documented defaults', () => {
  assert.deepEqual(DEFAULT_LIMITS.serverKey, { limit: 120, windowMs: 60_000 });
  assert.deepEqual(DEFAULT_LIMITS.telemetryReports, { limit: 2, windowMs: 1000 });
  assert.equal(DEFAULT_LIMITS.telemetryEventKinds, 100);
  assert.equal(DEFAULT_LIMITS.telemetryRetentionDays, 30);
});

test('a server key makes 120 signed requests per minute, then 429 with Retry-After and X-RateLimit-* (pulls and reports alike)', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now, limits: { telemetryReports: BURST_LIMITS.telemetryReports } });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    for (let i = 0; i < 110; i++) {
      const r = await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=${i}`, { at: now });
      assert.equal(r.status, 200, `pull ${i}`);
    }
    for (let i = 0; i < 10; i++) {
      const r = await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: `r${i}` }) });
      assert.equal(r.status, 202, `report ${i}`);
    }
    for (const r of [
      await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=last`, { at: now }),
      await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'over' }) }),
    ]) {
      assert.equal(r.status, 429);
      assert.equal(r.body.error.code, 'rate_limited');
      assert.match(r.body.error.message, /120 requests per minute per server key/);
      assert.equal(r.headers.get('x-ratelimit-limit'), '120');
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(r.headers.get('retry-after'), '60');
    }
    // Another server's key has its own budget.
    assert.equal((await signed(s, b.key, 'GET', `/v1/config?server=${b.serverId}`, { at: now })).status, 200);
    now += 60_000;
    assert.equal((await signed(s, a.key, 'GET', `/v1/config?server=${a.serverId}&n=after`, { at: now })).status, 200);
  } finally {
    await s.stop();
  }
});

// The issue: 1,000-event reports wrote 46 MiB in 1.1 s with no rate limit.
test('telemetry: at most 2 reports per second per server, else 403 plan_limit naming the limit, with Retry-After', async () => {
  let now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    for (let i = 0; i < 2; i++) {
      assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: `r${i}` }) })).status, 202);
    }
    now += 400;
    const over = await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'r2' }) });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /2 telemetry reports per second per server/);
    assert.equal(over.headers.get('retry-after'), '1');
    assert.equal(over.headers.get('x-ratelimit-limit'), '2');
    // Nothing of the refused report was stored.
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token })).body.linesSpoken, 80);
    // Another server is not affected.
    assert.equal((await signed(s, b.key, 'POST', '/v1/telemetry', { at: now, body: report(b.serverId) })).status, 202);
    // Back to the first server within its second: still its own count, still refused.
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'r3' }) })).status, 403);
    now += 600;
    assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'r2' }) })).status, 202);
  } finally {
    await s.stop();
  }
});

// The issue: a refused report was counted against the quota before it was checked, so a
// client sending a malformed report got its next, valid one refused 403 plan_limit.
test('telemetry: refused reports (422, another server) do not use up the 2-a-second quota of the server', async () => {
  const now = Date.parse('2026-05-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token, 'a');
    const b = await serverWithKey(s, token, 'b');
    const refused = [
      await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: { serverId: String(a.serverId) } }),
      await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { botCount: -1 }) }),
      await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { extra: true }) }),
      await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(b.serverId) }),
      await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(999_999) }),
    ];
    assert.deepEqual(
      refused.map((r) => [r.status, r.body.error.code]),
      [
        [422, 'validation_failed'],
        [422, 'validation_failed'],
        [422, 'validation_failed'],
        [403, 'forbidden'],
        [404, 'config_not_found'],
      ],
    );
    for (let i = 0; i < 2; i++) {
      assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: `r${i}` }) })).status, 202);
    }
    const over = await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'r2' }) });
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
  } finally {
    await s.stop();
  }
});

test('telemetry: a report carries at most 100 event kinds; more is 422 validation_failed and nothing is stored', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const events = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: `k${i}`, count: 1 }));
    const over = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: 'big', events: events(101) }) });
    assert.equal(over.status, 422);
    assert.equal(over.body.error.code, 'validation_failed');
    assert.deepEqual(over.body.error.details, [{ path: 'events', message: 'must have at most 100 entries (event kinds), got 101' }]);
    const ok = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: 'full', events: events(100) }) });
    assert.equal(ok.status, 202);
    assert.deepEqual(ok.body, { accepted: true, received: 100 });
  } finally {
    await s.stop();
  }
});

test('telemetry retention: raw reports go after 30 days, each server keeps its newest; daily rollups and read models are unchanged', async () => {
  let now = Date.parse('2026-03-01T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token: firstToken, email } = await tenantSession(s);
    let token = firstToken;
    const a = await serverWithKey(s, token, 'a');
    const idle = await serverWithKey(s, token, 'idle');
    const count = (id: number) => (s.db.prepare('SELECT COUNT(*) AS n FROM cp_reports WHERE server_id = ?').get(id) as { n: number }).n;
    for (let i = 0; i < 3; i++) {
      now += 1000;
      assert.equal((await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: `old${i}` }) })).status, 202);
    }
    assert.equal((await signed(s, idle.key, 'POST', '/v1/telemetry', { at: now, body: report(idle.serverId) })).status, 202);
    const oldDays = s.db.prepare("SELECT * FROM cp_usage_daily WHERE day = '2026-03-01' ORDER BY server_id");
    const daysBefore = oldDays.all();
    const usageBefore = (await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token })).body;
    const idleBefore = (await s.call('GET', `/v1/servers/${idle.serverId}/overview`, { token })).body;

    now += 30 * 86_400_000 - 10_000;
    assert.equal(
      (await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'new0', linesSpoken: 0, events: [] }) })).status,
      202,
    );
    assert.equal(count(a.serverId), 4, 'nothing is 30 days old yet');

    // Retention runs at most every 10 minutes, riding on ingest.
    now += 11 * 60_000;
    assert.equal(
      (await signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { reportId: 'new1', linesSpoken: 0, events: [] }) })).status,
      202,
    );
    assert.equal(count(a.serverId), 2, 'the three old reports went');
    assert.equal(count(idle.serverId), 1, 'an idle server keeps its newest report');
    // A month on, the first session has expired: log in again to read.
    token = (await s.call('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } })).body.token;
    // The rollups of the old day are untouched (the new reports went into a new day).
    assert.equal(daysBefore.length, 2);
    assert.deepEqual(oldDays.all(), daysBefore);
    const idleAfter = (await s.call('GET', `/v1/servers/${idle.serverId}/overview`, { token })).body;
    assert.equal(idleAfter.lastSeenAt, idleBefore.lastSeenAt);
    assert.equal(idleAfter.survivors, idleBefore.survivors);
    // The month's usage (from the rollups) still counts the deleted reports.
    assert.equal(usageBefore.linesSpoken, 120);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token })).body.linesSpoken, 120);
  } finally {
    await s.stop();
  }
});

// The issue: a tenant's summed counters could overflow (SQLite SUM past 2^63) and make
// GET /v1/admin/tenants a 500 for everyone.
test('counters are 64-bit safe: huge daily totals saturate, and no read of them is a 500', async () => {
  let now = Date.parse('2026-05-10T10:00:00Z');
  const s = await startTestServer({ now: () => now });
  try {
    const { token, tenantId } = await tenantSession(s);
    const servers = [await serverWithKey(s, token, 'a'), await serverWithKey(s, token, 'b')];
    const big = 1e12;
    for (const [i, srv] of servers.entries()) {
      assert.equal(
        (
          await signed(s, srv.key, 'POST', '/v1/telemetry', {
            at: now,
            body: report(srv.serverId, { reportId: `x${i}`, linesSpoken: big, llmTokens: big, cacheHits: big }),
          })
        ).status,
        202,
      );
    }
    // Years of traffic at the per-report maximum, as the rollups would hold them: each day near 2^63.
    s.db
      .prepare('UPDATE cp_usage_daily SET lines_spoken = ?, llm_tokens = ?, tts_characters = ?, cache_hits = ?, reports = ?')
      .run(9_000_000_000_000_000_000n, 9_000_000_000_000_000_000n, 9_000_000_000_000_000_000n, 9_000_000_000_000_000_000n, 9_000_000_000_000_000_000n);
    const tenants = await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN });
    assert.equal(tenants.status, 200);
    assert.equal((await s.call('GET', `/v1/admin/tenants/${tenantId}`, { token: ADMIN_TOKEN })).status, 200);
    for (const srv of servers) {
      // Another report on the same day: the sum would pass 2^63; it saturates instead.
      now += 1000;
      assert.equal(
        (
          await signed(s, srv.key, 'POST', '/v1/telemetry', {
            at: now,
            body: report(srv.serverId, { reportId: 'more', linesSpoken: big, llmTokens: big, cacheHits: big }),
          })
        ).status,
        202,
      );
      const usage = await s.call('GET', `/v1/servers/${srv.serverId}/usage`, { token });
      assert.equal(usage.status, 200);
      assert.equal(usage.body.linesSpoken, Number.MAX_SAFE_INTEGER);
      assert.equal(usage.body.llmTokens, Number.MAX_SAFE_INTEGER);
      for (const path of ['overview', 'economy', 'activity', 'roster', '']) {
        const r = await s.call('GET', `/v1/servers/${srv.serverId}${path ? `/${path}` : ''}`, { token });
        assert.ok(r.status < 500, `${path}: ${r.status}`);
      }
    }
    const row = s.db.prepare('SELECT lines_spoken, typeof(lines_spoken) AS t FROM cp_usage_daily LIMIT 1').get() as { lines_spoken: number; t: string };
    assert.deepEqual(row, { lines_spoken: Number.MAX_SAFE_INTEGER, t: 'integer' });
    assert.equal((await s.call('GET', '/v1/admin/tenants', { token: ADMIN_TOKEN })).status, 200);
  } finally {
    await s.stop();
  }
});
