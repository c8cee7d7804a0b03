import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { serverWithKey } from '../controlplane/helpers.js';
import { startLinkedSidecar } from '../../src/sidecar/link/control-plane-link.js';
import { RecordingLogger, applied } from './helpers.js';

test('with replicas on PostgreSQL, a publish through one replica reaches the streams held by another (LISTEN/NOTIFY), and both sign with one key', async () => {
  const url = await freshDatabase();
  const a = await startTestServer({ database: { kind: 'postgres', url } });
  const b = await startTestServer({ database: { kind: 'postgres', url } });
  const dir = tempDir();
  const logger = new RecordingLogger();
  let linked: Awaited<ReturnType<typeof startLinkedSidecar>> | null = null;
  try {
    const { token } = await tenantSession(a);
    const sc = await serverWithKey(a, token);
    const [ka, kb] = [(await a.call('GET', '/v1/config/keys')).body.keys, (await b.call('GET', '/v1/config/keys')).body.keys];
    assert.deepEqual(ka, kb);
    assert.equal(ka.length, 1);
    linked = await startLinkedSidecar(
      { url: a.url, serverId: String(sc.serverId), serverKey: sc.key, stateDir: dir.path, pollMs: 3_600_000, telemetryMs: 3_600_000 },
      { host: '127.0.0.1', port: 0, workers: 0, logger },
    );
    while (a.controlPlane.streams.count() === 0) await new Promise((r) => setImmediate(r));
    const head = (await b.call('GET', `/v1/servers/${sc.serverId}/config`, { token })).body;
    const pushed = logger.next(applied(2));
    const put = await b.call('PUT', `/v1/servers/${sc.serverId}/config`, {
      token,
      body: { ...head, speech: { ...head.speech, limits: { ...head.speech.limits, per_hour: 3 } } },
    });
    assert.equal(put.status, 200);
    await pushed;
    const rolled = logger.next(applied(3));
    assert.equal((await b.call('POST', `/v1/servers/${sc.serverId}/config/rollback`, { token, body: { version: 1 } })).status, 200);
    await rolled;
  } finally {
    await linked?.sidecar.close();
    await a.stop();
    await b.stop();
    dir.dispose();
  }
});
