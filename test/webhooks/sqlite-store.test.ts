import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../src/store/sqlite.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import { sqliteTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, webhookStoreContract } from './store-contract.js';

webhookStoreContract('SQLite', onTestDatabase(sqliteTestDatabase, true));

/** The claim statement `name` is planned on `index`, read in claim order with no sort. */
function assertPlannedOn(name: 'due' | 'heldPast', index: string): void {
  const db = openDatabase(':memory:');
  try {
    // The statement itself, not a copy of its text that could drift from it.
    const sql = (new SqliteWebhookStore(db) as unknown as { q: Record<string, { source: string }> }).q[name]!.source;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0, '[]', 1) as { detail: string }[]).map((r) => r.detail);
    assert.ok(
      plan.some((detail) => new RegExp(`USING (COVERING )?INDEX ${index}\\b`).test(detail)),
      plan.join('\n'),
    );
    assert.ok(!plan.some((detail) => detail.includes('TEMP B-TREE')), plan.join('\n'));
  } finally {
    db.close();
  }
}

/** A store on `db` at a settable time, one endpoint, and two deliveries of one conversation queued in order. */
async function twoInOrder(db: ReturnType<typeof openDatabase>) {
  const clock = { now: 1_000_000 };
  const store = new SqliteWebhookStore(db, () => clock.now);
  const { widget } = await store.createWidget(1 as never, 'w', { hash: 'h', preview: 'p' });
  const ep = await store.createEndpoint(widget.id, { url: 'https://example.com/h', secret: 's', events: ['lead.captured'], enabled: true });
  const [first] = (await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, 'ses_a')).deliveries;
  const [second] = (await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, 'ses_a')).deliveries;
  return { clock, store, widget, ep, first, second };
}

test("the claim's due query reads the index in claim order: no sort of every delivery due in the same millisecond", () => {
  assertPlannedOn('due', 'webhook_deliveries_due');
});

test('a delivery queued behind an unfinished one of its conversation stays out of the due index until its predecessor finishes', async () => {
  const db = openDatabase(':memory:');
  try {
    const { clock, store, widget, ep, first, second } = await twoInOrder(db);
    const [other] = (await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, 'ses_b')).deliveries;
    const blocked = (id: string) => (db.prepare('SELECT blocked FROM webhook_deliveries WHERE id = ?').get(id) as { blocked: number }).blocked;
    assert.deepEqual([blocked(first!), blocked(second!), blocked(other!)], [0, 1, 0]);
    const lease = { owner: 'a', ms: 60_000 };
    const room = { each: 10, busy: new Map<string, number>() };
    const claimed = await store.claimDue(lease, 10, room, { orderHoldMs: 600_000 });
    assert.deepEqual(claimed.map((d) => d.id).sort(), [first, other].sort());
    const ok = (id: string) => ({
      deliveryId: id as never,
      endpointId: ep.id,
      attempt: { startedAt: clock.now, durationMs: 1, statusCode: 204, responseExcerpt: '', error: null, outcome: 'succeeded' as const },
      next: { status: 'succeeded' as const },
      endpoint: 'success' as const,
    });
    // A retry keeps the conversation unfinished: the successor stays blocked.
    await store.recordResults('a', [{ ...ok(first!), next: { status: 'pending', at: clock.now + 5000 }, endpoint: 'failure' }], 86_400_000);
    assert.equal(blocked(second!), 1);
    clock.now += 5000;
    const retry = await store.claimDue(lease, 10, room, { orderHoldMs: 600_000 });
    assert.deepEqual(
      retry.map((d) => d.id),
      [first],
    );
    await store.recordResults('a', [ok(first!)], 86_400_000);
    assert.equal(blocked(second!), 0, "the predecessor's result releases it");
    assert.deepEqual(
      (await store.claimDue(lease, 10, room, { orderHoldMs: 600_000 })).map((d) => d.id),
      [second],
    );
    assert.equal(await store.nextDueAt(), null);
  } finally {
    db.close();
  }
});

test('blocked deliveries are found through their own index, once past the order bound or with order off', () => {
  assertPlannedOn('heldPast', 'webhook_deliveries_blocked');
});

test('a failed delivery retried or recovered goes before the later ones of its conversation again', async () => {
  const db = openDatabase(':memory:');
  try {
    const { clock, store, ep, first, second } = await twoInOrder(db);
    const lease = { owner: 'a', ms: 60_000 };
    const room = { each: 10, busy: new Map<string, number>() };
    const hold = { orderHoldMs: 600_000 };
    const gaveUp = (id: string) => ({
      deliveryId: id as never,
      endpointId: ep.id,
      attempt: { startedAt: clock.now, durationMs: 1, statusCode: 500, responseExcerpt: '', error: 'HTTP 500', outcome: 'failed' as const },
      next: { status: 'failed' as const },
      endpoint: 'failure' as const,
    });
    for (const again of [(id: string) => store.retryDelivery(ep.id, id as never), () => store.recoverFailed(ep.id, 0)]) {
      assert.deepEqual(
        (await store.claimDue(lease, 10, room, hold)).map((d) => d.id),
        [first],
      );
      await store.recordResults('a', [gaveUp(first!)], 86_400_000);
      assert.equal((await store.getDelivery(ep.id, second!))?.status, 'pending', 'the first gave up: the second is free to go');
      await again(first!);
      clock.now += 1;
      assert.deepEqual(
        (await store.claimDue(lease, 10, room, hold)).map((d) => d.id),
        [first],
        'requeued, the first goes before the second again',
      );
      await store.recordResults('a', [gaveUp(first!)], 86_400_000);
      await again(first!);
      clock.now += 1;
    }
  } finally {
    db.close();
  }
});

test('rows copied in without their blocked flag (migrate-store) are blocked again when the dispatcher starts', async () => {
  const db = openDatabase(':memory:');
  try {
    const store = new SqliteWebhookStore(db);
    const { widget } = await store.createWidget(1 as never, 'w', { hash: 'h', preview: 'p' });
    await store.createEndpoint(widget.id, { url: 'https://example.com/h', secret: 's', events: ['lead.captured'], enabled: true });
    const [first] = (await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, 'ses_a')).deliveries;
    const [second] = (await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, 'ses_a')).deliveries;
    db.prepare('UPDATE webhook_deliveries SET blocked = 0').run();
    await store.requeueInflight();
    const blocked = (id: string) => (db.prepare('SELECT blocked FROM webhook_deliveries WHERE id = ?').get(id) as { blocked: number }).blocked;
    assert.deepEqual([blocked(first!), blocked(second!)], [0, 1]);
    assert.deepEqual(
      (await store.claimDue({ owner: 'a', ms: 60_000 }, 10, { each: 10, busy: new Map() }, { orderHoldMs: 600_000 })).map((d) => d.id),
      [first],
    );
  } finally {
    db.close();
  }
});
