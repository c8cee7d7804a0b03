import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pg from 'pg';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call, startReplica, tenantSession, type Replica } from '../helpers/replicas.js';
import { openDatabase } from '../../src/store/sqlite.js';
import { createSender } from '../../src/net/sender.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { RATE_GUARD_MS, rateSpacingMs } from '../../src/webhooks/schedule.js';
import { SqliteWebhookStore } from '../../src/webhooks/sqlite-store.js';
import type { WebhookStore } from '../../src/webhooks/store.js';
import type { TenantId } from '../../src/identity/types.js';
import { startReceiver, type Received } from './receiver.js';
import { testClock, webhookServer } from './setup.js';

/**
 * The most attempts that started within any 1,000 ms, by the attempt log's started_at (the
 * dispatcher's own record of when each attempt began). The limit's promise is about those starts:
 * when a request arrives also depends on the network and on the receiver's own process being
 * scheduled (here the test's, on a machine that may be loaded), which no sender controls.
 */
function busiestSecond(startedAt: readonly number[]): number {
  const t = [...startedAt].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < t.length; j++) {
    while (t[j]! - t[i]! >= 1000) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

/** Every attempt's start on one endpoint, read through the API (the delivery log and each delivery's attempt log). */
async function attemptStarts(get: (path: string) => Promise<any>, widgetId: string, endpointId: string): Promise<number[]> {
  const base = `/v1/widgets/${widgetId}/webhooks/${endpointId}/deliveries`;
  const out: number[] = [];
  for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
    const page = await get(`${base}?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    for (const d of page.data) for (const a of (await get(`${base}/${d.id}`)).attempt_log) out.push(Date.parse(a.started_at));
    cursor = page.next_cursor;
  }
  return out;
}

/** The event types one conversation's deliveries arrived in, first attempts that failed left out. */
function arrivalOrder(received: readonly Received[], conversation: string, failed: ReadonlySet<number>): string[] {
  return received.flatMap((r, i) => (!failed.has(i) && JSON.parse(r.body).data.conversation_id === conversation ? [JSON.parse(r.body).event as string] : []));
}

const LIFE = ['conversation.started', 'escalation.triggered', 'lead.captured', 'conversation.ended'] as const;
const dataOf = (event: string, c: string) =>
  event === 'lead.captured' ? { conversation_id: c, visitor_id: 'vis_1', has_email: true, has_phone: false } : { conversation_id: c };

test('rate_limit 5/s: never more than 5 attempts started in any second (SQLite, one process)', async () => {
  const rx = await startReceiver();
  const { s, token, widgetId, addEndpoint, post } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['escalation.triggered'], rate_limit: 5 });
    assert.equal((ep as any).rate_limit, 5);
    for (let i = 0; i < 16; i++) assert.equal((await post('escalation.triggered', { conversation_id: `ses_t${i}` })).status, 202);
    await rx.waitFor(16);
    const starts = await attemptStarts(async (path) => (await s.call('GET', path, { token })).body, widgetId, ep.id);
    assert.ok(starts.length >= 16);
    assert.ok(busiestSecond(starts) <= 5, `at most 5 started in a second, counted ${busiestSecond(starts)}`);
    const bad = await s.call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token, body: { rate_limit: 0 } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.details[0].path, 'rate_limit');
    const tooMany = await s.call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token, body: { rate_limit: 1001 } });
    assert.equal(tooMany.status, 422, 'RATE_LIMIT_MAX is 1000');
    const off = await s.call('PATCH', `/v1/widgets/${widgetId}/webhooks/${ep.id}`, { token, body: { rate_limit: null } });
    assert.equal(off.body.rate_limit, null);
  } finally {
    await s.stop();
    await rx.close();
  }
});

test('3 replicas on PostgreSQL: a 4/s endpoint never has over 4 attempts started in a second; conversations arrive in order while first attempts fail', async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  const throttled = await startReceiver();
  // A tenth of first attempts fail (every tenth request, if it is a delivery's first): retried 5 s
  // later. A retry always succeeds: one failing again would wait out the growing backoff.
  const failedAt = new Set<number>();
  const attempted = new Set<string>();
  const ordered = await startReceiver((r, i) => {
    const id = String(r.headers['webhook-id']);
    const first = !attempted.has(id);
    attempted.add(id);
    if (first && i % 10 === 3) {
      failedAt.add(i);
      return { status: 503 };
    }
    return { status: 200 };
  });
  const replicas: Replica[] = [];
  const db = new pg.Client({ connectionString: url });
  try {
    for (let i = 0; i < 3; i++)
      replicas.push(await startReplica(url, dir.path, ['--allow-private-webhooks'], { widgetKey: { limit: 1_000_000, windowSeconds: 60 } }));
    await db.connect();
    const bases = replicas.map((r) => r.url);
    const { token } = await tenantSession(bases[0]!);
    const widget = await call(bases[1]!, 'POST', '/v1/widgets', token, { name: 'throttled' });
    const limited = await call(bases[2]!, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, {
      url: throttled.url,
      events: ['conversation.ended'],
      rate_limit: 4,
    });
    await call(bases[0]!, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: ordered.url, events: [...LIFE] });
    const conversations = Array.from({ length: 6 }, (_, i) => `ses_o${i}`);
    // Each conversation's events are posted in order, to the replicas in turn; conversations interleave.
    await Promise.all(
      conversations.map(async (c, ci) => {
        for (const [k, event] of LIFE.entries()) {
          const r = await call(bases[(ci + k) % 3]!, 'POST', `/v1/widgets/${widget.id}/events`, widget.key, { event, data: dataOf(event, c) });
          assert.ok(r.deliveries >= 1);
        }
      }),
    );
    await throttled.waitFor(conversations.length);
    await ordered.waitUntil(() => ordered.received.length - failedAt.size >= conversations.length * LIFE.length);
    const starts = await attemptStarts((path) => call(bases[1]!, 'GET', path, token), widget.id, limited.id);
    assert.ok(starts.length >= conversations.length);
    assert.ok(busiestSecond(starts) <= 4, `at most 4 started in a second across 3 replicas, counted ${busiestSecond(starts)}`);
    for (const c of conversations) assert.deepEqual(arrivalOrder(ordered.received, c, failedAt), [...LIFE], `${c} in order`);
    assert.ok(failedAt.size > 0, 'some first attempts failed');
  } finally {
    for (const r of replicas) await r.kill();
    await db.end().catch(() => {});
    await throttled.close();
    await ordered.close();
    dir.dispose();
  }
});

test('a rate-limited delivery whose process was held up past its slot is handed back unsent, then sent in a later slot', async () => {
  // A raw body put straight into the outbox: not an event body, so not checked against the catalogue.
  const rx = await startReceiver(undefined, { schema: false });
  const clock = testClock();
  const dir = tempDir();
  const db = openDatabase(join(dir.path, 'late.db'));
  const real = new SqliteWebhookStore(db, clock.now);
  // The real store; after the first claim that hands something out, the clock jumps past the
  // slot's guard, as if the process had been held up between its claim and its send.
  let heldUp = false;
  const store: WebhookStore = Object.create(real, {
    claimDue: {
      value: async (...args: Parameters<WebhookStore['claimDue']>) => {
        const got = await real.claimDue(...args);
        if (got.length > 0 && !heldUp) {
          heldUp = true;
          clock.advance(RATE_GUARD_MS + 1);
        }
        return got;
      },
    },
  });
  const sender = createSender();
  const d = new Dispatcher({ store, send: sender.send, allowPrivate: true, now: clock.now });
  try {
    const { widget } = await real.createWidget(1 as TenantId, 'w', { hash: 'h'.repeat(64), preview: 'p' });
    const ep = await real.createEndpoint(widget.id, { url: rx.url, secret: 's', events: ['lead.captured'], enabled: true, rateLimit: 4 });
    const [id] = (await real.enqueue(widget.id, 'lead.captured', '{"data":{}}')).deliveries;
    assert.equal(await d.runDue(), 1, 'claimed in the first slot');
    assert.equal(rx.received.length, 0, 'not sent late');
    const back = await real.getDelivery(ep.id, id!);
    assert.deepEqual([back?.status, back?.attempts, back?.attemptLog.length], ['pending', 0, 0], 'handed back unattempted');
    clock.advance(rateSpacingMs(4));
    assert.equal(await d.runDue(), 1);
    assert.equal(rx.received.length, 1, 'sent in its next slot');
    const done = await real.getDelivery(ep.id, id!);
    assert.deepEqual([done?.status, done?.attempts, done?.attemptLog.length], ['succeeded', 1, 1]);
  } finally {
    await d.stop(0);
    sender.close();
    await rx.close();
    db.close();
    dir.dispose();
  }
});
