// CPU per delivery of what the outbox adds to a raw POST: the dispatcher (claim, SSRF guard,
// signatures, bookkeeping, recording) over a SQLite file, with the network replaced by an
// answer of 204 on the next turn of the event loop. A delivery of `bench webhooks` costs about
// this plus one raw POST, so when the bench process is CPU-bound the ratio to the raw baseline
// is at most raw / (raw + this). It also reports deliveries per second of wall time and the wall
// time of recordings over 2 ms, which show what the event loop waits for besides its CPU (SQLite's
// checkpoints syncing to disk), and runs
// the file's checkpoints as `serve` does (on their own thread, in builds that have it). Loads the
// build of a given tree, so two worktrees can be compared:
//   node dist/bench/webhooks/dispatch-cost.js --tree /work/wt-base --endpoints 10 [--deliveries 20000] [--runs 3]
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    tree: { type: 'string', default: '.' },
    endpoints: { type: 'string', default: '10' },
    deliveries: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
  },
});
const tree = resolve(values.tree);
const endpoints = Number(values.endpoints);

/* eslint-disable @typescript-eslint/no-explicit-any -- modules of another build, loaded by path */
const { openDatabase } = (await import(`${tree}/dist/src/store/sqlite.js`)) as any;
const { SqliteWebhookStore } = (await import(`${tree}/dist/src/webhooks/sqlite-store.js`)) as any;
const { Dispatcher } = (await import(`${tree}/dist/src/webhooks/dispatcher.js`)) as any;
const { deliveryBody, validateEvent } = (await import(`${tree}/dist/src/webhooks/events.js`)) as any;
const checkpointer = `${tree}/dist/src/store/checkpointer.js`;
const { BackgroundCheckpoints } = existsSync(checkpointer) ? ((await import(checkpointer)) as any) : { BackgroundCheckpoints: null };

const answer = { kind: 'response', status: 204, retryAfter: null, excerpt: '', durationMs: 1 };

/** Recordings that take longer than this are counted as stalls (a commit that checkpointed, or the CPU lost to another process). */
const STALL_MS = 2;

async function once(total: number): Promise<{ us: number; perSec: number; stallMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-cost-'));
  const db = openDatabase(join(dir, 'b.db'));
  const checkpoints = BackgroundCheckpoints ? new BackgroundCheckpoints(db, join(dir, 'b.db')) : null;
  try {
    const store = new SqliteWebhookStore(db);
    const { widget } = await store.createWidget(1, 'b', { hash: 'h', preview: 'bwk_' });
    for (let i = 0; i < endpoints; i++) {
      await store.createEndpoint(widget.id, { url: `http://127.0.0.1:9/hook/${i}`, secret: 'whsec_YmVuY2g=', events: ['conversation.started'], enabled: true });
    }
    // Conversations of four events, as in `bench webhooks`.
    for (let i = 0; i < Math.ceil(total / endpoints); i++) {
      const conversation = `ses_${Math.floor(i / 4)}`;
      const checked = validateEvent('conversation.started', { conversation_id: conversation, n: i % 4 });
      await store.enqueue(widget.id, 'conversation.started', deliveryBody('conversation.started', widget.id, checked.data), undefined, undefined, conversation);
    }
    // The filled outbox made the file busy: its checkpoint thread runs from the start, as in a busy server.
    checkpoints?.look();
    if (checkpoints?.running) await checkpoints.ready;
    const send = () => new Promise((r) => setImmediate(r, answer));
    let stallMs = 0;
    const record = store.recordResults.bind(store);
    store.recordResults = (...args: unknown[]) => {
      const t = performance.now();
      const done = record(...args);
      const ms = performance.now() - t; // better-sqlite3 is synchronous: the work is done when the promise is made
      if (ms > STALL_MS) stallMs += ms;
      return done;
    };
    const dispatcher = new Dispatcher({ store, send, allowPrivate: true, pollMs: 20, random: () => 0.5 });
    const cpu = process.cpuUsage();
    const started = performance.now();
    await dispatcher.start();
    while (dispatcher.attempts.succeeded < total) await new Promise((r) => setTimeout(r, 2));
    const used = process.cpuUsage(cpu);
    const ms = performance.now() - started;
    await dispatcher.stop();
    return { us: Math.round(((used.user + used.system) / total) * 10) / 10, perSec: Math.round((total / ms) * 1000), stallMs: Math.round(stallMs) };
  } finally {
    await checkpoints?.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The first run compiles the hot paths and is not reported.
await once(2000);
const runs: { us: number; perSec: number; stallMs: number }[] = [];
for (let i = 0; i < Number(values.runs); i++) runs.push(await once(Number(values.deliveries)));
process.stdout.write(
  `${JSON.stringify({ tree, endpoints, deliveries: Number(values.deliveries), usPerDelivery: runs.map((r) => r.us), perSec: runs.map((r) => r.perSec), recordingStallMs: runs.map((r) => r.stallMs) })}\n`,
);
