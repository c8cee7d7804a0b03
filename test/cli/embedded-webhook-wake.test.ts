import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startEmbedded, type Embedded } from '../../src/embedded/start.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { startReceiver } from '../webhooks/receiver.js';
import { call } from '../helpers/replicas.js';

const ADMIN = 'bsa_wake_test_admin';
/** Longer than the test may run: a worker that only polled would never deliver. */
const NEVER_MS = 3_600_000;

test('an event posted on an api replica wakes a worker on PostgreSQL at once: it delivers without polling', { timeout: 60_000 }, async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  const rx = await startReceiver();
  const common = {
    port: 0,
    database: { kind: 'postgres', url } as const,
    adminToken: ADMIN,
    allowPrivateWebhooks: true,
    dataDir: join(dir.path, 'data'),
    webhooks: { dispatcher: { pollMs: NEVER_MS } },
  };
  const started: Embedded[] = [];
  try {
    const api = await startEmbedded({ ...common, role: 'api' });
    started.push(api);
    // The worker looks once as it starts, before anything is queued; after that only a notification can wake it.
    started.push(await startEmbedded({ ...common, role: 'worker' }));
    const tenant = await call(api.url, 'POST', '/v1/admin/tenants', ADMIN, { name: 'wake', plan: 'pro' });
    await call(api.url, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'w@wake.test', password: 'long enough' });
    const { token } = await call(api.url, 'POST', '/v1/auth/login', null, { email: 'w@wake.test', password: 'long enough' });
    const widget = await call(api.url, 'POST', '/v1/widgets', token, { name: 'wake' });
    await call(api.url, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: rx.url, events: ['escalation.triggered'] });
    for (let i = 0; i < 3; i++) {
      const accepted = await call(api.url, 'POST', `/v1/widgets/${widget.id}/events`, widget.key, {
        event: 'escalation.triggered',
        data: { conversation_id: `ses_${i}` },
      });
      assert.equal(accepted.deliveries, 1);
      await rx.waitFor(i + 1);
    }
    assert.deepEqual(
      rx.received.map((r) => JSON.parse(r.body).data.conversation_id),
      ['ses_0', 'ses_1', 'ses_2'],
    );
  } finally {
    for (const s of started.reverse()) await s.close();
    await rx.close();
    dir.dispose();
  }
});
