import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLinkedSidecar } from '../../../src/sidecar/link/control-plane-link.js';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { tempDir } from '../../helpers/paths.js';
import { serverWithKey } from '../../controlplane/helpers.js';

test('a sidecar on a control plane adds its config pulls, telemetry sends and buffer to /metrics', async () => {
  const cp = await startTestServer();
  const dir = tempDir();
  const { token } = await tenantSession(cp);
  const sc = await serverWithKey(cp, token);
  const { sidecar, pusher } = await startLinkedSidecar(
    { url: cp.url, serverId: String(sc.serverId), serverKey: sc.key, stateDir: dir.path, pollMs: 3_600_000, telemetryMs: 3_600_000 },
    { host: '127.0.0.1', port: 0, workers: 0 },
  );
  try {
    await pusher.report();
    await pusher.flush();
    const body = await (await fetch(`${sidecar.url}/metrics`)).text();
    assert.match(body, /^brainstem_sidecar_config_pulls_total\{outcome="ok"\} 1$/m);
    assert.match(body, /^brainstem_sidecar_config_pulls_total\{outcome="error"\} 0$/m);
    assert.match(body, /^brainstem_sidecar_telemetry_reports_total\{outcome="ok"\} [1-9]$/m);
    assert.match(body, /^brainstem_sidecar_telemetry_buffered 0$/m);
  } finally {
    await sidecar.close();
    await cp.stop();
    dir.dispose();
  }
});
