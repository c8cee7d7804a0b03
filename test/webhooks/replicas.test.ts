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
    for (let i = 0; i < ENDPOINTS; i++)
      await call(bases[2]!, 'POST', `/v1/widgets/${widget.id}/webhooks`, token, { url: `${rx.url}?ep=${i}`, events: ['escalation.triggered'] });

    // The third replica is killed once a third of the deliveries are made, while events still
    // arrive through the other two (as a load balancer would send them once it is gone).
    const victim = replicas[2]!;
    const killed = rx
      .waitUntil(() => rx.received.length >= total / 3)
      .then(async () => {
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
          const r = await call(bases[i % 2]!, 'POST', `/v1/widgets/${widget.id}/events`, widget.key, {
            event: 'escalation.triggered',
            data: { conversation_id: `ses_${i}` },
          });
          assert.equal(r.deliveries, ENDPOINTS);
        }
      }),
    );
    const { at: killedAt, held } = await killed;

    // Done when the store says so: the dead replica's deliveries are sent again only once their
    // leases run out, though the receiver may have seen them already.
    const succeeded = async () => (await db.query(`SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'`)).rows[0].n as number;
    while ((await succeeded()) < total) await new Promise((r) => setTimeout(r, 100));
    const { rows: left } = await db.query(`SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded' OR lease_owner IS NOT NULL`);
    assert.equal(left[0].n, 0, 'every delivery succeeded, nothing is left leased');

    const seen = new Map<string, number>();
    for (const r of rx.received) seen.set(String(r.headers['x-service-delivery']), (seen.get(String(r.headers['x-service-delivery'])) ?? 0) + 1);
    const duplicates = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
    // Each extra send must be explained: the killed replica held it, or a recorded attempt failed
    // (an ordinary retry, which any receiver may see under the same id).
    const { rows: failedRows } = await db.query(
      `SELECT d.id, COUNT(*)::int AS n FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_seq = d.seq
       WHERE d.id = ANY($1::text[]) AND a.outcome = 'failed' GROUP BY d.id`,
      [duplicates],
    );
    const failedAttempts = new Map(failedRows.map((r: { id: string; n: number }) => [r.id, r.n]));
    const fromKilled = duplicates.filter((id) => held.has(id)).length;
    console.log(
      `# ${total} deliveries, ${rx.received.length} requests; killed replica held ${held.size} in flight at ${killedAt} received; ` +
        `${duplicates.length} delivery id(s) received more than once: ${fromKilled} held by the killed replica, ${duplicates.length - fromKilled} retried after a failed attempt`,
    );
    assert.equal(seen.size, total, 'every delivery made');
    for (const id of duplicates) {
      const allowed = 1 + (held.has(id) ? 1 : 0) + (failedAttempts.get(id) ?? 0);
      if (seen.get(id)! <= allowed) continue;
      const at = rx.received.flatMap((r, i) => (r.headers['x-service-delivery'] === id ? [i] : []));
      const { rows: log } = await db.query(
        `SELECT a.started_at, a.outcome, a.status_code FROM webhook_attempts a JOIN webhook_deliveries d ON d.seq = a.delivery_seq WHERE d.id = $1 ORDER BY a.seq`,
        [id],
      );
      assert.fail(
        `${id} received ${seen.get(id)} times (requests #${at.join(', #')}; the kill came after #${killedAt}); held by the killed replica: ${held.has(id)}; attempts recorded: ${JSON.stringify(log)}`,
      );
    }
  } finally {
    for (const r of replicas) await r.kill();
    await db.end().catch(() => {});
    await rx.close();
    dir.dispose();
  }
});
