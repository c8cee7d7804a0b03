import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { tempDir } from '../helpers/paths.js';
import { call, REPLICA_ADMIN as ADMIN, startReplica, type Replica } from '../helpers/replicas.js';
import { startReceiver } from './receiver.js';

async function serve(db: string): Promise<Replica> {
  return startReplica(`sqlite:${db}`, dirname(db), ['--allow-private-webhooks']);
}

test('kill -9 with deliveries in flight and pending, then a restart on the same DB: every event is delivered, ids stable', async () => {
  const dir = tempDir();
  const db = join(dir.path, 'crash.db');
  // Phase 1: the receiver accepts requests and never answers, so deliveries stay in flight.
  const rx = await startReceiver(() => ({ status: 200, hang: true }));
  let first = await serve(db);
  try {
    const tenant = await call(first.url, 'POST', '/v1/admin/tenants', ADMIN, { name: 'crash', plan: 'pro' });
    await call(first.url, 'POST', `/v1/admin/tenants/${tenant.id}/users`, ADMIN, { email: 'c@crash.test', password: 'long enough' });
    const { token } = await call(first.url, 'POST', '/v1/auth/login', null, { email: 'c@crash.test', password: 'long enough' });
    const widget = await call(first.url, 'POST', '/v1/widgets', token, { name: 'w' });
    await call(first.url, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: rx.url, events: ['conversation.started'] });
    const total = 20;
    for (let i = 0; i < total; i++) {
      const r = await call(first.url, 'POST', `/v1/widgets/${widget.id}/events`, widget.key, {
        event: 'conversation.started',
        data: { conversation_id: `ses_${i}` },
      });
      assert.equal(r.deliveries, 1);
    }
    await rx.waitFor(4);
    const heldIds = rx.received.map((r) => String(r.headers['x-service-delivery']));
    await first.kill();

    // Phase 2: the receiver answers 200; a new process on the same file must deliver all twenty.
    const before = rx.received.length;
    rx.setResponder(() => ({ status: 200 }));
    rx.releaseHanging();
    const delivered = () => new Set(rx.received.slice(before).map((r) => JSON.parse(r.body).data.conversation_id as string));
    first = await serve(db);
    await rx.waitUntil(() => delivered().size === total);
    assert.equal(delivered().size, total);
    const after = new Set(rx.received.slice(before).map((r) => String(r.headers['x-service-delivery'])));
    for (const id of heldIds) assert.ok(after.has(id), `held delivery ${id} retried under the same id`);

    const [ep] = await call(first.url, 'GET', `/v1/widgets/${widget.id}/webhooks`, token);
    let page = await call(first.url, 'GET', `/v1/widgets/${widget.id}/webhooks/${ep.id}/deliveries?limit=100`, token);
    for (let i = 0; i < 50 && page.data.some((d: any) => d.status !== 'succeeded'); i++) {
      await new Promise((r) => setTimeout(r, 20)); // the last results are recorded just after the receiver answers
      page = await call(first.url, 'GET', `/v1/widgets/${widget.id}/webhooks/${ep.id}/deliveries?limit=100`, token);
    }
    assert.equal(page.data.length, total);
    assert.ok(page.data.every((d: any) => d.status === 'succeeded'));
  } finally {
    await first.kill();
    await rx.close();
    dir.dispose();
  }
});

test('stop() aborts sends past its grace period and releases their deliveries; the next start() delivers them again under the same id', async () => {
  const rx = await startReceiver(() => ({ status: 200, hang: true }));
  const { webhookServer, LEAD } = await import('./setup.js');
  const { s, widgetId, addEndpoint } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['lead.captured'] });
    await s.webhooks.service.emit(widgetId, 'lead.captured', LEAD);
    await rx.waitFor(1);
    await s.webhooks.dispatcher.stop(20);
    const [held] = (await s.webhooks.service.store.listDeliveries(ep.id as never, { limit: 1, before: null })).data;
    assert.equal(held!.status, 'pending', 'released, not left leased until the lease lapses');
    rx.setResponder(() => ({ status: 200 }));
    await s.webhooks.dispatcher.start();
    await rx.waitFor(2);
    await s.webhooks.dispatcher.runDue();
    const [done] = (await s.webhooks.service.store.listDeliveries(ep.id as never, { limit: 1, before: null })).data;
    assert.equal(done!.status, 'succeeded');
    assert.equal(rx.received[1]!.headers['x-service-delivery'], held!.id);
  } finally {
    rx.releaseHanging();
    await s.stop();
    await rx.close();
  }
});
