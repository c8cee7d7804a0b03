import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { TenantId } from '../../src/identity/types.js';
import { openWebhookStore } from '../../src/webhooks/open-store.js';
import { ENQUEUE_BATCH_MAX } from '../../src/webhooks/postgres-store.js';
import type { AttemptResult, WebhookStore } from '../../src/webhooks/store.js';
import type { DueDelivery, WidgetId } from '../../src/webhooks/types.js';
import { postgresTestDatabase } from '../helpers/databases.js';

/**
 * The PostgreSQL outbox writes in batches: many attempt results in one statement per flush,
 * many events in one statement per intake batch. A batch that fails must leave nothing half
 * written, and writing it again must record each item once.
 */

const START = 1_700_000_000_000;
const A = { owner: 'host-a/1/aaaa', ms: 60_000 };
const B = { owner: 'host-b/2/bbbb', ms: 60_000 };
const ROOM = { each: 100, busy: new Map<string, number>() };

interface Fixture {
  store: WebhookStore;
  sql: pg.Client;
  clock: { now: () => number; advance(ms: number): void };
  widget: WidgetId;
}

async function withOutbox(endpointCount: number, body: (f: Fixture) => Promise<void>): Promise<void> {
  let t = START;
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  const db = await postgresTestDatabase();
  const sql = new pg.Client({ connectionString: db.location.kind === 'postgres' ? db.location.url : '' });
  await sql.connect();
  try {
    const store = await openWebhookStore(db.database, clock.now);
    const { widget } = await store.createWidget(1 as TenantId, 'w', { hash: 'h'.repeat(64), preview: 'bwk_abcd…' });
    for (let i = 0; i < endpointCount; i++)
      await store.createEndpoint(widget.id, { url: `https://example.com/hook/${i}`, secret: `s${i}`, events: ['lead.captured'], enabled: true });
    await body({ store, sql, clock, widget: widget.id });
  } finally {
    await sql.end();
    await db.dispose();
  }
}

/** Makes the `nth` row inserted into (or updated in) `table` from now on fail (a sequence counts rows whatever rolls back). */
async function failNth(sql: pg.Client, table: string, nth: number, what: 'INSERT' | 'UPDATE' = 'INSERT'): Promise<void> {
  await sql.query(`CREATE SEQUENCE ${table}_boom`);
  await sql.query(`CREATE FUNCTION ${table}_boom() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('${table}_boom') = ${nth} THEN RAISE EXCEPTION 'injected failure'; END IF;
      RETURN NEW;
    END $$`);
  await sql.query(`CREATE TRIGGER ${table}_boom BEFORE ${what} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${table}_boom()`);
}

function success(d: DueDelivery, at: number): AttemptResult {
  return {
    deliveryId: d.id,
    endpointId: d.endpointId,
    attempt: { startedAt: at, durationMs: 3, statusCode: 204, responseExcerpt: '', error: null, outcome: 'succeeded' },
    next: { status: 'succeeded' },
    endpoint: 'success',
  };
}

function retry(d: DueDelivery, at: number): AttemptResult {
  return {
    deliveryId: d.id,
    endpointId: d.endpointId,
    attempt: { startedAt: at, durationMs: 3, statusCode: 500, responseExcerpt: 'no', error: 'HTTP 500', outcome: 'failed' },
    next: { status: 'pending', at: at + 5_000 },
    endpoint: 'failure',
  };
}

/** Attempts recorded per delivery: the first one kept in the delivery's row (a first attempt that succeeded), then its attempt rows. */
async function attemptsPerDelivery(sql: pg.Client, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await sql.query<{ id: string; n: number }>(
    `SELECT d.id, (COUNT(a.seq) + (d.first_started_at IS NOT NULL)::int)::int AS n FROM webhook_deliveries d LEFT JOIN webhook_attempts a ON a.delivery_seq = d.seq
     WHERE d.id = ANY($1) GROUP BY d.id, d.first_started_at`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.n]));
}

async function holders(sql: pg.Client, ids: string[]): Promise<string[]> {
  const { rows } = await sql.query<{ s: string }>(
    `SELECT status || ':' || COALESCE(lease_owner, '-') AS s FROM webhook_deliveries WHERE id = ANY($1) ORDER BY id`,
    [ids],
  );
  return rows.map((r) => r.s);
}

for (const kind of ['successes', 'successes and failures'] as const) {
  test(`a flush of ${kind} that fails midway records nothing and keeps every lease; written again, each attempt is recorded once`, async () => {
    await withOutbox(3, async ({ store, sql, clock, widget }) => {
      for (let i = 0; i < 4; i++) await store.enqueue(widget, 'lead.captured', `{"i":${i}}`);
      const claimed = await store.claimDue(A, 20, ROOM);
      assert.equal(claimed.length, 12);
      const ids = claimed.map((d) => d.id);
      clock.advance(10);
      const results = claimed.map((d, i) => (kind === 'successes' || i % 3 !== 0 ? success(d, clock.now()) : retry(d, clock.now())));

      // The fifth delivery the flush finishes fails (a first attempt that succeeded writes no attempt row to fail on).
      await failNth(sql, 'webhook_deliveries', 5, 'UPDATE');
      await assert.rejects(store.recordResults(A.owner, results, 86_400_000), /injected failure/);
      assert.deepEqual([...(await attemptsPerDelivery(sql, ids)).values()], Array(12).fill(0), 'no attempt of the failed flush is kept');
      assert.deepEqual(await holders(sql, ids), Array(12).fill(`inflight:${A.owner}`), 'every delivery still held by its claimer');

      assert.deepEqual(await store.recordResults(A.owner, results, 86_400_000), { disabled: [], lost: 0 });
      assert.deepEqual([...(await attemptsPerDelivery(sql, ids)).values()], Array(12).fill(1));
      // The same results flushed again (a retry after an answer that never arrived) are all dropped.
      assert.deepEqual(await store.recordResults(A.owner, results, 86_400_000), { disabled: [], lost: 12 });
      assert.deepEqual([...(await attemptsPerDelivery(sql, ids)).values()], Array(12).fill(1), 'nothing recorded twice');
      const expected = results.map((r) => `${r.next.status}:-`).sort();
      assert.deepEqual((await holders(sql, ids)).sort(), expected);
    });
  });
}

test('a flush of successes records only the deliveries its owner still holds', async () => {
  await withOutbox(2, async ({ store, sql, clock, widget }) => {
    for (let i = 0; i < 3; i++) await store.enqueue(widget, 'lead.captured', `{"i":${i}}`);
    const mine = await store.claimDue(A, 2, ROOM);
    const rest = await store.claimDue(A, 10, ROOM);
    clock.advance(A.ms + 1);
    // A stalls past its leases; B takes over the two oldest. Nobody took `rest`, so A's results still count there.
    const taken = await store.claimDue(B, 2, ROOM);
    assert.deepEqual(new Set(taken.map((d) => d.id)), new Set(mine.map((d) => d.id)), 'lapsed leases go oldest first');
    const recorded = await store.recordResults(
      A.owner,
      [...mine, ...rest].map((d) => success(d, clock.now())),
      86_400_000,
    );
    assert.deepEqual(recorded, { disabled: [], lost: 2 });
    const mineIds = mine.map((d) => d.id);
    const restIds = rest.map((d) => d.id);
    assert.deepEqual([...(await attemptsPerDelivery(sql, mineIds)).values()], [0, 0]);
    assert.deepEqual(await holders(sql, mineIds), [`inflight:${B.owner}`, `inflight:${B.owner}`]);
    assert.deepEqual([...(await attemptsPerDelivery(sql, restIds)).values()], Array(rest.length).fill(1));
  });
});

test('events arriving together are written in batches: each caller is answered after its commit, and a failing event fails alone', async () => {
  await withOutbox(2, async ({ store, sql, widget }) => {
    await sql.query(`CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.body = '"poison"' THEN RAISE EXCEPTION 'poisoned event'; END IF;
        RETURN NEW;
      END $$`);
    await sql.query('CREATE TRIGGER poison BEFORE INSERT ON webhook_events FOR EACH ROW EXECUTE FUNCTION poison()');
    // More than one statement's worth (ENQUEUE_BATCH_MAX), so a queue longer than a batch is split.
    const count = ENQUEUE_BATCH_MAX + 20;
    const bodies = Array.from({ length: count }, (_, i) => (i === 17 ? '"poison"' : `{"i":${i}}`));
    const settled = await Promise.allSettled(bodies.map((b) => store.enqueue(widget, 'lead.captured', b)));
    const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [i] : []));
    assert.deepEqual(failed, [17]);
    assert.match(String((settled[17] as PromiseRejectedResult).reason), /poisoned event/);
    const accepted = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    assert.equal(new Set(accepted.map((a) => a.eventId)).size, count - 1);
    for (const a of accepted) assert.equal(a.deliveries.length, 2);
    const { rows: events } = await sql.query<{ id: string; body: string }>('SELECT id, body FROM webhook_events ORDER BY seq');
    assert.deepEqual(new Set(events.map((e) => e.id)), new Set(accepted.map((a) => a.eventId)), 'every answered event is stored, nothing else');
    const { rows: deliveries } = await sql.query<{ id: string; event: string }>(
      'SELECT d.id, e.id AS event FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq',
    );
    const byEvent = new Map(accepted.map((a) => [a.eventId as string, new Set<string>(a.deliveries)]));
    assert.equal(deliveries.length, 2 * (count - 1));
    for (const d of deliveries) assert.ok(byEvent.get(d.event)?.has(d.id), `delivery ${d.id} belongs to the event that answered it`);
  });
});
