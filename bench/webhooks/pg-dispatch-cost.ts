// PostgreSQL's CPU per delivery when K dispatchers (as K replicas) deliver from one outbox on it,
// the network replaced by an answer of 204 after `--answer-ms` (a receiver's round trip), so the
// dispatcher's own claim and flush pacing is what is measured, not the store alone (pg-cost).
// Each event has a conversation of its own by default, as in `bench webhooks --database`. With
// `--intake-per-sec R` the events are not all queued first: they arrive at R a second while the
// dispatchers deliver, spread over them, each enqueue waking its own (as `serve` does after an intake).
// Loads the build of a given tree, so two worktrees compare on one server (each run on a fresh
// database of its own, dropped after):
//   node dist/bench/webhooks/pg-dispatch-cost.js --tree /tmp/base --database postgres://postgres:q@127.0.0.1:55491/postgres [--dispatchers 3] [--deliveries 8000]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freshDatabase, PG_BENCH_OPTIONS, serverCpuMs } from './pg-server.js';

const { values } = parseArgs({
  options: {
    ...PG_BENCH_OPTIONS,
    dispatchers: { type: 'string', default: '3' },
    'answer-ms': { type: 'string', default: '2' },
    conversation: { type: 'string', default: '1' },
    'intake-per-sec': { type: 'string', default: '0' },
  },
});
if (!values.database) throw new Error('--database postgres://… is required');
const tree = resolve(values.tree);
const endpoints = Number(values.endpoints);
const total = Number(values.deliveries);
const dispatchers = Number(values.dispatchers);
const answerMs = Number(values['answer-ms']);
const conversation = Number(values.conversation);
const intakePerSec = Number(values['intake-per-sec']);

/* eslint-disable @typescript-eslint/no-explicit-any -- modules of another build, loaded by path */
const { openPool } = (await import(`${tree}/dist/src/store/postgres.js`)) as any;
const { PostgresWebhookStore } = (await import(`${tree}/dist/src/webhooks/postgres-store.js`)) as any;
const { Dispatcher } = (await import(`${tree}/dist/src/webhooks/dispatcher.js`)) as any;
const { deliveryBody, validateEvent } = (await import(`${tree}/dist/src/webhooks/events.js`)) as any;

const { url, postmaster, drop } = await freshDatabase(values.database, 'pgdispatch');
const answer = { kind: 'response', status: 204, retryAfter: null, excerpt: '', durationMs: answerMs };
const send = () => new Promise((r) => setTimeout(r, answerMs, answer));

const pools = Array.from({ length: dispatchers }, () => openPool(url, { max: 4 }));
try {
  const stores: any[] = [];
  for (const p of pools) stores.push(await PostgresWebhookStore.open(p));
  const claims = stores.map(() => ({ calls: 0, rows: 0 }));
  stores.forEach((s, i) => {
    const claim = s.claimDue.bind(s);
    s.claimDue = async (...args: unknown[]) => {
      const got = await claim(...args);
      claims[i]!.calls++;
      claims[i]!.rows += got.length;
      return got;
    };
  });
  const { widget } = await stores[0].createWidget(1, 'b', { hash: 'h', preview: 'bwk_' });
  for (let i = 0; i < endpoints; i++) {
    await stores[0].createEndpoint(widget.id, {
      url: `http://127.0.0.1:9/hook/${i}`,
      secret: 'whsec_YmVuY2g=',
      events: ['conversation.started'],
      enabled: true,
    });
  }
  const events = Math.ceil(total / endpoints);
  const enqueue = (i: number) => {
    const checked = validateEvent('conversation.started', { conversation_id: `ses_${Math.floor(i / conversation)}`, n: i % conversation });
    return stores[i % dispatchers].enqueue(widget.id, 'conversation.started', deliveryBody('conversation.started', widget.id, checked.data));
  };
  if (intakePerSec === 0) await Promise.all(Array.from({ length: events }, (_, i) => enqueue(i)));
  const made = events * endpoints;
  const ds = stores.map((store, i) => new Dispatcher({ store, send, allowPrivate: true, owner: `d${i}`, pollMs: 20, random: () => 0.5 }));
  const cpu = serverCpuMs(postmaster);
  const client = process.cpuUsage();
  const t0 = performance.now();
  for (const d of ds) await d.start();
  if (intakePerSec > 0) {
    // Events due by now at the given rate are queued every millisecond or so.
    let next = 0;
    const timer = setInterval(() => {
      const due = Math.min(events, Math.floor(((performance.now() - t0) / 1000) * intakePerSec));
      for (; next < due; next++) {
        const i = next;
        void enqueue(i).then(() => ds[i % dispatchers].notify());
      }
      if (next >= events) clearInterval(timer);
    }, 1);
  }
  const done = () => ds.reduce((n, d) => n + d.attempts.succeeded, 0);
  while (done() < made) await new Promise((r) => setTimeout(r, 2));
  const seconds = (performance.now() - t0) / 1000;
  const serverMs = serverCpuMs(postmaster) - cpu;
  const c = process.cpuUsage(client);
  for (const d of ds) await d.stop();
  const calls = claims.reduce((n, x) => n + x.calls, 0);
  process.stdout.write(
    `${JSON.stringify({
      tree,
      endpoints,
      dispatchers,
      answerMs,
      deliveries: made,
      seconds: +seconds.toFixed(2),
      perSec: Math.round(made / seconds),
      pgMsPerDelivery: +(serverMs / made).toFixed(4),
      clientMsPerDelivery: +((c.user + c.system) / 1000 / made).toFixed(4),
      claimsPerDelivery: +(calls / made).toFixed(4),
      deliveriesPerClaim: +(claims.reduce((n, x) => n + x.rows, 0) / Math.max(1, calls)).toFixed(1),
    })}\n`,
  );
} finally {
  await Promise.all(pools.map((p) => p.end()));
  await drop();
}
