import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { MAP_LIMITS } from '../../src/controlplane/telemetry.js';
import { MAP_SAMPLE } from '../../src/sidecar/link/telemetry-push.js';
import { BURST_LIMITS, report, serverWithKey, signed } from './helpers.js';

// The live map's sample on a telemetry report (`map`): bounded in count and rate, validated
// with a 422 naming the field, the latest kept per server and served at /v1/servers/{id}/map.

const T0 = Date.parse('2026-11-25T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const entry = (agent: number, x = agent, z = -agent) => ({
  agent,
  name: `N${agent}`,
  alignment: 'neutral',
  goal: 'none',
  state: 'patrolling',
  squad: 'alpha',
  x,
  z,
  health: 90,
});
const many = (n: number) => Array.from({ length: n }, (_, i) => entry(i + 1));

test('the sidecar and the control plane agree on the map limits', () => {
  assert.equal(MAP_SAMPLE.maxCharacters, MAP_LIMITS.maxCharacters);
  assert.equal(MAP_SAMPLE.minIntervalMs, MAP_LIMITS.minIntervalMs);
  assert.ok(MAP_SAMPLE.maxAgeMs <= MAP_LIMITS.maxSkewMs);
  assert.equal(MAP_SAMPLE.maxCoordinate, MAP_LIMITS.maxCoordinate);
});

test('a map sample is kept per server and served at GET /v1/servers/{id}/map; /roster keeps its shape', async () => {
  let now = T0;
  const s = await startTestServer({ now: () => now, limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const empty = await s.call('GET', `/v1/servers/${a.serverId}/map`, { token });
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { ts: null, receivedAt: null, stale: true, minIntervalS: 5, characters: [] });

    const roster = [{ agent: 1, name: 'N1', alignment: 'neutral', goal: 'none', state: 'patrolling' }];
    const first = await signed(s, a.key, 'POST', '/v1/telemetry', {
      at: now,
      body: report(a.serverId, { ts: iso(now), reportId: 'm1', roster, map: [entry(1), { ...entry(2), squad: undefined }] }),
    });
    assert.equal(first.status, 202, first.text);
    const got = await s.call('GET', `/v1/servers/${a.serverId}/map`, { token });
    assert.equal(got.body.ts, iso(T0));
    assert.equal(got.body.stale, false);
    assert.deepEqual(got.body.characters, [
      entry(1),
      { agent: 2, name: 'N2', alignment: 'neutral', goal: 'none', state: 'patrolling', x: 2, z: -2, health: 90 },
    ]);
    // The spec's roster answers exactly what it did before: Survivor rows (with seenAt and stale), no positions.
    const r = await s.call('GET', `/v1/servers/${a.serverId}/roster`, { token });
    assert.deepEqual(Object.keys(r.body[0]).sort(), ['agent', 'alignment', 'goal', 'name', 'seenAt', 'stale', 'state']);

    // The same report again (a resend after a lost 202) is accepted and changes nothing.
    now += 1000;
    const again = await signed(s, a.key, 'POST', '/v1/telemetry', {
      at: now,
      body: report(a.serverId, { ts: iso(T0), reportId: 'm1', map: [entry(1, 50, 50)] }),
    });
    assert.equal(again.status, 202, again.text);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/map`, { token })).body.characters[0].x, 1);

    // The next sample, 5 s on, replaces it.
    now = T0 + MAP_LIMITS.minIntervalMs;
    const next = await signed(s, a.key, 'POST', '/v1/telemetry', {
      at: now,
      body: report(a.serverId, { ts: iso(now), reportId: 'm2', map: [entry(1, 7, 8)] }),
    });
    assert.equal(next.status, 202, next.text);
    const moved = (await s.call('GET', `/v1/servers/${a.serverId}/map`, { token })).body;
    assert.deepEqual([moved.ts, moved.characters.length, moved.characters[0].x, moved.characters[0].z], [iso(now), 1, 7, 8]);

    // Stale once the sidecar stops sending.
    now += 200_000;
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/map`, { token })).body.stale, true);

    // Another tenant's server is not found; no session is 401.
    const other = await tenantSession(s, 'agency', 'other@example.com');
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/map`, { token: other.token })).status, 404);
    assert.equal((await s.call('GET', `/v1/servers/${a.serverId}/map`)).status, 401);
  } finally {
    await s.stop();
  }
});

test('map limits: more than 500 characters, a second sample within 5 s, a sample dated far from now, a bad entry: 422 naming the field, nothing stored', async () => {
  let now = T0;
  const s = await startTestServer({ now: () => now, limits: BURST_LIMITS });
  try {
    const { token } = await tenantSession(s);
    const a = await serverWithKey(s, token);
    const send = (extra: Record<string, unknown>, id: string) =>
      signed(s, a.key, 'POST', '/v1/telemetry', { at: now, body: report(a.serverId, { ts: iso(now), reportId: id, ...extra }) });
    const paths = (r: { body: { error: { details: { path: string }[] } } }) => r.body.error.details.map((d) => d.path);

    const tooMany = await send({ map: many(MAP_LIMITS.maxCharacters + 1) }, 'a');
    assert.equal(tooMany.status, 422);
    assert.deepEqual(paths(tooMany), ['map']);
    assert.match(tooMany.body.error.details[0].message, /at most 500/);
    assert.equal((await send({ map: many(MAP_LIMITS.maxCharacters) }, 'b')).status, 202, 'exactly 500 is fine');

    now += MAP_LIMITS.minIntervalMs - 1;
    const soon = await send({ map: [entry(1)] }, 'c');
    assert.equal(soon.status, 422);
    assert.deepEqual(paths(soon), ['map']);
    assert.match(soon.body.error.details[0].message, /at most one map sample every 5 s/);

    now += 1;
    const old = await signed(s, a.key, 'POST', '/v1/telemetry', {
      at: now,
      body: report(a.serverId, { ts: iso(now - MAP_LIMITS.maxSkewMs - 1000), reportId: 'd', map: [entry(1)] }),
    });
    assert.equal(old.status, 422);
    assert.deepEqual(paths(old), ['map']);

    const bad = await send({ map: [{ ...entry(1), x: 'east', health: 101, colour: 'red' }, 'x'] }, 'e');
    assert.equal(bad.status, 422);
    assert.deepEqual(paths(bad).sort(), ['map[0].colour', 'map[0].health', 'map[0].x', 'map[1]']);
    const far = await send({ map: [{ ...entry(1), z: 1e8 }] }, 'f');
    assert.deepEqual(paths(far), ['map[0].z']);

    // None of the refused reports was stored: only report b.
    const usage = await s.call('GET', `/v1/servers/${a.serverId}/usage`, { token });
    assert.equal(usage.body.linesSpoken, 40);
    const kept = (await s.call('GET', `/v1/servers/${a.serverId}/map`, { token })).body;
    assert.deepEqual([kept.ts, kept.characters.length], [iso(T0), 500]);
    // The same report without its map goes through (what a sidecar does after such a 422).
    assert.equal((await send({}, 'c')).status, 202);
  } finally {
    await s.stop();
  }
});
