import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PgBroadcast, type Broadcast } from '../../src/store/broadcast.js';
import { openPool } from '../../src/store/postgres.js';
import type { TenantId, TenantRecord } from '../../src/identity/types.js';
import { hashToken, newToken } from '../../src/identity/tokens.js';
import { KEY_CACHE_MAX, KEY_TTL_MS, TENANT_TTL_MS, WEBHOOKS_KEYS_CHANNEL, WidgetKeyCache } from '../../src/webhooks/key-cache.js';
import { PostgresWebhookStore } from '../../src/webhooks/postgres-store.js';
import { WebhookService } from '../../src/webhooks/service.js';
import type { Dispatcher } from '../../src/webhooks/dispatcher.js';
import type { WidgetId, WidgetRecord } from '../../src/webhooks/types.js';
import { freshDatabase } from '../helpers/postgres.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from '../helpers/paths.js';
import { call, REPLICA_ADMIN, startReplica, tenantSession, type Replica } from '../helpers/replicas.js';

/** A broadcast in one process: what a test sends or replays reaches the cache's listener at once. */
function localBroadcast() {
  let onMessage: (p: string) => void = () => {};
  let onResync: () => void = () => {};
  const sent: string[] = [];
  const broadcast: Broadcast = {
    async send(_channel, payload) {
      sent.push(payload);
      onMessage(payload);
    },
    listen(channel, message, resync) {
      assert.equal(channel, WEBHOOKS_KEYS_CHANNEL);
      onMessage = message;
      onResync = resync;
    },
    async close() {},
  };
  return { broadcast, sent, hear: (p: string) => onMessage(p), resync: () => onResync() };
}

const widget = (id: string, tenantId = 1): WidgetRecord => ({ id: id as WidgetId, tenantId: tenantId as TenantId, name: id, createdAt: 0 });
const tenant = (id: number, status: TenantRecord['status'] = 'active') => ({ id, status }) as TenantRecord;

function counting() {
  const reads: string[] = [];
  const read = (w: WidgetRecord | null, name: string) => async () => {
    reads.push(name);
    return w;
  };
  return { reads, read };
}

test('a widget key is read once, until its widget is announced or the connection is resynced', async () => {
  const bus = localBroadcast();
  const cache = new WidgetKeyCache(bus.broadcast, () => 0, silentLogger);
  const { reads, read } = counting();
  for (let i = 0; i < 3; i++) {
    assert.equal((await cache.widget('ha', read(widget('w_a'), 'a')))?.id, 'w_a');
    assert.equal((await cache.widget('hb', read(widget('w_b'), 'b')))?.id, 'w_b');
  }
  assert.deepEqual(reads, ['a', 'b']);
  // Only what never changes is kept: a widget may be renamed (its settings), never moved to another tenant.
  assert.deepEqual(await cache.widget('ha', read(widget('w_a'), 'a')), { id: 'w_a', tenantId: 1 });
  // Another widget's keys are dropped: this one's stay.
  bus.hear('w_b');
  await cache.widget('ha', read(widget('w_a'), 'a'));
  await cache.widget('hb', read(widget('w_b'), 'b'));
  assert.deepEqual(reads, ['a', 'b', 'b']);
  // A lost connection may have missed messages: everything is read again.
  bus.resync();
  await cache.widget('ha', read(widget('w_a'), 'a'));
  await cache.widget('hb', read(widget('w_b'), 'b'));
  assert.deepEqual(reads, ['a', 'b', 'b', 'a', 'b']);
});

test('an unknown or revoked key is never kept: every look-up reads', async () => {
  const cache = new WidgetKeyCache(localBroadcast().broadcast, () => 0, silentLogger);
  const { reads, read } = counting();
  assert.equal(await cache.widget('hx', read(null, 'x')), null);
  assert.equal(await cache.widget('hx', read(null, 'x')), null);
  assert.deepEqual(reads, ['x', 'x']);
});

test('a look-up overtaken by a revocation or a tenant change keeps nothing', async () => {
  const bus = localBroadcast();
  const cache = new WidgetKeyCache(bus.broadcast, () => 0, silentLogger);
  let release!: () => void;
  const slow = cache.widget(
    'ha',
    () =>
      new Promise<WidgetRecord>((resolve) => {
        release = () => resolve(widget('w_a'));
      }),
  );
  // The read began before the key was revoked (another replica's message): its answer may be the old one.
  bus.hear('w_a');
  release();
  assert.equal((await slow)?.id, 'w_a');
  const { reads, read } = counting();
  assert.equal(await cache.widget('ha', read(null, 'a')), null);
  assert.deepEqual(reads, ['a']);
  // The same for a tenant whose status was being read when its change was heard.
  let answer!: () => void;
  const reading = cache.tenant(
    7 as TenantId,
    () =>
      new Promise<TenantRecord>((resolve) => {
        answer = () => resolve(tenant(7));
      }),
  );
  bus.hear('tenant:7');
  answer();
  assert.equal((await reading)?.status, 'active');
  assert.equal((await cache.tenant(7 as TenantId, async () => tenant(7, 'suspended')))?.status, 'suspended');
});

test('a revocation drops the widget here and is announced; tenants and keys are read again after their bounds', async () => {
  const bus = localBroadcast();
  let now = 1_000;
  const cache = new WidgetKeyCache(bus.broadcast, () => now, silentLogger);
  const { reads, read } = counting();
  await cache.widget('ha', read(widget('w_a'), 'a'));
  await cache.revoked('w_a');
  assert.deepEqual(bus.sent, ['w_a']);
  await cache.widget('ha', read(widget('w_a'), 'a'));
  assert.deepEqual(reads, ['a', 'a']);

  const tenants: TenantId[] = [];
  const readTenant = (status: TenantRecord['status']) => async () => {
    tenants.push(7 as TenantId);
    return tenant(7, status);
  };
  assert.equal((await cache.tenant(7 as TenantId, readTenant('active')))?.status, 'active');
  now += TENANT_TTL_MS - 1;
  assert.equal((await cache.tenant(7 as TenantId, readTenant('suspended')))?.status, 'active');
  now += 1;
  // A suspension is seen once the tenant's entry is TENANT_TTL_MS old.
  assert.equal((await cache.tenant(7 as TenantId, readTenant('suspended')))?.status, 'suspended');
  assert.equal(tenants.length, 2);
  // A change heard from another replica drops the tenant at once; one made here is announced too.
  bus.hear('tenant:7');
  assert.equal((await cache.tenant(7 as TenantId, readTenant('active')))?.status, 'active');
  await cache.tenantChanged(7 as TenantId);
  assert.equal(bus.sent.at(-1), 'tenant:7');
  assert.equal((await cache.tenant(7 as TenantId, readTenant('suspended')))?.status, 'suspended');
  assert.equal(tenants.length, 4);

  now = 1_000 + KEY_TTL_MS - 1;
  await cache.widget('ha', read(widget('w_a'), 'a'));
  assert.equal(reads.length, 2);
  now += 1;
  await cache.widget('ha', read(widget('w_a'), 'a'));
  assert.equal(reads.length, 3);
});

test(`at ${KEY_CACHE_MAX} keys the cache starts again`, async () => {
  const cache = new WidgetKeyCache(localBroadcast().broadcast, () => 0, silentLogger);
  const { reads, read } = counting();
  for (let i = 0; i < KEY_CACHE_MAX; i++) await cache.widget(`h${i}`, read(widget(`w_${i}`), 'fill'));
  await cache.widget('h0', read(widget('w_0'), 'kept'));
  assert.equal(reads.at(-1), 'fill', 'the first key is still kept at the bound');
  await cache.widget('one-more', read(widget('w_more'), 'past'));
  await cache.widget('h0', read(widget('w_0'), 'again'));
  assert.equal(reads.at(-1), 'again');
});

test('two replicas on PostgreSQL: a key revoked through one is refused by the other once the notification arrives, and read no more before', async () => {
  const url = await freshDatabase();
  const pools = [openPool(url), openPool(url)];
  const broadcasts = pools.map((pool) => new PgBroadcast(url, pool));
  try {
    const stores = [];
    for (const pool of pools) stores.push(await PostgresWebhookStore.open(pool));
    const keyReads = [0, 0];
    const tenantReads = [0, 0];
    const services = stores.map((store, i) => {
      const find = store.findWidgetKey.bind(store);
      store.findWidgetKey = async (hash) => {
        keyReads[i]!++;
        return find(hash);
      };
      return new WebhookService({
        store,
        dispatcher: { notify() {} } as unknown as Dispatcher,
        broadcast: broadcasts[i]!,
        getTenant: async (id) => {
          tenantReads[i]!++;
          return tenant(id);
        },
      });
    });
    // Heard on the second replica's connection after its cache's own listener (registered first, told first).
    const heard: string[] = [];
    broadcasts[1]!.listen(
      WEBHOOKS_KEYS_CHANNEL,
      (p) => heard.push(p),
      () => {},
    );
    await Promise.all(broadcasts.map((b) => b.start()));

    const token = newToken('widgetKey');
    const { widget: w, key } = await stores[0]!.createWidget(3 as TenantId, 'w', { hash: hashToken(token), preview: token.slice(0, 8) });
    for (let i = 0; i < 5; i++) assert.equal((await services[1]!.widgetKey(token)).widget.id, w.id);
    assert.deepEqual([keyReads[1], tenantReads[1]], [1, 1], 'the second replica read the key and its tenant once for five posts');

    assert.equal(await services[0]!.revokeWidgetKey(w.id, key.id), true);
    await assert.rejects(services[0]!.widgetKey(token), /invalid, expired or revoked/, 'the revoking replica refuses it at once');
    while (!heard.includes(w.id)) await new Promise((r) => setTimeout(r, 5));
    await assert.rejects(services[1]!.widgetKey(token), /invalid, expired or revoked/);
    assert.equal(keyReads[1], 2);
  } finally {
    for (const b of broadcasts) await b.close();
    for (const p of pools) await p.end();
  }
});

test('serve replicas: a widget key revoked, or its tenant suspended, through one replica is refused by the other, which had accepted it', async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  const replicas: Replica[] = [];
  try {
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(url, dir.path, ['--allow-private-webhooks']));
    const [a, b] = replicas.map((r) => r.url) as [string, string];
    const { token, tenantId } = await tenantSession(a);
    const widget = await call(a, 'POST', '/v1/widgets', token, { name: 'revoked' });
    const post = () =>
      fetch(`${b}/v1/widgets/${widget.id}/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${widget.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'escalation.triggered', data: { conversation_id: 'ses_1' } }),
      });
    assert.equal((await post()).status, 202);
    assert.equal((await post()).status, 202);
    await call(a, 'DELETE', `/v1/widgets/${widget.id}/keys/${widget.key_id}`, token);
    // The other replica learns it from PostgreSQL's notification: asked until it answers 401 (the test's own time limit bounds the wait).
    let status = 202;
    while (status === 202) {
      const res = await post();
      status = res.status;
      await res.text();
    }
    assert.equal(status, 401);

    // A suspension through the first replica: the second, which had the tenant's status, refuses the widget's keys.
    const key = await call(a, 'POST', `/v1/widgets/${widget.id}/keys`, token);
    const postWith = (k: string) =>
      fetch(`${b}/v1/widgets/${widget.id}/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'escalation.triggered', data: { conversation_id: 'ses_2' } }),
      });
    assert.equal((await postWith(key.key)).status, 202);
    await call(a, 'POST', `/v1/admin/tenants/${tenantId}/suspend`, REPLICA_ADMIN);
    status = 202;
    while (status === 202) {
      const res = await postWith(key.key);
      status = res.status;
      await res.text();
    }
    assert.equal(status, 403);
  } finally {
    for (const r of replicas) await r.kill();
    dir.dispose();
  }
});
