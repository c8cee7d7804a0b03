import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call, startReplica, tenantSession, type Replica } from '../helpers/replicas.js';
import { startReceiver, type Received } from './receiver.js';
import { webhookServer } from './setup.js';

/** The most requests that arrived within one calendar second. */
function busiestSecond(received: readonly Received[]): number {
  const per = new Map<number, number>();
  for (const r of received) per.set(Math.floor(r.at / 1000), (per.get(Math.floor(r.at / 1000)) ?? 0) + 1);
  return Math.max(0, ...per.values());
}

/** The event types one conversation's deliveries arrived in, first attempts that failed left out. */
function arrivalOrder(received: readonly Received[], conversation: string, failed: ReadonlySet<number>): string[] {
  return received.flatMap((r, i) => (!failed.has(i) && JSON.parse(r.body).data.conversation_id === conversation ? [JSON.parse(r.body).event as string] : []));
}

const LIFE = ['conversation.started', 'escalation.triggered', 'lead.captured', 'conversation.ended'] as const;
const dataOf = (event: string, c: string) =>
  event === 'lead.captured' ? { conversation_id: c, visitor_id: 'vis_1', has_email: true, has_phone: false } : { conversation_id: c };

test('rate_limit 5/s: the receiver never counts more than 5 deliveries in any second (SQLite, one process)', async () => {
  const rx = await startReceiver();
  const { s, token, widgetId, addEndpoint, post } = await webhookServer();
  try {
    const ep = await addEndpoint({ url: rx.url, events: ['escalation.triggered'], rate_limit: 5 });
    assert.equal((ep as any).rate_limit, 5);
    for (let i = 0; i < 16; i++) assert.equal((await post('escalation.triggered', { conversation_id: `ses_t${i}` })).status, 202);
    await rx.waitFor(16);
    assert.ok(busiestSecond(rx.received) <= 5, `at most 5 in a second, counted ${busiestSecond(rx.received)}`);
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

test('3 replicas on PostgreSQL: a 4/s endpoint is never over 4 in a second at the receiver; conversations arrive in order while first attempts fail', async () => {
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
    await call(bases[2]!, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: throttled.url, events: ['conversation.ended'], rate_limit: 4 });
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
    assert.ok(busiestSecond(throttled.received) <= 4, `at most 4 in a second across 3 replicas, counted ${busiestSecond(throttled.received)}`);
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
