import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call, startReplica, tenantSession, type Replica } from '../helpers/replicas.js';
import { startReceiver } from './receiver.js';

const LEASE_S = 15;
const ENDPOINTS = 4;
const EVENTS = 500;

test('2,000 deliveries across 3 replicas on PostgreSQL, one killed with SIGKILL midway: every delivery made, duplicates only from its in-flight attempts', async () => {
  const total = ENDPOINTS * EVENTS;
  const url = await freshDatabase();
  const dir = tempDir();
  // Answers take a while, so each replica has deliveries in flight when one is killed.
  const rx = await startReceiver(() => ({ status: 200, body: 'ok', holdMs: 100 }));
  const db = new pg.Client({ connectionString: url });
  const replicas: Replica[] = [];
  try {
    const flags = ['--allow-private-webhooks', '--job-lease', String(LEASE_S)];
    // One after another: the first migrates the schema, the others find it there.
    for (let i = 0; i < 3; i++) replicas.push(await startReplica(url, dir.path, flags, { widgetKey: { limit: 1_000_000, windowSeconds: 60 } }));
    await db.connect();
    const bases = replicas.map((r) => r.url);
    const { token } = await tenantSession(bases[0]!);
    const widget = await call(bases[1]!, 'POST', '/v1/widgets', token, { name: 'replicated' });
    for (let i = 0; i < ENDPOINTS; i++) await call(bases[2]!, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: `${rx.url}?ep=${i}`, events: ['conversation.ended'] });

    // The third replica is killed once a third of the deliveries are made, while events still
    // arrive through the other two (as a load balancer would send them once it is gone).
    const victim = replicas[2]!;
    const killed = rx.waitUntil(() => rx.received.length >= total / 3).then(async () => {
      await victim.kill();
      const at = rx.received.length;
      // What the dead replica still held: only these may be sent twice.
      const { rows } = await db.query(`SELECT id FROM webhook_deliveries WHERE status = 'inflight' AND lease_owner LIKE $1`, [`%/${victim.pid}/%`]);
      return { at, held: new Set(rows.map((r: { id: string }) => r.id)) };
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < EVENTS) {
          const i = next++;
          const r = await call(bases[i % 2]!, 'POST', `/v1/widgets/${widget.id}/events`, widget.key, { event: 'conversation.ended', data: { conversation_id: `ses_${i}` } });
          assert.equal(r.deliveries, ENDPOINTS);
        }
      }),
    );
    const { at: killedAt, held } = await killed;

    const ids = () => rx.received.map((r) => String(r.headers['x-service-delivery']));
    await rx.waitUntil(() => new Set(ids()).size === total);
    const seen = new Map<string, number>();
    for (const id of ids()) seen.set(id, (seen.get(id) ?? 0) + 1);
    const duplicates = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
    console.log(`# ${total} deliveries, ${rx.received.length} requests; killed replica held ${held.size} in flight at ${killedAt} received; ${duplicates.length} duplicate(s)`);
    assert.equal(seen.size, total, 'every delivery made');
    for (const id of duplicates) assert.ok(held.has(id), `duplicate ${id} was in flight on the killed replica`);
    assert.ok(duplicates.every((id) => seen.get(id) === 2), 'sent at most twice');

    // The store agrees: every delivery succeeded, nothing is left leased.
    let states: { status: string; n: number }[] = [];
    for (let i = 0; i < 100; i++) {
      states = (await db.query(`SELECT status, COUNT(*)::int AS n FROM webhook_deliveries GROUP BY status`)).rows;
      if (states.length === 1 && states[0]!.status === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 50)); // the last results are written just after the receiver answers
    }
    assert.deepEqual(states, [{ status: 'succeeded', n: total }], JSON.stringify(states));
  } finally {
    for (const r of replicas) await r.kill();
    await db.end().catch(() => {});
    await rx.close();
    dir.dispose();
  }
});
