// PostgreSQL's own CPU per delivery of the webhook outbox (the server's processes, read from
// /proc, not the client's), for the statements a delivery costs: the intake of its event, its
// claim and the record of its result, each phase apart. No network beyond the database: each
// claimed delivery "succeeds" at once, and results are recorded in batches as the dispatcher
// does. `--workers K` runs K claim-and-record loops at once, each on its own pool and lease
// owner, as K replicas would. Loads the store from a given build, so two worktrees compare on
// one server (each run on a fresh database of its own, dropped after):
//   node dist/bench/webhooks/pg-cost.js --tree /tmp/base --database postgres://postgres:q@127.0.0.1:55491/postgres [--endpoints 8] [--deliveries 8000] [--workers 1] [--split]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { holdClaimed, succeed } from './outbox-loop.js';
import { freshDatabase, PG_BENCH_OPTIONS, serverCpuMs as cpuOf } from './pg-server.js';

const { values } = parseArgs({
  options: {
    ...PG_BENCH_OPTIONS,
    workers: { type: 'string', default: '1' },
    batch: { type: 'string', default: '16' },
    split: { type: 'boolean', default: false },
  },
});
if (!values.database) throw new Error('--database postgres://… is required');
const tree = resolve(values.tree);
const endpoints = Number(values.endpoints);
const total = Number(values.deliveries);
const workers = Number(values.workers);
const batch = Number(values.batch);

/* eslint-disable @typescript-eslint/no-explicit-any -- modules of another build, loaded by path */
const { openPool } = (await import(`${tree}/dist/src/store/postgres.js`)) as any;
const { PostgresWebhookStore } = (await import(`${tree}/dist/src/webhooks/postgres-store.js`)) as any;
const { deliveryBody, validateEvent } = (await import(`${tree}/dist/src/webhooks/events.js`)) as any;

const { url, postmaster, drop } = await freshDatabase(values.database, 'pgcost');

const serverCpuMs = () => cpuOf(postmaster);

const pools = Array.from({ length: workers }, () => openPool(url, { max: 4 }));
try {
  const stores = [];
  for (const p of pools) stores.push(await PostgresWebhookStore.open(p));
  const store = stores[0];
  const { widget } = await store.createWidget(1, 'b', { hash: 'h', preview: 'bwk_' });
  for (let i = 0; i < endpoints; i++) {
    await store.createEndpoint(widget.id, { url: `http://127.0.0.1:1/hook/${i}`, secret: 'whsec_YmVuY2g=', events: ['conversation.started'], enabled: true });
  }
  const events = Math.ceil(total / endpoints);
  let cpu = serverCpuMs();
  for (let from = 0; from < events; from += 500) {
    const chunk = [];
    for (let i = from; i < Math.min(events, from + 500); i++) {
      const conversation = `ses_${Math.floor(i / 4)}`;
      const checked = validateEvent('conversation.started', { conversation_id: conversation, n: i % 4 });
      chunk.push(store.enqueue(widget.id, 'conversation.started', deliveryBody('conversation.started', widget.id, checked.data)));
    }
    await Promise.all(chunk);
  }
  const intakeMs = serverCpuMs() - cpu;
  const made = events * endpoints;
  let done = 0;
  // With --split, the server's CPU around each claim and each record (one worker: nothing else runs meanwhile but the
  // server's own background writers; reading /proc at every call costs the client several times its own work).
  const split = { claim: 0, record: 0 };
  const timed = async <T>(key: 'claim' | 'record', fn: () => Promise<T>): Promise<T> => {
    if (workers !== 1 || !values.split) return fn();
    const before = serverCpuMs();
    const out = await fn();
    split[key] += serverCpuMs() - before;
    return out;
  };
  const work = async (s: any, owner: string) => {
    const lease = { owner, ms: 60_000 };
    const busy = new Map<string, number>();
    let inflight: { id: string; endpointId: string }[] = [];
    for (;;) {
      const got = (await timed('claim', () =>
        s.claimDue(lease, 64 - inflight.length, { each: 8, busy }, { reachPast: false, orderHoldMs: 600_000 }),
      )) as typeof inflight;
      holdClaimed(busy, got);
      inflight.push(...got);
      if (inflight.length === 0) {
        if (done >= made) return;
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      const finished = inflight.slice(0, batch);
      inflight = inflight.slice(batch);
      const results = succeed(busy, finished);
      await timed('record', () => s.recordResults(owner, results, 86_400_000));
      done += finished.length;
    }
  };
  // Index and heap reads of the deliveries table over the delivering phase (the statistics reach the view within a second of each statement).
  const reads = async () => {
    await new Promise((r) => setTimeout(r, 1500));
    const { rows } = await pools[0].query(
      `SELECT indexrelname AS name, idx_tup_read::float8 AS tuples FROM pg_stat_user_indexes WHERE relname = 'webhook_deliveries'
       UNION ALL SELECT 'heap blocks', (heap_blks_hit + heap_blks_read)::float8 FROM pg_statio_user_tables WHERE relname = 'webhook_deliveries'
       UNION ALL SELECT 'index blocks', (idx_blks_hit + idx_blks_read)::float8 FROM pg_statio_user_tables WHERE relname = 'webhook_deliveries'`,
    );
    return new Map<string, number>(rows.map((r: { name: string; tuples: number }) => [r.name, r.tuples]));
  };
  const readsBefore = await reads();
  cpu = serverCpuMs();
  const client = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(stores.map((s, i) => work(s, `bench-${i}`)));
  const seconds = (performance.now() - t0) / 1000;
  const deliverMs = serverCpuMs() - cpu;
  const c = process.cpuUsage(client);
  const readsAfter = await reads();
  const perDelivery = Object.fromEntries(
    [...readsAfter].map(([k, v]) => [k.replace('webhook_deliveries_', ''), +((v - (readsBefore.get(k) ?? 0)) / done).toFixed(1)]),
  );
  const attempts = Number((await pools[0].query('SELECT count(*) AS n FROM webhook_attempts')).rows[0].n);
  process.stdout.write(
    `${JSON.stringify({
      tree,
      endpoints,
      workers,
      deliveries: done,
      seconds: +seconds.toFixed(2),
      pgIntakeMsPerDelivery: +(intakeMs / made).toFixed(4),
      pgDeliverMsPerDelivery: +(deliverMs / done).toFixed(4),
      ...(workers === 1 && values.split ? { pgClaimMs: +(split.claim / done).toFixed(4), pgRecordMs: +(split.record / done).toFixed(4) } : {}),
      clientMsPerDelivery: +((c.user + c.system) / 1000 / done).toFixed(4),
      attemptRows: attempts,
      readsPerDelivery: perDelivery,
    })}\n`,
  );
} finally {
  await Promise.all(pools.map((p) => p.end()));
  await drop();
}
