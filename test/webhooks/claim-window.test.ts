import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantId } from '../../src/identity/types.js';
import type { Send } from '../../src/net/sender.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { openWebhookStore } from '../../src/webhooks/open-store.js';
import type { WebhookStore } from '../../src/webhooks/store.js';
import type { WidgetId } from '../../src/webhooks/types.js';
import { postgresTestDatabase, sqliteTestDatabase } from '../helpers/databases.js';

/**
 * On a store whose claim is a statement (PostgreSQL), wake-ups that come within a few claim
 * durations of a claim that drained the outbox share the next claim, and results that arrive
 * within a few recording durations share the next recording. The tests make the first claim or
 * recording slow (half a second), so the window after it is two seconds, far longer than the
 * few enqueues and 204s that follow it.
 */

const SLOW_MS = 500;
const ok: Send = async () => ({ kind: 'response', status: 204, retryAfter: null, excerpt: '', durationMs: 1 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Counted {
  store: WebhookStore;
  /** Deliveries each claim handed out, in order. */
  claims: number[];
  /** Results each recording wrote, in order. */
  recordings: number[];
}

/** `store` with its claims and recordings counted, and the first claim or the first recording made slow. */
function counted(store: WebhookStore, slow: 'claim' | 'recording'): Counted {
  const c: Counted = { store, claims: [], recordings: [] };
  c.store = Object.create(store, {
    claimDue: {
      value: async (...args: Parameters<WebhookStore['claimDue']>) => {
        const got = await store.claimDue(...args);
        if (slow === 'claim' && c.claims.length === 0) await sleep(SLOW_MS);
        c.claims.push(got.length);
        return got;
      },
    },
    recordResults: {
      value: async (...args: Parameters<WebhookStore['recordResults']>) => {
        const done = await store.recordResults(...args);
        if (slow === 'recording' && c.recordings.length === 0) await sleep(SLOW_MS);
        c.recordings.push(args[1].length);
        return done;
      },
    },
  });
  return c;
}

const BACKENDS = {
  // SQLite's own claim is a read in memory; told it is a statement, the dispatcher gathers the same way.
  sqlite: async () => {
    const db = await sqliteTestDatabase();
    const store = await openWebhookStore(db.database);
    assert.equal(store.claimCost, 'memory');
    return { store: Object.create(store, { claimCost: { value: 'statement' } }) as WebhookStore, close: () => db.dispose() };
  },
  postgres: async () => {
    const db = await postgresTestDatabase();
    const store = await openWebhookStore(db.database);
    assert.equal(store.claimCost, 'statement');
    return { store, close: () => db.dispose() };
  },
};

async function outbox(store: WebhookStore): Promise<{ widget: WidgetId; enqueue(n: number): Promise<void> }> {
  const { widget } = await store.createWidget(1 as TenantId, 'w', { hash: 'h'.repeat(64), preview: 'bwk_abcd…' });
  await store.createEndpoint(widget.id, {
    url: 'http://127.0.0.1:9/hook',
    secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64'),
    events: ['lead.captured'],
    enabled: true,
  });
  let n = 0;
  return {
    widget: widget.id,
    enqueue: async (count) => {
      for (let i = 0; i < count; i++) await store.enqueue(widget.id, 'lead.captured', JSON.stringify({ n: n++ }), undefined, undefined, null);
    },
  };
}

async function until(what: () => boolean): Promise<void> {
  while (!what()) await sleep(5);
}

for (const [name, open] of Object.entries(BACKENDS)) {
  test(`${name}: events accepted within the window after a claim that drained the outbox are sent by one claim`, async () => {
    const s = await open();
    const c = counted(s.store, 'claim');
    const o = await outbox(s.store);
    const d = new Dispatcher({ store: c.store, send: ok, allowPrivate: true, owner: 'a', claimWindowMs: 60_000 });
    try {
      await d.start();
      await until(() => c.claims.length === 1); // the first claim found nothing, slowly
      // One at a time, each a turn of its own, all well inside the two seconds.
      for (let i = 0; i < 5; i++) {
        await o.enqueue(1);
        d.notify();
        await sleep(20);
      }
      await until(() => d.attempts.succeeded === 5);
      assert.equal(c.claims[0], 0);
      assert.deepEqual(
        c.claims.filter((n) => n > 0),
        [5],
        'the five wake-ups shared one claim',
      );
    } finally {
      await d.stop();
      await s.close();
    }
  });

  test(`${name}: results that arrive within the window after a recording are written by one recording`, async () => {
    const s = await open();
    const c = counted(s.store, 'recording');
    const o = await outbox(s.store);
    const d = new Dispatcher({ store: c.store, send: ok, allowPrivate: true, owner: 'a', claimWindowMs: 60_000 });
    let stopped = false;
    try {
      await d.start();
      await o.enqueue(1);
      d.notify();
      await until(() => d.attempts.succeeded === 1);
      await until(() => c.recordings.length === 1); // the first result, recorded slowly
      // Four more, sent one at a time (each after the last one's 204), inside the two seconds.
      for (let i = 0; i < 4; i++) {
        await o.enqueue(1);
        d.notify();
        await until(() => d.attempts.succeeded === 2 + i);
      }
      await d.stop();
      stopped = true;
      assert.deepEqual(c.recordings, [1, 4], 'the four results shared one recording');
      const page = await s.store.listDeliveries((await s.store.listEndpoints(o.widget)).data[0]!.id, { limit: 10, before: null });
      assert.deepEqual(
        page.data.map((r) => r.status),
        Array(5).fill('succeeded'),
      );
    } finally {
      if (!stopped) await d.stop();
      await s.close();
    }
  });

  test(`${name}: a failed attempt's result is recorded without waiting for the window`, async () => {
    const s = await open();
    const c = counted(s.store, 'recording');
    const o = await outbox(s.store);
    // Event 1 fails at once; event 2 succeeds 200 ms later; the others succeed at once.
    const send: Send = async ({ body }) => {
      const n = (JSON.parse(body) as { n: number }).n;
      if (n === 1) return { kind: 'response', status: 503, retryAfter: null, excerpt: '', durationMs: 1 };
      if (n === 2) await sleep(200);
      return { kind: 'response', status: 204, retryAfter: null, excerpt: '', durationMs: 1 };
    };
    const d = new Dispatcher({ store: c.store, send, allowPrivate: true, owner: 'a', claimWindowMs: 60_000, retryDelays: [600_000] });
    let stopped = false;
    try {
      await d.start();
      await o.enqueue(1);
      d.notify();
      await until(() => c.recordings.length === 1); // event 0's success, recorded slowly: the window is now two seconds
      await o.enqueue(2);
      d.notify();
      await until(() => d.attempts.succeeded === 2 && d.attempts.retrying === 1);
      await d.stop();
      stopped = true;
      // Windowed, the failure would have waited and shared a recording with event 2's success.
      assert.deepEqual(c.recordings, [1, 1, 1]);
    } finally {
      if (!stopped) await d.stop();
      await s.close();
    }
  });
}

test('a claim window must be a whole number of milliseconds, 0 or more', () => {
  for (const claimWindowMs of [-1, 1.5, Number.NaN])
    assert.throws(
      () => new Dispatcher({ store: { claimCost: 'statement' } as WebhookStore, send: ok, allowPrivate: true, claimWindowMs }),
      /claimWindowMs must be an integer ≥ 0/,
    );
});
