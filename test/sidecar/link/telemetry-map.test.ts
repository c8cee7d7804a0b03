import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MapSurvivor } from '../../../brain/index.js';
import { ControlPlaneClient } from '../../../src/sidecar/link/control-plane-client.js';
import { LatencyHistogram } from '../../../src/sidecar/tick/histogram.js';
import { TelemetryBuffer } from '../../../src/sidecar/link/telemetry-buffer.js';
import { MAP_SAMPLE, TelemetryPusher } from '../../../src/sidecar/link/telemetry-push.js';
import { spread, type SidecarTelemetry } from '../../../src/sidecar/service.js';
import { startTestServer, tenantSession, type TestServer } from '../../helpers/embedded.js';
import { tempDir } from '../../helpers/paths.js';
import { BURST_LIMITS, serverWithKey } from '../../controlplane/helpers.js';
import { fullTick, post, quietTelemetry, startTest } from '../helpers.js';

const counts = (spawn: number): SidecarTelemetry => quietTelemetry({ events: { spawn } });

const row = (agent: number, x: number): MapSurvivor => ({
  agent,
  name: `N${agent}`,
  alignment: 'neutral',
  goal: 'none',
  state: 'patrolling',
  squad: agent % 2 ? 'a' : '',
  x,
  z: 2 * x,
  health: 100,
});

async function pusherOn(cp: TestServer, sc: { serverId: number; key: string }, now: () => number, sampleMap: (max: number) => Promise<MapSurvivor[]>) {
  const dir = tempDir();
  const buffer = new TelemetryBuffer(dir.path);
  await buffer.load();
  let spawned = 0;
  const pusher = new TelemetryPusher({
    client: new ControlPlaneClient({ url: cp.url, serverId: String(sc.serverId), key: sc.key, now }),
    buffer,
    collect: async () => counts(++spawned),
    sampleMap,
    latency: new LatencyHistogram(),
    now,
    intervalMs: 3_600_000,
    minBackoffMs: 3_600_000,
    maxBackoffMs: 3_600_000,
  });
  return { pusher, buffer, dispose: () => dir.dispose() };
}

test('the sidecar sends the live map with its reports: at most one sample per 5 s, at most 500 characters, never from the disk buffer', async () => {
  let clock = Date.now();
  const now = () => clock;
  const cp = await startTestServer({ now, limits: BURST_LIMITS });
  const { token } = await tenantSession(cp);
  const sc = await serverWithKey(cp, token);
  const asked: number[] = [];
  let x = 0;
  const p = await pusherOn(cp, sc, now, async (max) => {
    asked.push(max);
    x += 10;
    return Array.from({ length: 700 }, (_, i) => row(i + 1, x));
  });
  const map = async () => (await cp.call('GET', `/v1/servers/${sc.serverId}/map`, { token })).body;
  try {
    await p.pusher.report();
    await p.pusher.flush();
    let m = await map();
    assert.equal(m.characters.length, MAP_SAMPLE.maxCharacters);
    assert.deepEqual(m.characters[0], { agent: 1, name: 'N1', alignment: 'neutral', goal: 'none', state: 'patrolling', squad: 'a', x: 10, z: 20, health: 100 });
    assert.equal(m.characters[1].squad, undefined, 'no squad, no field');
    assert.deepEqual(asked, [MAP_SAMPLE.maxCharacters]);

    clock += MAP_SAMPLE.minIntervalMs - 1;
    await p.pusher.report();
    await p.pusher.flush();
    assert.equal(asked.length, 1, 'no second sample within 5 s');
    assert.equal((await map()).characters[0].x, 10);

    clock += 1;
    await p.pusher.report();
    await p.pusher.flush();
    m = await map();
    assert.equal(m.characters[0].x, 20);
    assert.equal(m.ts, new Date(clock).toISOString());
    assert.equal(p.buffer.size, 0);
    const activity = (await cp.call('GET', `/v1/servers/${sc.serverId}/activity?limit=50`, { token })).body as { count: number }[];
    assert.equal(
      activity.reduce((n, e) => n + e.count, 0),
      1 + 2 + 3,
    );
  } finally {
    await p.pusher.close(100);
    p.dispose();
    await cp.stop();
  }
});

test('a map sample the control plane refuses (another sidecar of the server sampled a moment ago) costs the report nothing', async () => {
  let clock = Date.now();
  const now = () => clock;
  const cp = await startTestServer({ now, limits: BURST_LIMITS });
  const { token } = await tenantSession(cp);
  const sc = await serverWithKey(cp, token);
  // Agent 2 stands off any map the control plane accepts (beyond ±10⁷ m): it is left out, not the sample.
  const first = await pusherOn(cp, sc, now, async () => [row(1, 1), row(2, 3e7)]);
  const second = await pusherOn(cp, sc, now, async () => [row(1, 99)]);
  try {
    await first.pusher.report();
    await first.pusher.flush();
    clock += 1000;
    await second.pusher.report();
    await second.pusher.flush();
    assert.equal(second.buffer.size, 0, 'the report went without its map');
    assert.equal(second.pusher.status().rejected, 0);
    assert.equal(second.pusher.status().lastPush?.outcome, 'ok');
    assert.deepEqual(
      (await cp.call('GET', `/v1/servers/${sc.serverId}/map`, { token })).body.characters.map((c: { agent: number; x: number }) => [c.agent, c.x]),
      [[1, 1]],
    );
    const activity = (await cp.call('GET', `/v1/servers/${sc.serverId}/activity?limit=50`, { token })).body as { count: number }[];
    assert.equal(
      activity.reduce((n, e) => n + e.count, 0),
      2,
    );
  } finally {
    await first.pusher.close(100);
    await second.pusher.close(100);
    first.dispose();
    second.dispose();
    await cp.stop();
  }
});

test('the map is never buffered on disk, and a sample older than 5 min is not sent (a backlog after an outage goes without maps)', async () => {
  let clock = Date.now();
  const now = () => clock;
  const cp = await startTestServer({ now, limits: BURST_LIMITS });
  const { token } = await tenantSession(cp);
  const sc = await serverWithKey(cp, token);
  const dir = tempDir();
  const buffer = new TelemetryBuffer(dir.path);
  await buffer.load();
  let down = true;
  const pusher = new TelemetryPusher({
    // The control plane unreachable until `down` turns false.
    client: new ControlPlaneClient({
      url: cp.url,
      serverId: String(sc.serverId),
      key: sc.key,
      now,
      fetch: (input, init) => (down ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init)),
    }),
    buffer,
    collect: async () => counts(1),
    sampleMap: async () => [row(1, 1)],
    latency: new LatencyHistogram(),
    now,
    intervalMs: 3_600_000,
    minBackoffMs: 3_600_000,
    maxBackoffMs: 3_600_000,
  });
  try {
    await pusher.report();
    await pusher.flush();
    assert.equal(buffer.size, 1);
    assert.doesNotMatch(buffer.headLine()!.line, /"map"/);
    down = false;
    clock += MAP_SAMPLE.maxAgeMs + 1000;
    await pusher.flush();
    assert.equal(buffer.size, 0);
    const m = (await cp.call('GET', `/v1/servers/${sc.serverId}/map`, { token })).body;
    assert.equal(m.ts, null, 'the stale sample stayed home');
    assert.equal((await cp.call('GET', `/v1/servers/${sc.serverId}/activity?limit=5`, { token })).body.length, 1, 'the report itself went');
  } finally {
    await pusher.close(100);
    dir.dispose();
    await cp.stop();
  }
});

test('Sidecar.mapSample: characters the game still ticks, with positions, spread evenly when over the limit, inline and in workers', async () => {
  for (const workers of [0, 1]) {
    const sc = await startTest({ workers });
    try {
      for (let agent = 1; agent <= 5; agent++) {
        const t = fullTick(agent) as { snapshot: { self_state: { pos: { x: number; z: number } } } };
        t.snapshot.self_state.pos = { ...t.snapshot.self_state.pos, x: 100 + agent + 0.04, z: -agent };
        assert.equal((await post(sc.url, t)).status, 200);
      }
      const all = await sc.mapSample(500);
      assert.deepEqual(
        all.map((r) => [r.agent, r.x, r.z, r.squad]),
        [1, 2, 3, 4, 5].map((a) => [a, 100 + a, -a, 'alpha']),
        `workers ${workers}`,
      );
      assert.ok(all.every((r) => r.name && r.state && r.goal && r.alignment && r.health === 100));
      assert.deepEqual(
        (await sc.mapSample(2)).map((r) => r.agent),
        [1, 3],
      );
    } finally {
      await sc.close();
    }
  }
  assert.deepEqual(spread([1, 2, 3, 4, 5, 6], 3), [1, 3, 5]);
  assert.deepEqual(spread([1, 2], 5), [1, 2]);
  assert.deepEqual(spread([1, 2], 0), []);
});
