import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { serverWithKey, signed } from './helpers.js';
import { CONNECTED_WITHIN_MS } from '../../src/controlplane/connections.js';

test('a server summary carries the sidecar connection: never, then connected by a pull (version, User-Agent) and a report (latency), then stale; the roster ages out with it', async () => {
  let offset = 0;
  const s = await startTestServer({ now: () => Date.now() + offset });
  try {
    const { token } = await tenantSession(s);
    const sc = await serverWithKey(s, token);
    const summary = async () => (await s.call('GET', `/v1/servers/${sc.serverId}`, { token })).body;
    assert.deepEqual((await summary()).connection, {
      state: 'never',
      path: null,
      lastPullAt: null,
      appliedVersion: null,
      lastReportAt: null,
      sidecarVersion: null,
      latencyMs: null,
      dialogue: null,
    });

    const pull = await signed(s, sc.key, 'GET', `/v1/config?server=${sc.serverId}`, { headers: { 'user-agent': 'brainstem-sidecar/9.9.9' } });
    assert.equal(pull.status, 200);
    let c = (await summary()).connection;
    assert.equal(c.state, 'connected');
    // Pulling without a push stream: publishes reach it at its next poll.
    assert.equal(c.path, 'polling');
    assert.equal(c.appliedVersion, 1);
    assert.equal(c.sidecarVersion, 'brainstem-sidecar/9.9.9');
    assert.equal(typeof c.lastPullAt, 'string');
    assert.equal(c.lastReportAt, null);

    const report = {
      serverId: String(sc.serverId),
      ts: new Date(Date.now() + offset).toISOString(),
      botCount: 1,
      playersOnline: 0,
      linesSpoken: 0,
      spendUsd: 0,
      events: [],
      reportId: 'first',
      latency: { p50: 1.5, p99: 6 },
      roster: [{ agent: 1, name: 'Mara', alignment: 'friendly', goal: 'fight', state: 'engaging' }],
    };
    assert.equal((await signed(s, sc.key, 'POST', '/v1/telemetry', { body: report })).status, 202);
    c = (await summary()).connection;
    assert.deepEqual(c.latencyMs, { p50: 1.5, p99: 6 });
    assert.equal(typeof c.lastReportAt, 'string');
    const fresh = (await s.call('GET', `/v1/servers/${sc.serverId}/roster`, { token })).body;
    assert.equal(fresh[0].stale, false);

    // The sidecar goes away: past the window the link is stale and so is the roster it left.
    offset += CONNECTED_WITHIN_MS + 1_000;
    assert.equal((await summary()).connection.state, 'stale');
    assert.equal((await summary()).connection.path, null);
    const list = (await s.call('GET', '/v1/servers', { token })).body;
    assert.equal(list[0].connection.state, 'stale');
    const old = (await s.call('GET', `/v1/servers/${sc.serverId}/roster`, { token })).body;
    assert.equal(old[0].stale, true);
    assert.equal(old[0].state, 'engaging');
    assert.equal(old[0].seenAt, c.lastReportAt);
  } finally {
    await s.stop();
  }
});
