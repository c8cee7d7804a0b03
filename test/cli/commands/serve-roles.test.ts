import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { runCli, tempDir } from '../../helpers/paths.js';
import { freshDatabase } from '../../helpers/postgres.js';
import { ADMIN, call, spawnCli, stop, waitFor } from '../../stack/helpers.js';
import { startReceiver } from '../../webhooks/receiver.js';

test('serve --role: an api replica answers routes and runs no outbox; a worker answers /health only and delivers what the api queued, once', async () => {
  const dir = tempDir();
  const url = await freshDatabase();
  const rx = await startReceiver();
  const common = ['--addr', '127.0.0.1:0', '--database', url, '--data', join(dir.path, 'data'), '--allow-private-webhooks'];
  const api = await spawnCli(['serve', ...common, '--role', 'api'], /listening on (http:\/\/\S+) .*role api/);
  let worker: Awaited<ReturnType<typeof spawnCli>> | undefined;
  try {
    const base = api.match[1]!;
    const tenant = await call(base, 'POST', '/v1/admin/tenants', { token: ADMIN, body: { name: 'roles', plan: 'pro' } });
    await call(base, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, { token: ADMIN, body: { email: 'r@roles.test', password: 'long enough' } });
    const token = (await call(base, 'POST', '/v1/auth/login', { body: { email: 'r@roles.test', password: 'long enough' } })).body.token as string;
    const widget = (await call(base, 'POST', '/v1/widgets', { token, body: { name: 'w' } })).body;
    const endpoint = await call(base, 'POST', `/v1/widgets/${widget.id}/webhooks`, { token, body: { url: rx.url, events: ['conversation.started'] } });
    assert.equal(endpoint.status, 201);
    const queued = await call(base, 'POST', `/v1/widgets/${widget.id}/events`, {
      token: widget.key,
      body: { event: 'conversation.started', data: { conversation_id: 'ses_roles' } },
    });
    assert.equal(queued.status, 202);

    worker = await spawnCli(['serve', ...common, '--role', 'worker'], /listening on (http:\/\/\S+) .*role worker/);
    const workerUrl = worker.match[1]!;
    assert.equal((await call(workerUrl, 'GET', '/health')).status, 200);
    assert.equal((await call(workerUrl, 'GET', '/v1/servers', { token })).status, 404);
    assert.equal((await call(workerUrl, 'POST', '/v1/auth/login', { body: { email: 'r@roles.test', password: 'long enough' } })).status, 404);

    await rx.waitFor(1);
    assert.equal(JSON.parse(rx.received[0]!.body).data.conversation_id, 'ses_roles');
    const log = await waitFor('the delivery recorded as succeeded', async () => {
      const page = await call(base, 'GET', `/v1/widgets/${widget.id}/webhooks/${endpoint.body.id}/deliveries`, { token });
      return page.body.data[0]?.status === 'succeeded' ? page.body.data : undefined;
    });
    assert.equal(log.length, 1);
    assert.equal(rx.received.length, 1);
  } finally {
    if (worker) await stop(worker.child);
    await stop(api.child);
    await rx.close();
    dir.dispose();
  }
});

test('serve --role with anything but api, worker or all exits 1 naming the roles', async () => {
  const r = await runCli(['serve', '--addr', '127.0.0.1:0', '--role', 'batch']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--role must be one of api, worker, all, got "batch"/);
});

// A second serve on one SQLite file took back the first one's renders in flight at its start.
test('serve on SQLite: one process runs the background jobs (a second all or worker exits 1 naming the holder); api processes beside it take no lock', async () => {
  const dir = tempDir();
  const common = ['--addr', '127.0.0.1:0', '--db', join(dir.path, 'one.db'), '--data', join(dir.path, 'data')];
  const first = await spawnCli(['serve', ...common], /listening on (http:\/\/\S+)/);
  let api: Awaited<ReturnType<typeof spawnCli>> | undefined;
  try {
    for (const role of ['all', 'worker']) {
      const second = await runCli(['serve', ...common, '--role', role], { BRAINSTEM_LOG: 'warn' });
      assert.equal(second.code, 1);
      assert.match(
        second.stderr.trim(),
        new RegExp(`^brainstem: \\S+one\\.db is in use by another brainstem serve \\(pid ${first.child.pid}\\); stop it, or give this one another --db$`),
      );
    }
    api = await spawnCli(['serve', ...common, '--role', 'api'], /listening on (http:\/\/\S+) .*role api/);
    assert.equal((await call(api.match[1]!, 'GET', '/health')).status, 200);
  } finally {
    if (api) await stop(api.child);
    await stop(first.child);
  }
  // Stopped, it leaves no lock behind: the next one starts.
  const again = await spawnCli(['serve', ...common, '--role', 'worker'], /listening on (http:\/\/\S+) .*role worker/);
  await stop(again.child);
  dir.dispose();
});
