import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { BURST_LIMITS, report, serverWithKey, signed } from './helpers.js';

// These tests send reports back to back: each raises the report quota and key rate
// explicitly (test/controlplane/limits.test.ts covers the defaults).

const roster = [
  { agent: 1, name: 'Mara', alignment: 'friendly', goal: 'find water', state: 'patrol' },
  { agent: 2, name: 'Ivo', alignment: 'hostile', goal: 'raid the farm', state: 'engage' },
];

test('§4.2 POST /v1/telemetry is 202 {accepted, received}; a repeated reportId is accepted:false and not counted twice', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const r = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: 'r-1' }) });
    assert.equal(r.status, 202);
    assert.deepEqual(r.body, { accepted: true, received: 2 });
    const dup = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: 'r-1', botCount: 99 }) });
    assert.equal(dup.status, 202);
    assert.deepEqual(dup.body, { accepted: false, received: 0 });
    const plain = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { events: [] }) });
    assert.deepEqual(plain.body, { accepted: true, received: 0 });
    const usage = await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token });
    assert.equal(usage.body.linesSpoken, 80);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}`, { token })).body.botCount, 12);
  } finally {
    await s.stop();
  }
});

test("telemetry validation: 422 validation_failed with every problem; another server's serverId is 403; not JSON is 415", async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const b = await serverWithKey(s, token, 'b');
    const bad = await signed(s, a.key, 'POST', '/v1/telemetry', {
      body: report(a.serverId, { botCount: -1, ts: 'yesterday', events: [{ kind: '', count: 1.5 }], latency: { p50: 3 }, extra: true, roster: [{ agent: 1 }] }),
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, 'validation_failed');
    const paths = bad.body.error.details.map((d: { path: string }) => d.path).sort();
    for (const p of ['botCount', 'ts', 'events[0].kind', 'events[0].count', 'latency.p99', 'extra', 'roster[0].name'])
      assert.ok(paths.includes(p), `${p} in ${paths}`);
    const numericId = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { serverId: a.serverId }) });
    assert.equal(numericId.status, 422, 'serverId is a string (spec 001 §2.2)');
    const other = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(b.serverId) });
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'forbidden');
    const form = await signed(s, a.key, 'POST', '/v1/telemetry', { body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415);
    const broken = await signed(s, a.key, 'POST', '/v1/telemetry', { body: '{"serverId":' });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.code, 'bad_request');
  } finally {
    await s.stop();
  }
});

test('read models: overview, roster, activity (newest first, limit), economy and usage for the month (injected clock)', async () => {
  let now = Date.parse('2026-03-31T23:00:00Z');
  const s = await startTestServer({ now: () => now, limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const empty = await s.call('GET', `/v1/servers/${a.serverId}/overview`, { token });
    assert.equal(empty.status, 200);
    assert.equal(empty.body.survivors, 0);
    assert.equal(empty.body.p50, null);
    assert.deepEqual((await s.call('GET', `/v1/servers/${a.serverId}/roster`, { token })).body, []);
    assert.deepEqual((await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token })).body, []);

    const push = (body: Record<string, unknown>) => signed(s, a.key, 'POST', '/v1/telemetry', { body, at: now });
    // March: counted in March only.
    assert.equal((await push(report(a.serverId, { linesSpoken: 100, spendUsd: 1, llmTokens: 500 }))).status, 202);
    now = Date.parse('2026-04-01T10:00:00Z');
    assert.equal(
      (
        await push(
          report(a.serverId, {
            linesSpoken: 10,
            spendUsd: 0.5,
            llmTokens: 1000,
            ttsCharacters: 400,
            cacheHits: 4,
            latency: { p50: 2.5, p99: 9 },
            economy: { ttsUsd: 0.2, llmUsd: 0.2 },
            roster,
            events: [
              { kind: 'spoke', count: 10 },
              { kind: 'snap', count: 1 },
            ],
          }),
        )
      ).status,
      202,
    );
    now += 1000;
    assert.equal(
      (await push(report(a.serverId, { linesSpoken: 10, spendUsd: 0.5, cacheHits: 6, botCount: 14, events: [{ kind: 'squad', count: 3 }] }))).status,
      202,
    );

    const usage = await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token });
    assert.deepEqual(usage.body, {
      serverId: String(a.serverId),
      periodStart: '2026-04-01T00:00:00.000Z',
      periodEnd: '2026-05-01T00:00:00.000Z',
      linesSpoken: 20,
      llmTokens: 1000,
      ttsCharacters: 400,
      spendUsd: 1,
    });

    const o = (await s.call('GET', `/v1/servers/${a.serverId}/overview`, { token })).body;
    assert.equal(o.survivors, 14);
    assert.equal(o.players, 30);
    assert.equal(o.lines, 20);
    assert.equal(o.spend, 1);
    assert.equal(o.cache, 0.5);
    // The latest report had no latency: the last known one is shown, with when it came in.
    assert.deepEqual([o.p50, o.p99, o.latencyAt], [2.5, 9, new Date(now - 1000).toISOString()]);
    assert.equal(o.period.reports, 2);
    assert.equal(o.series.length, 7);
    assert.equal(o.series[6].day, '2026-04-01');
    assert.equal(o.series[6].lines, 20);
    assert.equal(o.series[5].lines, 100, 'the series crosses the month boundary');

    const shown = (await s.call('GET', `/v1/servers/${a.serverId}/roster`, { token })).body as Record<string, unknown>[];
    // Each row also says when it was reported and whether that is too old to trust.
    assert.deepEqual(
      shown.map(({ seenAt: _seenAt, stale: _stale, ...r }) => r),
      roster,
    );
    assert.ok(shown.every((r) => typeof r.seenAt === 'string' && typeof r.stale === 'boolean'));

    const feed = (await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token })).body;
    assert.deepEqual(
      feed.map((e: { kind: string }) => e.kind),
      ['squad', 'snap', 'spoke', 'spawn', 'spoke'],
    );
    assert.deepEqual(Object.keys(feed[0]).sort(), ['count', 'id', 'kind', 'serverId', 'ts']);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/activity?limit=2`, { token })).body.length, 2);
    for (const limit of ['0', '101', 'x', '2.5']) {
      const r = await s.call('GET', `/v1/servers/${a.serverId}/activity?limit=${limit}`, { token });
      assert.equal(r.status, 400, limit);
      assert.equal(r.body.error.code, 'bad_request');
    }
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/activity?limit=100`, { token })).status, 200);

    // The sidecar's form: the phrase cache's hits inside economy too (the same number).
    assert.equal((await push(report(a.serverId, { linesSpoken: 0, spendUsd: 0, economy: { ttsUsd: 0, llmUsd: 0, cacheHits: 0 } }))).status, 202);
    const mismatch = await push(report(a.serverId, { linesSpoken: 5, cacheHits: 1, spendUsd: 0, economy: { ttsUsd: 0, llmUsd: 0, cacheHits: 2 } }));
    assert.equal(mismatch.status, 422);
    assert.equal(mismatch.body.error.details[0].path, 'economy.cacheHits');
    const e = (await s.call('GET', `/v1/servers/${a.serverId}/economy`, { token })).body;
    assert.equal(e.totalUsd, 1);
    assert.deepEqual(e.tts, { characters: 400, usd: 0.2, share: 0.2 });
    assert.deepEqual(e.llm, { tokens: 1000, usd: 0.2, share: 0.2 });
    assert.deepEqual(e.other, { usd: 0.6, share: 0.6 });
    assert.deepEqual(e.cache, { hits: 10, lines: 20, share: 0.5 });
  } finally {
    await s.stop();
  }
});

test('burst: many reports at once are all stored (group commit) and counted once each', async () => {
  // 200 reports at once from one key: far past its default rate and report quota, raised here.
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { reportId: `b-${i % 150}`, botCount: i, linesSpoken: 1, events: [] }) }),
      ),
    );
    assert.ok(results.every((r) => r.status === 202));
    assert.equal(results.filter((r) => r.body.accepted).length, 150);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token })).body.linesSpoken, 150);
  } finally {
    await s.stop();
  }
});

test('§8 activity limit defaults to 20', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const events = Array.from({ length: 25 }, (_, i) => ({ kind: `k${i}`, count: i }));
    assert.deepEqual((await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { events }) })).body, { accepted: true, received: 25 });
    const feed = (await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token })).body;
    assert.equal(feed.length, 20);
    assert.equal(feed[0].kind, 'k24');
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/activity?limit=100`, { token })).body.length, 25);
  } finally {
    await s.stop();
  }
});

test('regression: a telemetry ts with an offset is stored and echoed in UTC (…Z) in the activity feed', async () => {
  // Three reports in a row from one server: more than the default 2 a second.
  const s = await startTestServer({ limits: { telemetryReports: { limit: 100, windowMs: 1000 } } });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    for (const [ts, n] of [
      ['2026-11-25T14:00:00+02:00', 1],
      ['2026-11-25t12:30:00.250-01:30', 2],
      ['2026-11-25t15:00:00z', 3],
    ] as const) {
      const r = await signed(s, a.key, 'POST', `/v1/telemetry?n=${n}`, { body: report(a.serverId, { ts, events: [{ kind: 'spawn', count: n }] }) });
      assert.equal(r.status, 202);
    }
    const feed = await s.call('GET', `/v1/servers/${a.serverId}/activity`, { token });
    assert.deepEqual(
      feed.body.map((e: { ts: string; count: number }) => [e.count, e.ts]),
      [
        [3, '2026-11-25T15:00:00Z'],
        [2, '2026-11-25T14:00:00.250Z'],
        [1, '2026-11-25T12:00:00.000Z'],
      ],
    );
  } finally {
    await s.stop();
  }
});

test('a telemetry ts that is not a real instant (February 30, hour 24, minute 60) is 422, not moved to another day', async () => {
  const s = await startTestServer({ limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    for (const ts of [
      '2026-02-30T00:00:00Z',
      '2025-02-29T12:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T12:60:00Z',
      '2026-01-01T12:00:00+24:00',
    ]) {
      const r = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { ts }) });
      assert.equal(r.status, 422, ts);
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        ['ts'],
        ts,
      );
    }
    const leap = await signed(s, a.key, 'POST', '/v1/telemetry', { body: report(a.serverId, { ts: '2028-02-29T23:59:59.5+01:00' }) });
    assert.equal(leap.status, 202);
  } finally {
    await s.stop();
  }
});
