// CPU per delivery of the SQLite outbox alone (claimDue and recordResults, no network), driven
// the way the dispatcher drives it: 10 (or N) endpoints, 4 in flight each, 64 overall, results
// recorded in batches. Loads the store from a given build, so two worktrees can be compared:
//   node dist/bench/webhooks/store-cost.js --tree /work/wt-hooks-base --endpoints 10 [--order off]
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { holdClaimed, succeed } from './outbox-loop.js';

const { values } = parseArgs({
  options: {
    tree: { type: 'string', default: '.' },
    endpoints: { type: 'string', default: '10' },
    batch: { type: 'string', default: '20' },
    deliveries: { type: 'string', default: '20000' },
    order: { type: 'string', default: 'on' },
  },
});
const tree = resolve(values.tree);
const endpoints = Number(values.endpoints);
const batch = Number(values.batch);
const total = Number(values.deliveries);
const hold = values.order === 'off' ? 0 : 600_000;

/* eslint-disable @typescript-eslint/no-explicit-any -- modules of another build, loaded by path */
const { openDatabase } = (await import(`${tree}/dist/src/store/sqlite.js`)) as any;
const { SqliteWebhookStore } = (await import(`${tree}/dist/src/webhooks/sqlite-store.js`)) as any;
const { deliveryBody, validateEvent } = (await import(`${tree}/dist/src/webhooks/events.js`)) as any;
const dir = mkdtempSync(join(tmpdir(), 'store-cost-'));
const db = openDatabase(join(dir, 'b.db'));
const store = new SqliteWebhookStore(db);
const { widget } = await store.createWidget(1, 'b', { hash: 'h', preview: 'bwk_' });
for (let i = 0; i < endpoints; i++) {
  await store.createEndpoint(widget.id, { url: `http://127.0.0.1:1/hook/${i}`, secret: 'whsec_YmVuY2g=', events: ['conversation.started'], enabled: true });
}
for (let i = 0; i < Math.ceil(total / endpoints); i++) {
  const conversation = `ses_${Math.floor(i / 4)}`;
  const checked = validateEvent('conversation.started', { conversation_id: conversation, n: i % 4 });
  await store.enqueue(widget.id, 'conversation.started', deliveryBody('conversation.started', widget.id, checked.data), undefined, undefined, conversation);
}
const lease = { owner: 'bench', ms: 60_000 };
const busy = new Map<string, number>();
let inflight: { id: string; endpointId: string }[] = [];
let claimCpu = 0;
let recordCpu = 0;
let done = 0;
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
for (;;) {
  let t = cpu();
  const got = (await store.claimDue(lease, 64 - inflight.length, { each: 4, busy }, { reachPast: false, orderHoldMs: hold })) as typeof inflight;
  claimCpu += cpu() - t;
  holdClaimed(busy, got);
  inflight.push(...got);
  if (inflight.length === 0) break;
  const finished = inflight.slice(0, batch);
  inflight = inflight.slice(batch);
  const results = succeed(busy, finished);
  t = cpu();
  await store.recordResults(lease.owner, results, 86_400_000);
  recordCpu += cpu() - t;
  done += finished.length;
}
process.stdout.write(
  `${JSON.stringify({ tree, endpoints, order: values.order, deliveries: done, claimUs: +(claimCpu / done).toFixed(1), recordUs: +(recordCpu / done).toFixed(1) })}\n`,
);
db.close();
rmSync(dir, { recursive: true, force: true });
