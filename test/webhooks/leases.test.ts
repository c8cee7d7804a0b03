import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/sqlite.js';
import { createSender } from '../../src/net/sender.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { DELIVERY_LEASE_MS, DELIVERY_TIMEOUT_MS } from '../../src/webhooks/schedule.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import type { WebhookStore } from '../../src/webhooks/store.js';
import type { TenantId } from '../../src/identity/types.js';
import type { EndpointId, WidgetId } from '../../src/webhooks/types.js';
import { tempDir } from '../helpers/paths.js';
import { startReceiver } from './receiver.js';
import { testClock } from './setup.js';

/** These tests put numbered raw bodies straight into the outbox: not event bodies, so not checked against the catalogue. */
const RAW_BODIES = { schema: false };

async function outbox(now: () => number) {
  const dir = tempDir();
  const db = openDatabase(join(dir.path, 'leases.db'));
  const store = new SqliteWebhookStore(db, now);
  const { widget } = await store.createWidget(1 as TenantId, 'w', { hash: 'h'.repeat(64), preview: 'p' });
  return {
    store,
    db,
    widget: widget.id,
    close() {
      db.close();
      dir.dispose();
    },
  };
}

async function addEndpoint(store: WebhookStore, widget: WidgetId, url: string): Promise<EndpointId> {
  return (await store.createEndpoint(widget, { url, secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64'), events: ['lead.captured'], enabled: true })).id;
}

test('the delivery lease outlasts the delivery timeout', () => {
  assert.ok(DELIVERY_LEASE_MS > DELIVERY_TIMEOUT_MS);
  assert.throws(
    () =>
      new Dispatcher({
        store: {} as WebhookStore,
        send: async () => ({ kind: 'error', error: 'x', durationMs: 0 }),
        allowPrivate: true,
        timeoutMs: 5000,
        leaseMs: 5000,
      }),
    /leaseMs must be an integer above timeoutMs/,
  );
});

test('two dispatchers on one outbox deliver every delivery exactly once', async () => {
  const rx = await startReceiver(undefined, RAW_BODIES);
  const o = await outbox(Date.now);
  const sender = createSender();
  const make = (owner: string) => new Dispatcher({ store: o.store, send: sender.send, allowPrivate: true, owner, concurrency: 8, perEndpoint: 8 });
  const [a, b] = [make('a'), make('b')];
  try {
    await addEndpoint(o.store, o.widget, rx.url);
    const total = 200;
    const ids = new Set<string>();
    for (let i = 0; i < total; i++) for (const id of (await o.store.enqueue(o.widget, 'lead.captured', `{"i":${i}}`)).deliveries) ids.add(id);
    await Promise.all([a.runDue(), b.runDue()]);
    const seen = rx.received.map((r) => String(r.headers['x-service-delivery']));
    assert.equal(seen.length, total, 'no delivery sent twice');
    assert.deepEqual(new Set(seen), ids);
  } finally {
    sender.close();
    await rx.close();
    o.close();
  }
});

test('a dispatcher that stops answering keeps its deliveries until the lease lapses; then another delivers them and the late results are dropped', async () => {
  const held = 3;
  const rx = await startReceiver((_r, index) => (index < held ? { status: 200, hang: true } : { status: 200, body: 'ok' }), RAW_BODIES);
  const clock = testClock();
  const o = await outbox(clock.now);
  const sender = createSender();
  const stuck = new Dispatcher({ store: o.store, send: sender.send, allowPrivate: true, owner: 'stuck', now: clock.now, concurrency: held });
  const rescuer = new Dispatcher({ store: o.store, send: sender.send, allowPrivate: true, owner: 'rescuer', now: clock.now });
  try {
    const ep = await addEndpoint(o.store, o.widget, rx.url);
    for (let i = 0; i < held; i++) await o.store.enqueue(o.widget, 'lead.captured', `{"i":${i}}`);
    await stuck.start();
    await rx.waitFor(held);
    assert.equal(await rescuer.runDue(), 0, 'nothing to claim while the leases run');
    clock.advance(DELIVERY_LEASE_MS);
    assert.equal(await rescuer.runDue(), held);
    const first = rx.received.slice(0, held).map((r) => r.headers['x-service-delivery']);
    const second = rx.received.slice(held).map((r) => r.headers['x-service-delivery']);
    assert.deepEqual(new Set(second), new Set(first), 'the same delivery ids, sent again');
    rx.releaseHanging();
    await stuck.stop();
    const log = await o.store.listDeliveries(ep, { limit: 10, before: null });
    for (const d of log.data) {
      const full = await o.store.getDelivery(ep, d.id);
      assert.deepEqual([full?.status, full?.attempts, full?.attemptLog.length], ['succeeded', 1, 1], "only the holder's attempt is recorded");
    }
  } finally {
    await stuck.stop(0);
    sender.close();
    await rx.close();
    o.close();
  }
});

test('a dispatcher whose own lease lapses mid-send takes the delivery back but does not send it again', async () => {
  const rx = await startReceiver(() => ({ status: 200, hang: true }), RAW_BODIES);
  const clock = testClock();
  const o = await outbox(clock.now);
  // The real store; every delivery its claims hand out is counted (a lapsed claim is handed out again).
  const handedOut: string[] = [];
  const store: WebhookStore = Object.create(o.store, {
    claimDue: {
      value: async (...args: Parameters<WebhookStore['claimDue']>) => {
        const got = await o.store.claimDue(...args);
        handedOut.push(...got.map((d) => d.id));
        return got;
      },
    },
  });
  const sender = createSender();
  const d = new Dispatcher({ store, send: sender.send, allowPrivate: true, owner: 'slow', now: clock.now, pollMs: 1 });
  try {
    const ep = await addEndpoint(o.store, o.widget, rx.url);
    const [id] = (await o.store.enqueue(o.widget, 'lead.captured', '{}')).deliveries;
    await d.start();
    await rx.waitFor(1);
    assert.deepEqual(handedOut, [id]);
    clock.advance(DELIVERY_LEASE_MS);
    while (handedOut.length < 2) await new Promise((r) => setImmediate(r)); // the next poll claims the lapsed lease again
    assert.deepEqual(handedOut, [id, id]);
    rx.releaseHanging();
    await d.stop();
    assert.equal(rx.received.length, 1, 'sent once');
    const r = await o.store.getDelivery(ep, id!);
    assert.deepEqual([r?.status, r?.attemptLog.length], ['succeeded', 1]);
  } finally {
    await d.stop(0);
    sender.close();
    await rx.close();
    o.close();
  }
});

test('results that arrive while a batch is being written are written too, with no later attempt to carry them', { timeout: 60_000 }, async () => {
  const rx = await startReceiver((_r, index) => (index === 0 ? { status: 200 } : { status: 200, hang: true }), RAW_BODIES);
  const o = await outbox(Date.now);
  // The real store, its first write of results held until the test lets it go.
  let entered = false;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const store: WebhookStore = Object.create(o.store, {
    recordResults: {
      value: async (...args: Parameters<WebhookStore['recordResults']>) => {
        if (!entered) {
          entered = true;
          await gate;
        }
        return o.store.recordResults(...args);
      },
    },
  });
  const sender = createSender();
  const d = new Dispatcher({ store, send: sender.send, allowPrivate: true });
  try {
    const ep = await addEndpoint(o.store, o.widget, rx.url);
    const ids = [
      ...(await o.store.enqueue(o.widget, 'lead.captured', '{"n":1}')).deliveries,
      ...(await o.store.enqueue(o.widget, 'lead.captured', '{"n":2}')).deliveries,
    ];
    await d.start();
    await rx.waitFor(2);
    while (!entered) await new Promise((r) => setImmediate(r));
    rx.releaseHanging();
    while (d.stats.inFlight > 0) await new Promise((r) => setImmediate(r));
    open();
    const done = async () => (await Promise.all(ids.map((id) => o.store.getDelivery(ep, id)))).every((r) => r?.status === 'succeeded');
    while (!(await done())) await new Promise((r) => setImmediate(r));
    assert.equal(rx.received.length, 2);
  } finally {
    open();
    await d.stop(0);
    sender.close();
    await rx.close();
    o.close();
  }
});
