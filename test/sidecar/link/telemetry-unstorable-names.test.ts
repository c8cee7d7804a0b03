/**
 * Regression: a tick whose profile named a character `"\ud800"` (a lone surrogate) or with a NUL
 * put that name in the roster of every telemetry report; the control plane refuses such a string
 * (422), so each report, counters and all, was discarded for as long as the character lived. A
 * name cut to the roster's 200 characters inside an emoji made a lone surrogate the same way.
 * The sidecar now sends such a name with U+FFFD in place, and never cuts inside a pair.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MapSurvivor, Survivor } from '../../../brain/index.js';
import { ControlPlaneClient } from '../../../src/sidecar/link/control-plane-client.js';
import { LatencyHistogram } from '../../../src/sidecar/tick/histogram.js';
import { TelemetryBuffer } from '../../../src/sidecar/link/telemetry-buffer.js';
import { TelemetryPusher } from '../../../src/sidecar/link/telemetry-push.js';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { tempDir } from '../../helpers/paths.js';
import { BURST_LIMITS, serverWithKey } from '../../controlplane/helpers.js';
import { quietTelemetry } from '../helpers.js';

const NAMES = ['\ud800', 'a\u0000b', `${'x'.repeat(199)}🏠`, 'Zoë 🏠'];
const EXPECTED = ['\ufffd', 'a\ufffdb', 'x'.repeat(199), 'Zoë 🏠'];

const survivor = (agent: number, name: string): Survivor => ({ agent, name, alignment: 'neutral', goal: 'none', state: 'patrolling' });

test('names a tick may give (a lone surrogate, a NUL, an emoji at the length cut) reach the roster and the map, and never cost a report', async () => {
  const clock = Date.now();
  const now = () => clock;
  const cp = await startTestServer({ now, limits: BURST_LIMITS });
  const dir = tempDir();
  try {
    const { token } = await tenantSession(cp);
    const sc = await serverWithKey(cp, token);
    const buffer = new TelemetryBuffer(dir.path);
    await buffer.load();
    const pusher = new TelemetryPusher({
      client: new ControlPlaneClient({ url: cp.url, serverId: String(sc.serverId), key: sc.key, now }),
      buffer,
      collect: async () =>
        quietTelemetry({ events: { spawn: 1 }, roster: NAMES.map((name, i) => survivor(i + 1, name)), agents: NAMES.length, playersOnline: 3 }),
      sampleMap: async () => NAMES.map((name, i): MapSurvivor => ({ ...survivor(i + 1, name), squad: '', x: i, z: i, health: 100 })),
      latency: new LatencyHistogram(),
      now,
      intervalMs: 3_600_000,
      minBackoffMs: 3_600_000,
      maxBackoffMs: 3_600_000,
    });
    await pusher.report();
    await pusher.flush();
    assert.equal(pusher.status().lastPushError, null);
    const roster = (await cp.call('GET', `/v1/servers/${sc.serverId}/roster`, { token })).body as { name: string }[];
    assert.deepEqual(
      roster.map((s) => s.name),
      EXPECTED,
    );
    const map = (await cp.call('GET', `/v1/servers/${sc.serverId}/map`, { token })).body as { characters: { name: string }[] };
    // The map keeps 64 characters of a name.
    assert.deepEqual(
      map.characters.map((c) => c.name),
      [EXPECTED[0], EXPECTED[1], 'x'.repeat(64), EXPECTED[3]],
    );
    const overview = (await cp.call('GET', `/v1/servers/${sc.serverId}/overview`, { token })).body as { players?: number };
    assert.equal(overview.players, 3);
  } finally {
    await cp.stop();
    dir.dispose();
  }
});
