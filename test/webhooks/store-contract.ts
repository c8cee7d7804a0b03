import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantId } from '../../src/identity/types.js';
import type { AttemptResult, WebhookStore } from '../../src/webhooks/store.js';
import { openWebhookStore } from '../../src/webhooks/open-store.js';
import type { TestDatabase } from '../helpers/databases.js';
import type { DeliveryId, EndpointId, EventType, WidgetId } from '../../src/webhooks/types.js';

/** A store under test on a fresh, empty database; `close` releases it and removes the data. */
export interface StoreUnderTest {
  store: WebhookStore;
  /** One process serves the store (SQLite): requeueInflight() takes back every claim at start. */
  exclusive: boolean;
  /** Another store on the same data, as a second replica would open it. */
  second(): Promise<WebhookStore>;
  close(): Promise<void>;
}

/** Builds a store on a fresh database, reading time from `now`. */
export type StoreFactory = (now: () => number) => Promise<StoreUnderTest>;

/** A factory on a fresh test database of one backend; `exclusive` as the backend's store promises it. */
export function onTestDatabase(open: () => Promise<TestDatabase>, exclusive: boolean): StoreFactory {
  return async (now) => {
    const t = await open();
    return { store: await openWebhookStore(t.database, now), exclusive, second: () => openWebhookStore(t.second(), now), close: () => t.dispose() };
  };
}

const T1 = 1 as TenantId;
const T2 = 2 as TenantId;
const KEY = { hash: 'h'.repeat(64), preview: 'bwk_abcd…' };
const START = 1_700_000_000_000;
/** Two dispatchers' leases, as two replicas would hold them. */
const A = { owner: 'host-a/1/aaaa', ms: 60_000 };
const B = { owner: 'host-b/2/bbbb', ms: 60_000 };

interface Fixture {
  store: WebhookStore;
  second(): Promise<WebhookStore>;
  exclusive: boolean;
  clock: { now: () => number; advance(ms: number): void; at(): number };
  widget: WidgetId;
  endpoint(events?: EventType[], enabled?: boolean): Promise<EndpointId>;
}

async function withStore(factory: StoreFactory, body: (f: Fixture) => Promise<void>): Promise<void> {
  let t = START;
  const clock = { now: () => t, advance: (ms: number) => void (t += ms), at: () => t };
  const { store, exclusive, second, close } = await factory(clock.now);
  try {
    const { widget } = await store.createWidget(T1, 'w', KEY);
    let n = 0;
    const endpoint = async (events: EventType[] = ['lead.captured'], enabled = true) =>
      (await store.createEndpoint(widget.id, { url: `https://example.com/hook/${++n}`, secret: `s${n}`, events, enabled })).id;
    await body({ store, exclusive, second, clock, widget: widget.id, endpoint });
  } finally {
    await close();
  }
}

const unlimited = { each: Infinity, busy: new Map<string, number>() };
const ok = (d: { id: DeliveryId; endpointId: EndpointId }, startedAt: number): AttemptResult => ({
  deliveryId: d.id,
  endpointId: d.endpointId,
  attempt: { startedAt, durationMs: 12, statusCode: 200, responseExcerpt: 'ok', error: null, outcome: 'succeeded' },
  next: { status: 'succeeded' },
  endpoint: 'success',
});
const failed = (
  d: { id: DeliveryId; endpointId: EndpointId },
  startedAt: number,
  next: AttemptResult['next'],
  endpoint: AttemptResult['endpoint'] = 'failure',
  statusCode = 500,
): AttemptResult => ({
  deliveryId: d.id,
  endpointId: d.endpointId,
  attempt: { startedAt, durationMs: 7, statusCode, responseExcerpt: 'down', error: `HTTP ${statusCode}`, outcome: 'failed' },
  next,
  endpoint,
});

/**
 * The behaviour every WebhookStore must show, whatever holds the data. Each implementation's
 * test file calls this with a factory for a fresh store.
 */
export function webhookStoreContract(name: string, factory: StoreFactory): void {
  describe(`WebhookStore contract: ${name}`, () => {
    test('widgets belong to one tenant; widget keys resolve until revoked', async () => {
      await withStore(factory, async ({ store, widget }) => {
        const { widget: second, key } = await store.createWidget(T1, 'second', { hash: 'k'.repeat(64), preview: 'p' });
        await store.createWidget(T2, 'other', { hash: 'o'.repeat(64), preview: 'p' });
        assert.match(second.id, /^wid_[0-9a-z]{20}$/);
        assert.equal(second.createdAt, START);
        assert.deepEqual(
          (await store.listWidgets(T1)).data.map((w) => w.name),
          ['w', 'second'],
        );
        assert.equal((await store.getWidget(T1, second.id))?.name, 'second');
        assert.equal(await store.getWidget(T2, second.id), null);
        assert.equal((await store.findWidget(second.id))?.tenantId, T1);
        assert.equal(await store.findWidget('wid_nope'), null);

        assert.deepEqual(await store.findWidgetKey('k'.repeat(64)), second);
        const extra = await store.createWidgetKey(widget, { hash: 'x'.repeat(64), preview: 'bwk_x…' });
        assert.equal(extra.revokedAt, null);
        assert.equal((await store.listWidgetKeys(widget)).data.length, 2);
        assert.equal(await store.revokeWidgetKey(second.id, key.id), true);
        assert.equal(await store.revokeWidgetKey(second.id, key.id), false, 'a revoked key is not revoked twice');
        assert.equal(await store.findWidgetKey('k'.repeat(64)), null);
        assert.equal((await store.listWidgetKeys(second.id)).data[0]!.revokedAt, START);
      });
    });

    test('widgets, widget keys and endpoints are read a page at a time: at most limit, from the position the previous page named', async () => {
      await withStore(factory, async ({ store, widget }) => {
        for (let i = 0; i < 4; i++) await store.createWidget(T1, `w${i}`, { hash: `${i}`.repeat(64), preview: 'p' });
        for (let i = 0; i < 4; i++) await store.createWidgetKey(widget, { hash: `k${i}`.padEnd(64, 'x'), preview: `p${i}` });
        const input = { url: 'https://example.com/a', secret: 'whsec_x', events: ['lead.captured'] as EventType[], enabled: true };
        for (let i = 0; i < 5; i++) await store.createEndpoint(widget, { ...input, url: `https://example.com/${i}` });
        const walk = async <T>(read: (page: { limit: number; from: number | null }) => Promise<{ data: T[]; nextCursor: number | null }>) => {
          const pages: T[][] = [];
          let from: number | null = null;
          do {
            const page = await read({ limit: 2, from });
            pages.push(page.data);
            from = page.nextCursor;
          } while (from !== null && pages.length < 10);
          return pages;
        };
        assert.deepEqual(
          (await walk((p) => store.listWidgets(T1, p))).map((page) => page.map((w) => w.name)),
          [['w', 'w0'], ['w1', 'w2'], ['w3']],
        );
        const keys = (await walk((p) => store.listWidgetKeys(widget, p))).map((page) => page.map((k) => k.preview));
        assert.deepEqual(
          keys.map((page) => page.length),
          [2, 2, 1],
        );
        assert.deepEqual(
          keys.flat(),
          (await store.listWidgetKeys(widget)).data.map((k) => k.preview),
          'every key once, in the order of the whole list',
        );
        assert.deepEqual(
          (await walk((p) => store.listEndpoints(widget, p))).map((page) => page.map((e) => e.url)),
          [['https://example.com/0', 'https://example.com/1'], ['https://example.com/2', 'https://example.com/3'], ['https://example.com/4']],
        );
        assert.deepEqual((await store.listWidgets(T1, { limit: 5, from: null })).nextCursor, null, 'a page that holds the rest names no next one');
        assert.equal(await store.countWidgets(T1), 5);
        assert.equal(await store.countWidgets(T2), 0);
      });
    });

    test('endpoints: create up to a limit, read, patch, rotate the secret, delete', async () => {
      await withStore(factory, async ({ store, widget, clock }) => {
        const input = { url: 'https://example.com/a', secret: 'whsec_x', events: ['lead.captured', 'conversation.ended'] as EventType[], enabled: true };
        const a = await store.createEndpoint(widget, input, 2);
        assert.notEqual(a, 'limit');
        if (a === 'limit') return;
        assert.match(a.id, /^ep_/);
        assert.deepEqual(
          { url: a.url, secret: a.secret, events: a.events, enabled: a.enabled, disabledReason: a.disabledReason, failingSince: a.failingSince },
          { url: input.url, secret: input.secret, events: input.events, enabled: true, disabledReason: null, failingSince: null },
        );
        const off = await store.createEndpoint(widget, { ...input, enabled: false }, 2);
        assert.equal(off !== 'limit' && off.disabledReason, 'user');
        assert.equal(await store.createEndpoint(widget, input, 2), 'limit');
        assert.deepEqual(
          (await store.listEndpoints(widget)).data.map((e) => e.id),
          [a.id, off !== 'limit' ? off.id : ''],
        );
        assert.equal(await store.getEndpoint('wid_other' as WidgetId, a.id), null);

        clock.advance(1000);
        const patched = await store.updateEndpoint(widget, a.id, { url: 'https://example.com/b', events: ['lead.captured'] });
        assert.equal(patched?.url, 'https://example.com/b');
        assert.deepEqual(patched?.events, ['lead.captured']);
        assert.equal(patched?.updatedAt, START + 1000);
        assert.equal(patched?.createdAt, START);
        assert.equal(await store.updateEndpoint(widget, 'ep_nope' as EndpointId, { enabled: false }), null);

        const rotated = await store.rotateSecret(widget, a.id, 'whsec_new', START + 86_400_000);
        assert.equal(rotated?.secret, 'whsec_new');
        assert.equal(rotated?.previousSecret, 'whsec_x');
        assert.equal(rotated?.previousSecretExpiresAt, START + 86_400_000);
        assert.equal(await store.rotateSecret(widget, 'ep_nope' as EndpointId, 's', 0), null);

        assert.equal(await store.deleteEndpoint(widget, a.id), true);
        assert.equal(await store.deleteEndpoint(widget, a.id), false);
        assert.equal(await store.getEndpoint(widget, a.id), null);
      });
    });

    test('enqueue makes one pending delivery per enabled, subscribed endpoint; a once-key stores an event once', async () => {
      await withStore(factory, async ({ store, widget, endpoint }) => {
        const lead = await endpoint(['lead.captured']);
        await endpoint(['conversation.ended']);
        await endpoint(['lead.captured'], false);
        const both = await endpoint(['lead.captured', 'conversation.started']);
        const e = await store.enqueue(widget, 'lead.captured', '{"event":"lead.captured"}');
        assert.match(e.eventId, /^evt_/);
        assert.equal(e.duplicate, false);
        assert.equal(e.deliveries.length, 2);
        const listed = (await store.listDeliveries(lead, { limit: 10, before: null })).data;
        assert.equal(listed.length, 1);
        assert.deepEqual(
          {
            eventId: listed[0]!.eventId,
            status: listed[0]!.status,
            attempts: listed[0]!.attempts,
            nextAttemptAt: listed[0]!.nextAttemptAt,
            event: listed[0]!.event,
            widgetId: listed[0]!.widgetId,
          },
          { eventId: e.eventId, status: 'pending', attempts: 0, nextAttemptAt: START, event: 'lead.captured', widgetId: widget },
        );
        const once = await store.enqueue(widget, 'conversation.started', '{}', 'conversation.started:ses_1');
        assert.equal(once.deliveries.length, 1);
        const again = await store.enqueue(widget, 'conversation.started', '{}', 'conversation.started:ses_1');
        assert.deepEqual(again, { eventId: once.eventId, deliveries: [], duplicate: true });
        assert.equal((await store.listDeliveries(both, { limit: 10, before: null })).data.length, 2);
        assert.equal((await store.enqueue(widget, 'escalation.triggered', '{}')).deliveries.length, 0);
      });
    });

    test('claimDue hands out due deliveries oldest first, once, within the per-endpoint limit', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const a = await endpoint();
        const b = await endpoint();
        const first = await store.enqueue(widget, 'lead.captured', '{"n":1}');
        clock.advance(1);
        await store.enqueue(widget, 'lead.captured', '{"n":2}');
        clock.advance(1);
        await store.enqueue(widget, 'lead.captured', '{"n":3}');
        const claimed = await store.claimDue(A, 3, { each: 10, busy: new Map([[a, 9]]) });
        assert.equal(claimed.length, 3);
        assert.equal(claimed.filter((d) => d.endpointId === a).length, 1, 'at most one for endpoint a');
        assert.equal(claimed[0]!.body, '{"n":1}');
        assert.ok(first.deliveries.includes(claimed[0]!.id));
        const ep = claimed.find((d) => d.endpointId === b)!;
        assert.deepEqual(
          { url: ep.url, secret: ep.secret, event: ep.event, attempts: ep.attempts, createdAt: ep.createdAt, previousSecret: ep.previousSecret },
          { url: 'https://example.com/hook/2', secret: 's2', event: 'lead.captured', attempts: 0, createdAt: START, previousSecret: null },
        );
        for (const d of claimed) assert.equal((await store.getDelivery(d.endpointId, d.id))?.status, 'inflight');
        const rest = await store.claimDue(A, 10, unlimited);
        assert.equal(rest.length, 3, 'the three left, none of the claimed ones again');
        assert.equal(new Set([...claimed, ...rest].map((d) => d.id)).size, 6);
        assert.deepEqual(await store.claimDue(A, 10, unlimited), []);
      });
    });

    test('claimDue with reachPast finds deliveries queued behind a saturated endpoint', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const busy = await endpoint(['conversation.ended']);
        const quiet = await endpoint(['lead.captured']);
        for (let i = 0; i < 30; i++) await store.enqueue(widget, 'conversation.ended', '{}');
        clock.advance(1);
        await store.enqueue(widget, 'lead.captured', '{}');
        const perEndpoint = { each: 4, busy: new Map([[busy, 4]]) };
        const reached = await store.claimDue(A, 2, perEndpoint, { reachPast: true });
        assert.deepEqual(
          reached.map((d) => d.endpointId),
          [quiet],
        );
      });
    });

    test('claimDue reaching past a saturated endpoint never hands out one delivery twice', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const busy = await endpoint(['conversation.ended']);
        await endpoint(['lead.captured']);
        await store.enqueue(widget, 'lead.captured', '{}');
        for (let i = 0; i < 20; i++) {
          clock.advance(1);
          await store.enqueue(widget, 'conversation.ended', '{}');
        }
        for (let i = 0; i < 3; i++) {
          clock.advance(1);
          await store.enqueue(widget, 'lead.captured', '{}');
        }
        const claimed = await store.claimDue(A, 6, { each: 10, busy: new Map([[busy, 9]]) }, { reachPast: true });
        assert.equal(new Set(claimed.map((d) => d.id)).size, claimed.length, 'no delivery twice in one claim');
        assert.deepEqual([claimed.length, claimed.filter((d) => d.endpointId === busy).length], [5, 1]);
      });
    });

    test('claimDue leaves deliveries not yet due; nextDueAt answers the earliest pending time', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        await endpoint();
        assert.equal(await store.nextDueAt(), null);
        await store.enqueue(widget, 'lead.captured', '{}');
        const [d] = await store.claimDue(A, 1, unlimited);
        assert.equal(await store.nextDueAt(), null, 'an in-flight delivery is not pending');
        await store.recordResults(A.owner, [failed(d!, clock.at(), { status: 'pending', at: START + 5000 })], 3_600_000);
        assert.equal(await store.nextDueAt(), START + 5000);
        clock.advance(4999);
        assert.deepEqual(await store.claimDue(A, 1, unlimited), []);
        clock.advance(1);
        const [again] = await store.claimDue(A, 1, unlimited);
        assert.equal(again?.id, d!.id);
        assert.equal(again?.attempts, 1);
      });
    });

    test('recordResults writes the attempt log, the delivery state and the endpoint health', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        await store.enqueue(widget, 'lead.captured', '{}');
        await store.enqueue(widget, 'lead.captured', '{}');
        const [x, y] = await store.claimDue(A, 2, unlimited);
        clock.advance(10);
        const { disabled } = await store.recordResults(A.owner, [ok(x!, START), failed(y!, START, { status: 'pending', at: START + 5000 })], 3_600_000);
        assert.deepEqual(disabled, []);
        const done = await store.getDelivery(ep, x!.id);
        assert.equal(done?.status, 'succeeded');
        assert.equal(done?.attempts, 1);
        assert.equal(done?.lastStatusCode, 200);
        assert.equal(done?.nextAttemptAt, null);
        assert.equal(done?.updatedAt, START + 10);
        assert.deepEqual(done?.attemptLog, [
          { deliveryId: x!.id, startedAt: START, durationMs: 12, statusCode: 200, responseExcerpt: 'ok', error: null, outcome: 'succeeded' },
        ]);
        const retrying = await store.getDelivery(ep, y!.id);
        assert.equal(retrying?.status, 'pending');
        assert.equal(retrying?.nextAttemptAt, START + 5000);
        assert.equal(retrying?.lastError, 'HTTP 500');
        assert.equal((await store.getEndpoint(widget, ep))?.failingSince, START, 'the failure after the success opens a failing streak');
      });
    });

    test('a first attempt that succeeds is in the attempt log, before the attempts of a later manual retry; a failed first attempt and its retry are both there', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        await store.enqueue(widget, 'lead.captured', '{"n":1}');
        await store.enqueue(widget, 'lead.captured', '{"n":2}');
        const [x, y] = await store.claimDue(A, 2, unlimited);
        // Successes alone in a batch (the common case), then a failure alone.
        await store.recordResults(A.owner, [ok(x!, START)], 3_600_000);
        await store.recordResults(A.owner, [failed(y!, START, { status: 'pending', at: START + 5 })], 3_600_000);
        const first = { deliveryId: x!.id, startedAt: START, durationMs: 12, statusCode: 200, responseExcerpt: 'ok', error: null, outcome: 'succeeded' };
        assert.deepEqual((await store.getDelivery(ep, x!.id))?.attemptLog, [first]);
        clock.advance(10);
        assert.notEqual(await store.retryDelivery(ep, x!.id), null);
        const both = await store.claimDue(A, 2, unlimited);
        const again = both.find((d) => d.id === x!.id);
        const later = both.find((d) => d.id === y!.id);
        assert.deepEqual([again?.attempts, later?.attempts], [1, 1]);
        const answered = { ...ok(again!, START + 10), attempt: { ...ok(again!, START + 10).attempt, statusCode: 204, responseExcerpt: 'again' } };
        await store.recordResults(A.owner, [answered, ok(later!, START + 10)], 3_600_000);
        const done = await store.getDelivery(ep, x!.id);
        assert.deepEqual([done?.status, done?.attempts, done?.lastStatusCode], ['succeeded', 2, 204]);
        assert.deepEqual(done?.attemptLog, [first, { ...first, startedAt: START + 10, statusCode: 204, responseExcerpt: 'again' }]);
        const retried = await store.getDelivery(ep, y!.id);
        assert.deepEqual(
          retried?.attemptLog.map((a) => [a.startedAt, a.statusCode, a.outcome]),
          [
            [START, 500, 'failed'],
            [START + 10, 200, 'succeeded'],
          ],
        );
      });
    });

    test('an endpoint failing past disableAfterMs is disabled and its pending deliveries fail; enabling clears the streak', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        await store.enqueue(widget, 'lead.captured', '{}');
        const [d] = await store.claimDue(A, 1, unlimited);
        await store.recordResults(A.owner, [failed(d!, clock.at(), { status: 'pending', at: clock.at() + 1 })], 1000);
        clock.advance(1000);
        const [again] = await store.claimDue(A, 2, unlimited);
        assert.equal(again?.id, d!.id);
        await store.enqueue(widget, 'lead.captured', '{}');
        const { disabled } = await store.recordResults(A.owner, [failed(again!, clock.at(), { status: 'pending', at: clock.at() + 1 })], 1000);
        assert.deepEqual(disabled, [ep]);
        const e = await store.getEndpoint(widget, ep);
        assert.equal(e?.enabled, false);
        assert.equal(e?.disabledReason, 'failing');
        assert.equal((await store.getDelivery(ep, d!.id))?.status, 'failed', 'no retry once the endpoint is disabled');
        const page = await store.listDeliveries(ep, { limit: 10, before: null, status: 'failed' });
        assert.equal(page.data.length, 2, 'the pending one failed with the endpoint');
        assert.ok(page.data.some((x) => x.lastError === 'endpoint disabled (failing)'));
        const enabled = await store.updateEndpoint(widget, ep, { enabled: true });
        assert.deepEqual([enabled?.enabled, enabled?.disabledReason, enabled?.failingSince], [true, null, null]);
      });
    });

    test('a 410 disables the endpoint at once; an attempt finishing after a disable does not retry', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const gone = await endpoint(['lead.captured']);
        const other = await endpoint(['conversation.ended']);
        await store.enqueue(widget, 'lead.captured', '{}');
        await store.enqueue(widget, 'conversation.ended', '{}');
        const claimed = await store.claimDue(A, 2, unlimited);
        const g = claimed.find((c) => c.endpointId === gone)!;
        const o = claimed.find((c) => c.endpointId === other)!;
        await store.updateEndpoint(widget, other, { enabled: false });
        const { disabled } = await store.recordResults(
          A.owner,
          [failed(g, clock.at(), { status: 'failed' }, 'gone', 410), failed(o, clock.at(), { status: 'pending', at: clock.at() + 5 })],
          3_600_000,
        );
        assert.deepEqual(disabled, [gone]);
        assert.equal((await store.getEndpoint(widget, gone))?.disabledReason, 'gone');
        assert.equal((await store.getDelivery(other, o.id))?.status, 'failed');
        assert.equal((await store.getEndpoint(widget, other))?.disabledReason, 'user');
      });
    });

    test('one batch with several results for one endpoint: each result sees what the ones before it did to the endpoint', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        for (let i = 0; i < 6; i++) await store.enqueue(widget, 'lead.captured', '{}');
        const [a, b, c, d, e, f] = await store.claimDue(A, 6, unlimited);
        // Failures then a success: the streak opens at the first failure and the success closes it.
        await store.recordResults(
          A.owner,
          [failed(a!, START + 1, { status: 'pending', at: START + 5000 }), failed(b!, START + 2, { status: 'pending', at: START + 5000 })],
          3_600_000,
        );
        assert.equal((await store.getEndpoint(widget, ep))?.failingSince, START + 1);
        await store.recordResults(A.owner, [failed(c!, START + 3, { status: 'pending', at: START + 5000 }), ok(d!, START + 4)], 3_600_000);
        assert.equal((await store.getEndpoint(widget, ep))?.failingSince, null);
        // A 410 and then a failure that would retry, in one batch: the endpoint is gone, so the second fails too.
        clock.advance(10);
        const { disabled } = await store.recordResults(
          A.owner,
          [failed(e!, clock.at(), { status: 'failed' }, 'gone', 410), failed(f!, clock.at(), { status: 'pending', at: clock.at() + 5000 })],
          3_600_000,
        );
        assert.deepEqual(disabled, [ep], 'disabled once');
        assert.equal((await store.getDelivery(ep, f!.id))?.status, 'failed');
        for (const x of [a, b, c]) assert.equal((await store.getDelivery(ep, x!.id))?.status, 'failed', 'the pending retries failed with the endpoint');
        for (const x of [a, b, c, d, e, f]) assert.equal((await store.getDelivery(ep, x!.id))?.attemptLog.length, 1, 'one attempt logged per result');
      });
    });

    test('requeueInflight at start: an exclusive store makes every claim due now, a shared one leaves leases to expire', async () => {
      await withStore(factory, async ({ store, exclusive, widget, endpoint, clock }) => {
        const ep = await endpoint();
        await store.enqueue(widget, 'lead.captured', '{}');
        await store.enqueue(widget, 'lead.captured', '{}');
        const claimed = await store.claimDue(A, 2, unlimited);
        clock.advance(50);
        assert.equal(await store.requeueInflight(), exclusive ? 2 : 0);
        for (const d of claimed) {
          const r = await store.getDelivery(ep, d.id);
          assert.deepEqual([r?.status, r?.nextAttemptAt], exclusive ? ['pending', START + 50] : ['inflight', START]);
        }
        assert.equal((await store.claimDue(B, 5, unlimited)).length, exclusive ? 2 : 0);
      });
    });

    test('a lease keeps a delivery from other claimants until it lapses; then another claims it and the late result is dropped', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        await store.enqueue(widget, 'lead.captured', '{}');
        const [d] = await store.claimDue(A, 5, unlimited);
        assert.ok(d);
        clock.advance(A.ms - 1);
        assert.deepEqual(await store.claimDue(B, 5, unlimited), [], 'held by A until its lease lapses');
        clock.advance(1);
        const [taken] = await store.claimDue(B, 5, unlimited);
        assert.equal(taken?.id, d.id, 'a lapsed lease is claimable again, under the same delivery id');
        assert.equal(taken?.attempts, 0, 'the lost attempt was never recorded');
        assert.deepEqual(await store.claimDue(A, 5, unlimited), [], 'B now holds it');
        const late = await store.recordResults(A.owner, [ok(d, START)], 3_600_000);
        assert.equal(late.lost, 1);
        assert.equal((await store.getDelivery(ep, d.id))?.status, 'inflight', "A's late result changed nothing");
        const mine = await store.recordResults(B.owner, [failed(taken, clock.at(), { status: 'pending', at: clock.at() + 5 })], 3_600_000);
        assert.equal(mine.lost, 0);
        const r = await store.getDelivery(ep, d.id);
        assert.deepEqual([r?.status, r?.attempts, r?.attemptLog.length], ['pending', 1, 1]);
        clock.advance(5);
        assert.equal((await store.claimDue(A, 5, unlimited))[0]?.id, d.id, 'a finished attempt clears the lease: anyone claims the retry');
      });
    });

    test('replicas claiming at once from one outbox never get the same delivery', async () => {
      await withStore(factory, async ({ store, second, widget, endpoint }) => {
        await endpoint();
        const total = 120;
        for (let i = 0; i < total; i++) await store.enqueue(widget, 'lead.captured', `{"i":${i}}`);
        const replicas = [store, await second(), await second()];
        const owners = replicas.map((_, i) => ({ owner: `replica-${i}`, ms: 60_000 }));
        const got: string[] = [];
        for (;;) {
          const batches = await Promise.all(replicas.map((r, i) => r.claimDue(owners[i]!, 7, unlimited)));
          if (batches.every((b) => b.length === 0)) break;
          for (const b of batches) got.push(...b.map((d) => d.id));
        }
        assert.equal(got.length, total);
        assert.equal(new Set(got).size, total, 'no delivery claimed twice');
      });
    });

    test("releaseLeases hands back only its owner's claims, due at once", async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        for (let i = 0; i < 3; i++) await store.enqueue(widget, 'lead.captured', '{}');
        const mine = await store.claimDue(A, 2, unlimited);
        const theirs = await store.claimDue(B, 5, unlimited);
        assert.deepEqual([mine.length, theirs.length], [2, 1]);
        clock.advance(10);
        assert.equal(await store.releaseLeases(A.owner), 2);
        for (const d of mine) assert.deepEqual(((r) => [r?.status, r?.nextAttemptAt])(await store.getDelivery(ep, d.id)), ['pending', START + 10]);
        assert.equal((await store.getDelivery(ep, theirs[0]!.id))?.status, 'inflight');
        const again = await store.claimDue(B, 5, unlimited);
        assert.deepEqual(new Set(again.map((d) => d.id)), new Set(mine.map((d) => d.id)));
        assert.equal(await store.releaseLeases(A.owner), 0);
      });
    });

    test('releaseLeases with ids hands back those of its own claims only, unattempted, and leaves the rest held', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        for (let i = 0; i < 3; i++) await store.enqueue(widget, 'lead.captured', '{}');
        const mine = await store.claimDue(A, 2, unlimited);
        const theirs = await store.claimDue(B, 5, unlimited);
        clock.advance(10);
        assert.equal(await store.releaseLeases(A.owner, [mine[0]!.id, theirs[0]!.id]), 1, "another owner's claim is not handed back");
        const back = await store.getDelivery(ep, mine[0]!.id);
        assert.deepEqual([back?.status, back?.nextAttemptAt, back?.attempts, back?.attemptLog.length], ['pending', START + 10, 0, 0]);
        assert.equal((await store.getDelivery(ep, mine[1]!.id))?.status, 'inflight');
        assert.equal((await store.getDelivery(ep, theirs[0]!.id))?.status, 'inflight');
        assert.deepEqual(
          (await store.claimDue(B, 5, unlimited)).map((d) => d.id),
          [mine[0]!.id],
        );
      });
    });

    test('the delivery log pages newest first with a cursor and a status filter', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        const ids: DeliveryId[] = [];
        for (let i = 0; i < 5; i++) ids.push(...(await store.enqueue(widget, 'lead.captured', `{"i":${i}}`)).deliveries);
        const [d] = await store.claimDue(A, 1, unlimited);
        await store.recordResults(A.owner, [ok(d!, clock.at())], 3_600_000);
        const p1 = await store.listDeliveries(ep, { limit: 2, before: null });
        assert.deepEqual(
          p1.data.map((x) => x.id),
          [ids[4], ids[3]],
        );
        assert.equal(typeof p1.nextCursor, 'number');
        const p2 = await store.listDeliveries(ep, { limit: 2, before: p1.nextCursor });
        assert.deepEqual(
          p2.data.map((x) => x.id),
          [ids[2], ids[1]],
        );
        const p3 = await store.listDeliveries(ep, { limit: 2, before: p2.nextCursor });
        assert.deepEqual(
          p3.data.map((x) => x.id),
          [ids[0]],
        );
        assert.equal(p3.nextCursor, null);
        const done = await store.listDeliveries(ep, { limit: 10, before: null, status: 'succeeded' });
        assert.deepEqual(
          done.data.map((x) => x.id),
          [ids[0]],
        );
        assert.equal(await store.getDelivery(ep, 'dlv_nope'), null);
      });
    });

    test('retryDelivery requeues a finished delivery but not one in flight; recoverFailed requeues failures since a time', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        const [old] = (await store.enqueue(widget, 'lead.captured', '{}')).deliveries;
        clock.advance(100);
        await store.enqueue(widget, 'lead.captured', '{}');
        const claimed = await store.claimDue(A, 2, unlimited);
        assert.equal(await store.retryDelivery(ep, old!), 'inflight');
        clock.advance(100);
        await store.recordResults(
          A.owner,
          claimed.map((c) => failed(c, clock.at(), { status: 'failed' })),
          3_600_000,
        );
        const retried = await store.retryDelivery(ep, old!);
        assert.ok(retried && retried !== 'inflight');
        assert.deepEqual([retried.status, retried.nextAttemptAt], ['pending', START + 200]);
        assert.equal(await store.retryDelivery(ep, 'dlv_nope' as DeliveryId), null);
        assert.equal(await store.recoverFailed(ep, START + 100), 1, 'only the failure created at or after since');
        assert.equal(await store.recoverFailed(ep, START), 0, 'nothing failed is left');
        assert.equal((await store.claimDue(A, 5, unlimited)).length, 2);
      });
    });

    test('prune deletes finished deliveries last touched before a time and the events left without any', async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint();
        const [keep] = (await store.enqueue(widget, 'lead.captured', '{}')).deliveries;
        const [old] = (await store.enqueue(widget, 'lead.captured', '{}')).deliveries;
        const claimed = await store.claimDue(A, 2, unlimited);
        await store.recordResults(
          A.owner,
          claimed.filter((c) => c.id === old).map((c) => ok(c, clock.at())),
          3_600_000,
        );
        await store.recordResults(
          A.owner,
          claimed.filter((c) => c.id === keep).map((c) => failed(c, clock.at(), { status: 'pending', at: clock.at() })),
          3_600_000,
        );
        clock.advance(1000);
        assert.deepEqual(await store.prune(START + 1), { deliveries: 1, events: 1 });
        assert.equal(await store.getDelivery(ep, old!), null);
        assert.equal((await store.getDelivery(ep, keep!))?.status, 'pending');
        assert.deepEqual(await store.prune(START + 1), { deliveries: 0, events: 0 });
      });
    });

    test("order: a conversation's later delivery waits for an unfinished earlier one to the same endpoint, up to the bound, then goes on with a note", async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ep = await endpoint(['conversation.started', 'conversation.ended', 'lead.captured']);
        const body = (c: string) => JSON.stringify({ event: 'lead.captured', widget_id: widget, data: { conversation_id: c } });
        const [a1] = (await store.enqueue(widget, 'lead.captured', body('ses_a'))).deliveries;
        const [a2] = (await store.enqueue(widget, 'lead.captured', body('ses_a'))).deliveries;
        const [a3] = (await store.enqueue(widget, 'lead.captured', body('ses_a'), undefined, undefined, 'ses_a')).deliveries;
        const [b1] = (await store.enqueue(widget, 'lead.captured', body('ses_b'))).deliveries;
        const hold = { orderHoldMs: 600_000 };
        const first = await store.claimDue(A, 10, unlimited, hold);
        assert.deepEqual(first.map((d) => d.id).sort(), [a1, b1].sort(), 'one per conversation; another conversation does not wait');
        await store.recordResults(
          A.owner,
          first.map((d) => (d.id === a1 ? failed(d, clock.at(), { status: 'pending', at: clock.at() + 5000 }) : ok(d, clock.at()))),
          86_400_000,
        );
        clock.advance(5000);
        const retry = await store.claimDue(A, 10, unlimited, hold);
        assert.deepEqual(
          retry.map((d) => d.id),
          [a1],
          'the retry goes first; the later ones still wait',
        );
        await store.recordResults(A.owner, [ok(retry[0]!, clock.at())], 86_400_000);
        const next = await store.claimDue(A, 10, unlimited, hold);
        assert.deepEqual(
          next.map((d) => d.id),
          [a2],
        );
        assert.equal(next[0]!.orderNote, null);
        await store.recordResults(A.owner, [failed(next[0]!, clock.at(), { status: 'pending', at: clock.at() + 3_600_000 })], 86_400_000);
        assert.deepEqual(await store.claimDue(A, 10, unlimited, hold), [], 'a3 waits behind a2');
        clock.advance(600_000);
        const past = await store.claimDue(A, 10, unlimited, hold);
        assert.deepEqual(
          past.map((d) => d.id),
          [a3],
          'past the bound it goes on',
        );
        assert.match(past[0]!.orderNote ?? '', new RegExp(`sent before ${a2} .*still pending`));
        assert.match((await store.getDelivery(ep, a3!))?.orderNote ?? '', new RegExp(a2!));
      });
    });

    test('order off (orderHoldMs 0): every due delivery of a conversation is claimed at once', async () => {
      await withStore(factory, async ({ store, widget, endpoint }) => {
        await endpoint();
        for (let i = 0; i < 3; i++) await store.enqueue(widget, 'lead.captured', '{}', undefined, undefined, 'ses_same');
        assert.equal((await store.claimDue(A, 10, unlimited, { orderHoldMs: 0 })).length, 3);
      });
    });

    test('rate_limit: attempts spaced by rateSpacingMs, one slot never spent twice, even by a second replica', async () => {
      await withStore(factory, async ({ store, second, widget, clock }) => {
        const ep = await store.createEndpoint(widget, { url: 'https://example.com/r', secret: 's', events: ['lead.captured'], enabled: true, rateLimit: 2 });
        assert.equal(ep.rateLimit, 2);
        for (let i = 0; i < 4; i++) await store.enqueue(widget, 'lead.captured', '{}');
        const other = await second();
        const [x, y] = await Promise.all([store.claimDue(A, 10, unlimited), other.claimDue(B, 10, unlimited)]);
        assert.equal(x.length + y.length, 1, 'one attempt in the first slot, whichever replica took it');
        assert.equal([...x, ...y][0]!.slotAt, START, "the claim names its slot's time: the send must start within RATE_GUARD_MS of it");
        const z = await store.claimDue(A, 10, unlimited);
        assert.equal(z.length, 0);
        assert.equal(z.throttledUntil, START + 550);
        clock.advance(549);
        assert.equal((await other.claimDue(B, 10, unlimited)).length, 0);
        clock.advance(1);
        assert.equal((await other.claimDue(B, 10, unlimited)).length, 1);
        const off = await store.updateEndpoint(widget, ep.id, { rateLimit: null });
        assert.equal(off?.rateLimit, null);
        const rest = await store.claimDue(A, 10, unlimited);
        assert.deepEqual(
          rest.map((d) => d.slotAt),
          [null, null],
          'no limit: the rest at once, with no slot',
        );
      });
    });

    test("the breaker tells: a 410 queues endpoint.disabled to the tenant's operational endpoint, in the same transaction", async () => {
      await withStore(factory, async ({ store, widget, endpoint, clock }) => {
        const ops = await endpoint(['conversation.ended']);
        const ep = await endpoint();
        assert.equal(await store.setOperationalEndpoint(T2, ops), false, "another tenant's endpoint is refused");
        assert.equal(await store.setOperationalEndpoint(T1, ops), true);
        assert.equal((await store.getOperationalEndpoint(T1))?.id, ops);
        await store.enqueue(widget, 'lead.captured', '{}');
        const [d] = await store.claimDue(A, 1, unlimited);
        assert.equal(d!.endpointId, ep);
        clock.advance(10);
        const { disabled } = await store.recordResults(A.owner, [failed(d!, clock.at(), { status: 'failed' }, 'gone', 410)], 86_400_000);
        assert.deepEqual(disabled, [ep]);
        const [tell] = await store.claimDue(A, 5, unlimited);
        assert.equal(tell?.endpointId, ops);
        assert.equal(tell?.event, 'endpoint.disabled');
        const told = JSON.parse(tell!.body);
        assert.deepEqual(told, {
          event: 'endpoint.disabled',
          widget_id: widget,
          data: {
            endpoint_id: ep,
            url: 'https://example.com/hook/2',
            reason: 'gone',
            disabled_at: new Date(clock.at()).toISOString(),
            failing_since: new Date(clock.at()).toISOString(),
            last_status_code: 410,
            last_error: 'HTTP 410',
          },
        });
        const alerts = await store.disabledEndpoints(T1);
        assert.deepEqual(
          alerts.map((a) => [a.endpointId, a.reason, a.disabledAt]),
          [[ep, 'gone', clock.at()]],
        );
        assert.deepEqual(await store.disabledEndpoints(T2), []);
        assert.equal(await store.setOperationalEndpoint(T1, null), true);
        assert.equal(await store.getOperationalEndpoint(T1), null);
      });
    });

    test('signing keys: created once, rotated with an overlap, retired after it; replay count', async () => {
      await withStore(factory, async ({ store, second, clock, widget, endpoint }) => {
        const [k1] = await store.ensureSigningKey({ seed: 'c2VlZDE=', publicKey: 'cHViMQ==' });
        const again = await (await second()).ensureSigningKey({ seed: 'c2VlZDI=', publicKey: 'cHViMg==' });
        assert.deepEqual(
          again.map((k) => k.id),
          [k1!.id],
          'a second replica finds the key rather than making one',
        );
        const rotated = await store.rotateSigningKey({ seed: 'c2VlZDM=', publicKey: 'cHViMw==' }, clock.at() + 1000);
        assert.equal(rotated.length, 2);
        assert.equal(rotated[0]!.retiresAt, null, 'the active key first');
        assert.equal(rotated[1]!.id, k1!.id);
        clock.advance(1000);
        assert.deepEqual(
          (await store.signingKeys()).map((k) => k.id),
          [rotated[0]!.id],
        );
        const ep = await endpoint();
        await store.enqueue(widget, 'lead.captured', '{}');
        await store.enqueue(widget, 'lead.captured', '{}');
        const claimed = await store.claimDue(A, 5, unlimited);
        await store.recordResults(
          A.owner,
          claimed.map((c) => failed(c, clock.at(), { status: 'failed' })),
          86_400_000,
        );
        assert.equal(await store.countFailed(ep, clock.at()), 2);
        assert.equal(await store.countFailed(ep, clock.at() + 1), 0);
        assert.equal(await store.recoverFailed(ep, clock.at()), 2);
        assert.equal(await store.countFailed(ep, clock.at()), 0);
      });
    });
  });
}
