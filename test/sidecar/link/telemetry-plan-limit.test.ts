import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControlPlaneClient } from '../../../src/sidecar/link/control-plane-client.js';
import { LatencyHistogram } from '../../../src/sidecar/tick/histogram.js';
import { TelemetryBuffer } from '../../../src/sidecar/link/telemetry-buffer.js';
import { TelemetryPusher } from '../../../src/sidecar/link/telemetry-push.js';
import type { SidecarTelemetry } from '../../../src/sidecar/service.js';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { tempDir } from '../../helpers/paths.js';
import { serverWithKey } from '../../controlplane/helpers.js';
import { quietTelemetry } from '../helpers.js';

const counts = (events: Record<string, number>): SidecarTelemetry => quietTelemetry({ events });

// A backlog drains report after report, faster than the control plane's per-server report
// quota (403 plan_limit); the sidecar must back off and resend, not stop or drop them.
test('a backlog draining past the report quota is kept and resent, never dropped or given up', async () => {
  let offset = 0;
  const cp = await startTestServer({ now: () => Date.now() + offset, limits: { telemetryReports: { limit: 1, windowMs: 60_000 } } });
  const dir = tempDir();
  const { token } = await tenantSession(cp);
  const sc = await serverWithKey(cp, token);
  const buffer = new TelemetryBuffer(dir.path);
  await buffer.load();
  const client = new ControlPlaneClient({ url: cp.url, serverId: String(sc.serverId), key: sc.key });
  const batches = [counts({ spawn: 1 }), counts({ spawn: 2 }), counts({ spawn: 4 })];
  // A back-off far longer than the test: every send below is the test's own flush().
  const pusher = new TelemetryPusher({
    client,
    buffer,
    collect: async () => batches.shift() ?? counts({}),
    latency: new LatencyHistogram(),
    intervalMs: 3_600_000,
    minBackoffMs: 3_600_000,
    maxBackoffMs: 3_600_000,
  });
  try {
    for (let i = 0; i < 3; i++) await pusher.report();
    await pusher.flush();
    assert.equal(buffer.size, 2, 'the first report went; the quota held back the others');
    assert.match(pusher.status().lastPush?.outcome ?? '', /plan_limit/);
    for (let i = 0; i < 2; i++) {
      offset += 61_000;
      await pusher.flush();
    }
    assert.equal(buffer.size, 0);
    assert.equal(pusher.status().lastPush?.outcome, 'ok');
    const activity = await cp.call('GET', `/v1/servers/${sc.serverId}/activity?limit=50`, { token });
    assert.equal(
      (activity.body as { kind: string; count: number }[]).reduce((n, e) => n + e.count, 0),
      7,
    );
  } finally {
    await pusher.close(100);
    await cp.stop();
    dir.dispose();
  }
});
