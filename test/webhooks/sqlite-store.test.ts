import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/sqlite.js';
import { ENDPOINT_CACHE_MAX, KNOWN_DUE_MAX, SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import { sqliteTestDatabase } from '../helpers/databases.js';
import { tempDir } from '../helpers/paths.js';
import type { AttemptResult } from '../../src/webhooks/store.js';
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

/** A file-backed store at a settable time and one endpoint subscribed to lead.captured; another connection on the same file. */
async function onFile() {
  const dir = tempDir();
  const file = join(dir.path, 'floor.db');
  const db = openDatabase(file);
  const other = openDatabase(file);
  const clock = { now: 1_000_000 };
  const store = new SqliteWebhookStore(db, () => clock.now);
  const { widget } = await store.createWidget(1 as never, 'w', { hash: 'h', preview: 'p' });
  const ep = await store.createEndpoint(widget.id, { url: 'https://example.com/h', secret: 's', events: ['lead.captured'], enabled: true });
  const enqueue = async (conversation: string, via = store) =>
    (await via.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, conversation)).deliveries[0]!;
  const result = (id: string, next: AttemptResult['next']): AttemptResult => ({
    deliveryId: id as never,
    endpointId: ep.id,
    attempt: { startedAt: clock.now, durationMs: 1, statusCode: 204, responseExcerpt: '', error: null, outcome: 'succeeded' },
    next,
    endpoint: 'success',
  });
  return {
    db,
    other,
    clock,
    store,
    widget,
    ep,
    enqueue,
    result,
    claim: async (limit: number) =>
      (await store.claimDue({ owner: 'a', ms: 60_000 }, limit, { each: 100, busy: new Map() }, { orderHoldMs: 600_000 })).map((d) => d.id),
    dispose: () => {
      db.close();
      other.close();
      dir.dispose();
    },
  };
}

test('the claim reads on from where the held deliveries end, and a delivery due again before that place is still claimed', async () => {
  const f = await onFile();
  try {
    const [a, b, c, d] = [await f.enqueue('ses_a'), await f.enqueue('ses_b'), await f.enqueue('ses_c'), await f.enqueue('ses_d')];
    assert.deepEqual(await f.claim(2), [a, b]);
    assert.deepEqual(await f.claim(1), [c], 'read on past the two held');
    // a is retried due at the same millisecond: it comes before the floor, and is claimed again.
    await f.store.recordResults('a', [f.result(a, { status: 'pending', at: f.clock.now })], 86_400_000);
    assert.deepEqual(await f.claim(10), [a, d]);
  } finally {
    f.dispose();
  }
});

test("a successor released by its predecessor's result is claimed although the claims had read past its place", async () => {
  const f = await onFile();
  try {
    const first = await f.enqueue('ses_a');
    const second = await f.enqueue('ses_a');
    const other = await f.enqueue('ses_b');
    assert.deepEqual(await f.claim(10), [first, other], 'the second waits blocked');
    await f.store.recordResults('a', [f.result(first, { status: 'succeeded' })], 86_400_000);
    assert.deepEqual(await f.claim(10), [second]);
  } finally {
    f.dispose();
  }
});

test('a delivery queued by another connection before the place the claims had reached is claimed (data_version)', async () => {
  const f = await onFile();
  try {
    const a = await f.enqueue('ses_a');
    const b = await f.enqueue('ses_b');
    assert.deepEqual(await f.claim(10), [a, b]);
    // Another process's store on the file, its clock behind: its delivery sorts before the held ones.
    const behind = new SqliteWebhookStore(f.other, () => f.clock.now - 1000);
    const early = await f.enqueue('ses_c', behind);
    assert.deepEqual(await f.claim(10), [early]);
  } finally {
    f.dispose();
  }
});

test('a claim sends to the URL and with the secret the endpoint has now, however it was changed', async () => {
  const f = await onFile();
  try {
    const urlOf = async () => (await f.store.claimDue({ owner: 'a', ms: 60_000 }, 1, { each: 100, busy: new Map() }, {}))[0]!;
    await f.enqueue('ses_a');
    assert.equal((await urlOf()).url, 'https://example.com/h');
    await f.store.updateEndpoint(f.widget.id, f.ep.id, { url: 'https://example.com/moved' });
    await f.enqueue('ses_b');
    assert.equal((await urlOf()).url, 'https://example.com/moved');
    await f.store.rotateSecret(f.widget.id, f.ep.id, 's2', f.clock.now + 1000);
    await f.enqueue('ses_c');
    assert.deepEqual([(await urlOf()).secret, (await f.store.claimDue({ owner: 'a', ms: 60_000 }, 1, { each: 100, busy: new Map() }, {})).length], ['s2', 0]);
    // Changed by another connection on the file.
    f.other.prepare('UPDATE webhook_endpoints SET url = ? WHERE id = ?').run('https://example.com/elsewhere', f.ep.id);
    await f.enqueue('ses_d');
    assert.equal((await urlOf()).url, 'https://example.com/elsewhere');
  } finally {
    f.dispose();
  }
});

test('the claim floor statements read the due index in claim order, from the place on', () => {
  for (const name of ['dueSameAny', 'dueLaterAny'] as const) {
    const db = openDatabase(':memory:');
    try {
      const sql = (new SqliteWebhookStore(db) as unknown as { q: Record<string, { source: string }> }).q[name]!.source;
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0, 0, 1) as { detail: string }[]).map((r) => r.detail).join('\n');
      assert.match(
        plan,
        name === 'dueSameAny'
          ? /INDEX webhook_deliveries_due \(next_attempt_at=\? AND seq>\?\)/
          : /INDEX webhook_deliveries_due \(next_attempt_at>\? AND next_attempt_at<\?\)/,
      );
      assert.ok(!plan.includes('TEMP B-TREE'), plan);
    } finally {
      db.close();
    }
  }
});

test('a connection keeps the sending part of at most ENDPOINT_CACHE_MAX endpoints for its claims', async () => {
  const db = openDatabase(':memory:');
  try {
    const store = new SqliteWebhookStore(db);
    const { widget } = await store.createWidget(1 as never, 'w', { hash: 'h', preview: 'p' });
    for (let i = 0; i <= ENDPOINT_CACHE_MAX; i++) {
      await store.createEndpoint(widget.id, { url: `https://example.com/${i}`, secret: 's', events: ['lead.captured'], enabled: true });
    }
    await store.enqueue(widget.id, 'lead.captured', '{}', undefined, undefined, null);
    const claimed = await store.claimDue({ owner: 'a', ms: 60_000 }, ENDPOINT_CACHE_MAX + 1, { each: 1, busy: new Map() }, {});
    assert.equal(claimed.length, ENDPOINT_CACHE_MAX + 1);
    assert.deepEqual(new Set(claimed.map((d) => d.url)).size, ENDPOINT_CACHE_MAX + 1, 'each delivery carries its own endpoint');
    const cached = (store as unknown as { cursor: { endpoints: Map<string, unknown> } }).cursor.endpoints;
    assert.ok(cached.size <= ENDPOINT_CACHE_MAX, `${cached.size} cached`);
  } finally {
    db.close();
  }
});

test("the order index is sought by conversation and endpoint, so an event's deliveries to all its endpoints share its pages", () => {
  const db = openDatabase(':memory:');
  try {
    const q = (new SqliteWebhookStore(db) as unknown as { q: Record<string, { source: string }> }).q;
    const columns = (db.prepare(`SELECT name FROM pragma_index_info('webhook_deliveries_order')`).all() as { name: string }[]).map((c) => c.name);
    assert.deepEqual(columns, ['order_key', 'endpoint_id', 'seq']);
    for (const name of ['insertDelivery', 'nextUnfinished', 'blocker']) {
      const sql = q[name]!.source;
      const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 'x');
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
      assert.match(plan, /INDEX webhook_deliveries_order \(order_key=\? AND endpoint_id=\?/, `${name}: ${plan}`);
    }
  } finally {
    db.close();
  }
});

/** Two endpoints on one file: A's deliveries first, then B's; a claim for A only while B is at its limit, and the reverse. */
async function twoEndpoints() {
  const f = await onFile();
  const b = await f.store.createEndpoint(f.widget.id, { url: 'https://example.com/b', secret: 's', events: [], enabled: true });
  const onB = async (conversation: string) => {
    await f.store.updateEndpoint(f.widget.id, b.id, { events: ['lead.captured'] });
    await f.store.updateEndpoint(f.widget.id, f.ep.id, { events: [] });
    const id = await f.enqueue(conversation);
    await f.store.updateEndpoint(f.widget.id, f.ep.id, { events: ['lead.captured'] });
    await f.store.updateEndpoint(f.widget.id, b.id, { events: [] });
    return id;
  };
  const known = () => (f.store as unknown as { cursor: { knownSeqs: Set<number> } }).cursor.knownSeqs.size;
  /** Claims with `full` at its limit of one (the other endpoint may take up to 100). */
  const claimBeside = async (full: string, limit = 100, reachPast = false) =>
    (await f.store.claimDue({ owner: 'a', ms: 60_000 }, limit, { each: 1, busy: new Map([[full, 1]]) }, { orderHoldMs: 600_000, reachPast })).map((d) => d.id);
  return { ...f, b, onB, known, claimBeside };
}

test('a claim remembers the due rows of an endpoint at its limit and takes them once it has room, without reading them again', async () => {
  const f = await twoEndpoints();
  try {
    const a1 = await f.enqueue('ses_1');
    const b1 = await f.onB('ses_2');
    const a2 = await f.enqueue('ses_3');
    const b2 = await f.onB('ses_4');
    // B at its limit: A's first is taken (each: 1), A's second and B's are remembered, and the floor passes them all.
    assert.deepEqual(await f.claimBeside(f.b.id), [a1]);
    assert.equal(f.known(), 3);
    // Now A at its limit: B's rows come from memory, oldest first (each: 1 takes one).
    assert.deepEqual(await f.claimBeside(f.ep.id), [b1]);
    assert.deepEqual(await f.claimBeside(f.ep.id), [b2]);
    assert.equal(f.known(), 1, "A's second is still remembered");
    // Nothing is read twice or lost: a row the floor has passed is claimed from memory once.
    assert.deepEqual(await f.claimBeside(f.b.id), [a2]);
    assert.equal(f.known(), 0);
    assert.deepEqual(await f.claimBeside(f.b.id), []);
  } finally {
    f.dispose();
  }
});

test("one batch of results finishing a conversation's delivery and the one let go past the order bound releases the next once", async () => {
  const f = await onFile();
  try {
    const [first, second, other] = [await f.enqueue('ses_a'), await f.enqueue('ses_a'), await f.enqueue('ses_b')];
    const claim = async (hold: number) =>
      (await f.store.claimDue({ owner: 'a', ms: 60_000 }, 10, { each: 100, busy: new Map() }, { orderHoldMs: hold })).map((d) => d.id);
    assert.deepEqual(await claim(600_000), [first, other]);
    f.clock.now += 1000;
    const third = await f.enqueue('ses_a');
    // The second has waited the bound: let go while the first is in flight (the third, queued later, waits for both).
    assert.deepEqual(await claim(500), [second]);
    await f.store.recordResults(
      'a',
      [f.result(first, { status: 'succeeded' }), f.result(second, { status: 'succeeded' }), f.result(other, { status: 'succeeded' })],
      86_400_000,
    );
    assert.deepEqual(await claim(600_000), [third]);
    assert.deepEqual(await claim(600_000), []);
    const blocked = f.db.prepare('SELECT blocked FROM webhook_deliveries WHERE id = ?').pluck();
    assert.equal(blocked.get(third), 0);
  } finally {
    f.dispose();
  }
});

test('disabling an endpoint drops the rows remembered for it: its failed deliveries are never claimed', async () => {
  const f = await twoEndpoints();
  try {
    await f.enqueue('ses_1');
    const b1 = await f.onB('ses_2');
    await f.enqueue('ses_3');
    assert.equal((await f.claimBeside(f.b.id)).length, 1);
    assert.equal(f.known(), 2);
    await f.store.updateEndpoint(f.widget.id, f.ep.id, { enabled: false });
    assert.equal(f.known(), 0);
    await f.store.updateEndpoint(f.widget.id, f.ep.id, { enabled: true });
    assert.deepEqual(await f.claimBeside('none'), [b1], "A's remembered delivery failed with the endpoint");
  } finally {
    f.dispose();
  }
});

test('a connection remembers at most KNOWN_DUE_MAX due rows; past them a claim that reaches past still finds the rows behind', async () => {
  const f = await twoEndpoints();
  try {
    // A's held first delivery, then more of A's than can be remembered (by more than a claim reads at once), then one of B's behind them all.
    f.db.transaction(() => {
      for (let i = 0; i <= KNOWN_DUE_MAX + 300; i++) f.store.enqueueNow(f.widget.id, 'lead.captured', '{}', undefined, undefined, `ses_a${i}`);
    })();
    const behind = await f.onB('ses_b');
    assert.equal((await f.claimBeside(f.b.id, 1)).length, 1, 'one of A');
    // A at its limit, B with room: the claim remembers KNOWN_DUE_MAX of A's and stops there.
    assert.deepEqual(await f.claimBeside(f.ep.id), []);
    assert.equal(f.known(), KNOWN_DUE_MAX);
    assert.deepEqual(await f.claimBeside(f.ep.id, 100, true), [behind], 'reaching past the rows not remembered');
    assert.equal(f.known(), KNOWN_DUE_MAX);
  } finally {
    f.dispose();
  }
});

test("the breaker state a connection keeps is read again after another connection's commit", async () => {
  const f = await onFile();
  try {
    const [a, b] = [await f.enqueue('ses_a'), await f.enqueue('ses_b')];
    assert.deepEqual(await f.claim(10), [a, b]);
    const retry = (id: string): AttemptResult => ({ ...f.result(id, { status: 'pending', at: f.clock.now + 5000 }), endpoint: 'failure' });
    await f.store.recordResults('a', [retry(a)], 86_400_000);
    const status = (id: string) => (f.db.prepare('SELECT status FROM webhook_deliveries WHERE id = ?').get(id) as { status: string }).status;
    assert.equal(status(a), 'pending', 'kept for a retry while the endpoint is enabled');
    f.other.prepare('UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?').run(f.ep.id);
    await f.store.recordResults('a', [retry(b)], 86_400_000);
    assert.equal(status(b), 'failed', 'no retry once the endpoint is disabled, though this connection read it enabled');
  } finally {
    f.dispose();
  }
});
