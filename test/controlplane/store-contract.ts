import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import type { ControlPlaneStore } from '../../src/controlplane/store.js';
import type { ServerId, ServerKeyId, TelemetryReport } from '../../src/controlplane/types.js';
import type { TenantId } from '../../src/identity/types.js';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import type { TestDatabase } from '../helpers/databases.js';

type Opened = { store: ControlPlaneStore; tenantId: TenantId; second?: () => ControlPlaneStore; close(): void | Promise<void> };

/** The suite's `open` on a TestDatabase of either backend: a tenant made, both schemas migrated. */
export function onTestDatabase(
  make: () => Promise<TestDatabase>,
  now: () => number = Date.now,
): () => Promise<Opened & { seconds: () => Promise<ControlPlaneStore> }> {
  return async () => {
    const t = await make();
    const tenant = await (await openIdentityStore(t.database, now)).createTenant('t', 'pro');
    return {
      store: await openControlPlaneStore(t.database, now),
      tenantId: tenant.id,
      seconds: () => openControlPlaneStore(t.second(), now),
      close: () => t.dispose(),
    };
  };
}

/**
 * The behaviour every ControlPlaneStore must have. `open` gives a store (and a tenant id it
 * may own servers for); `second` opens another handle on the same storage, when there is one.
 */
export function controlPlaneStoreContract(name: string, open: () => Promise<Opened & { seconds?: () => Promise<ControlPlaneStore> }>): void {
  const report = (extra: Partial<TelemetryReport> = {}): TelemetryReport => ({
    serverId: '1',
    ts: '2026-05-02T10:00:00Z',
    botCount: 2,
    playersOnline: 3,
    linesSpoken: 4,
    spendUsd: 0.5,
    events: [{ kind: 'spoke', count: 4 }],
    ...extra,
  });

  test(`${name}: a server starts at version 1; publish needs the head as base; rollback appends`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const server = await store.createServer(tenantId, 's', DEFAULT_BUNDLE, 'system');
      assert.equal((await store.head(server.id))!.bundle.version, 1);
      const p = await store.publish(server.id, 1, { ...DEFAULT_BUNDLE, game: { name: 'a', premise: 'b', goal: 'c' } }, 'a@b.c', 'n');
      assert.ok(p.ok && p.published.bundle.version === 2);
      assert.deepEqual(await store.publish(server.id, 1, DEFAULT_BUNDLE, 'a@b.c', ''), { ok: false, reason: 'version_conflict', head: 2 });
      const r = await store.rollback(server.id, 1, 'a@b.c', 'back');
      assert.ok(r.ok && r.published.bundle.version === 3 && r.published.bundle.game === null);
      assert.deepEqual(await store.rollback(server.id, 9, 'a@b.c', ''), { ok: false, reason: 'no_version' });
      assert.deepEqual(
        (await store.listVersions(server.id, 10, null)).data.map((v) => [v.version, v.publishedBy, v.note]),
        [
          [3, 'a@b.c', 'back'],
          [2, 'a@b.c', 'n'],
          [1, 'system', 'initial default bundle'],
        ],
      );
      const newest = await store.listVersions(server.id, 2, null);
      assert.deepEqual([newest.data.map((v) => v.version), newest.nextCursor], [[3, 2], 2]);
      const oldest = await store.listVersions(server.id, 2, newest.nextCursor);
      assert.deepEqual([oldest.data.map((v) => v.version), oldest.nextCursor], [[1], null]);
      assert.equal((await store.getVersion(server.id, 2))!.bundle.game!.name, 'a');
      assert.equal(await store.getVersion(server.id, 4), null);
    } finally {
      await close();
    }
  });

  test(`${name}: a tenant's servers by id, all of them or a page past a position; a cap counts them all`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await store.createServer(tenantId, `s${i}`, DEFAULT_BUNDLE, 'system')).id);
      assert.equal(await store.countServers(tenantId), 3);
      assert.deepEqual(
        (await store.listServers(tenantId)).map((s) => s.id),
        ids,
      );
      assert.deepEqual(
        (await store.listServers(tenantId, { limit: 2, from: null })).map((s) => s.id),
        ids.slice(0, 2),
      );
      assert.deepEqual(
        (await store.listServers(tenantId, { limit: 2, from: ids[1]! })).map((s) => s.id),
        ids.slice(2),
      );
      assert.equal(await store.createServer(tenantId, 'full', DEFAULT_BUNDLE, 'system', 3), 'limit');
      assert.notEqual(await store.createServer(tenantId, 'room', DEFAULT_BUNDLE, 'system', 4), 'limit');
    } finally {
      await close();
    }
  });

  test(`${name}: keys resolve until revoked; revoking twice finds nothing`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const server = await store.createServer(tenantId, 's', DEFAULT_BUNDLE, 'system');
      const key = await store.createServerKey(server.id, 'h1', 'bsk_abcd');
      assert.deepEqual(await store.findServerKey('h1'), { keyId: key.id, serverId: server.id, tenantId });
      assert.deepEqual(await store.revokeServerKey(server.id, key.id), { tokenHash: 'h1' });
      assert.equal(await store.revokeServerKey(server.id, key.id), null);
      assert.equal(await store.findServerKey('h1'), null);
      assert.equal(await store.revokeServerKey(server.id, 999 as ServerKeyId), null);
    } finally {
      await close();
    }
  });

  test(`${name}: ingest dedupes by reportId per server, keeps order, folds usage by day`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const b = await store.createServer(tenantId, 'b', DEFAULT_BUNDLE, 'system');
      const at = Date.parse('2026-05-02T10:00:00Z');
      const out = await store.ingest([
        { serverId: a.id, receivedAt: at, report: report({ reportId: 'x' }) },
        { serverId: a.id, receivedAt: at, report: report({ reportId: 'x' }) },
        { serverId: b.id, receivedAt: at, report: report({ reportId: 'x', roster: [{ agent: 1, name: 'n', alignment: 'a', goal: 'g', state: 's' }] }) },
        {
          serverId: a.id,
          receivedAt: at + 86_400_000,
          report: report({
            events: [
              { kind: 'a', count: 1 },
              { kind: 'b', count: 2 },
            ],
          }),
        },
      ]);
      assert.deepEqual(out, [
        { accepted: true, received: 1 },
        { accepted: false, received: 0 },
        { accepted: true, received: 1 },
        { accepted: true, received: 2 },
      ]);
      assert.equal(await store.countReports(a.id), 2);
      assert.deepEqual(
        (await store.activity(a.id, 10)).map((e) => e.kind),
        ['b', 'a', 'spoke'],
      );
      assert.deepEqual(
        (await store.dailyUsage(a.id, '2026-05-01', '2026-05-31')).map((d) => [d.day, d.reports, d.linesSpoken]),
        [
          ['2026-05-02', 1, 4],
          ['2026-05-03', 1, 4],
        ],
      );
      assert.equal((await store.tenantUsage(tenantId, '2026-05-01', '2026-05-31')).spendUsd, 1.5);
      assert.equal((await store.roster(b.id))[0]!.name, 'n');
      assert.deepEqual(await store.roster(a.id), []);
      assert.equal((await store.latestReport(a.id))!.receivedAt, at + 86_400_000);
    } finally {
      await close();
    }
  });

  test(`${name}: the latest report carries the last known tick latency and line source, from an earlier report when the latest had none`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const at = Date.parse('2026-05-02T10:00:00Z');
      assert.equal(await store.latestReport(a.id), null);
      await store.ingest([{ serverId: a.id, receivedAt: at, report: report({ reportId: 'quiet-0' }) }]);
      const none = await store.latestReport(a.id);
      assert.deepEqual([none!.latencyP50, none!.latencyP99, none!.latencyAt], [null, null, null]);
      assert.equal(none!.dialogue, null);
      await store.ingest([
        {
          serverId: a.id,
          receivedAt: at + 1000,
          report: report({ reportId: 'busy', latency: { p50: 1.5, p99: 6 }, dialogue: { source: 'model', model: 'm-1' } }),
        },
      ]);
      await store.ingest([{ serverId: a.id, receivedAt: at + 2000, report: report({ reportId: 'quiet-1' }) }]);
      const latest = await store.latestReport(a.id);
      assert.equal(latest!.receivedAt, at + 2000);
      assert.deepEqual([latest!.latencyP50, latest!.latencyP99, latest!.latencyAt], [1.5, 6, at + 1000]);
      // Likewise where the lines come from: the last report that said.
      assert.deepEqual(latest!.dialogue, { source: 'model', model: 'm-1' });
    } finally {
      await close();
    }
  });

  test(`${name}: one batch: a day ends at UTC midnight to the millisecond; the roster is the last stored report's, never a repeat's`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const midnight = Date.parse('2026-05-03T00:00:00Z');
      const who = (name: string) => [{ agent: 1, name, alignment: 'a', goal: 'g', state: 's' }];
      const out = await store.ingest([
        { serverId: a.id, receivedAt: midnight - 1, report: report({ reportId: 'r1', roster: who('first') }) },
        { serverId: a.id, receivedAt: midnight, report: report({ reportId: 'r2', roster: who('second') }) },
        { serverId: a.id, receivedAt: midnight, report: report({ reportId: 'r2', roster: who('repeat') }) },
        { serverId: a.id, receivedAt: midnight, report: report({ roster: undefined }) },
      ]);
      assert.deepEqual(
        out.map((o) => o.accepted),
        [true, true, false, true],
      );
      assert.deepEqual(
        (await store.dailyUsage(a.id, '2026-05-01', '2026-05-31')).map((d) => [d.day, d.reports]),
        [
          ['2026-05-02', 1],
          ['2026-05-03', 2],
        ],
      );
      assert.equal((await store.roster(a.id))[0]!.name, 'second');
      // A later batch with an older roster does not replace a newer one.
      await store.ingest([{ serverId: a.id, receivedAt: midnight - 5, report: report({ roster: who('late') }) }]);
      assert.equal((await store.roster(a.id))[0]!.name, 'second');
    } finally {
      await close();
    }
  });

  test(`${name}: text that array literals must escape (quotes, backslashes, braces, commas, NULL) is stored as sent`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const odd = 'say "hi" \\ {a,b} NULL, \\"';
      const out = await store.ingest([
        {
          serverId: a.id,
          receivedAt: Date.now(),
          report: report({ reportId: 'NULL', roster: [{ agent: 1, name: odd, alignment: 'a', goal: 'g', state: 's' }] }),
        },
        { serverId: a.id, receivedAt: Date.now(), report: report({ reportId: '"{x}"' }) },
      ]);
      assert.deepEqual(
        out.map((o) => o.accepted),
        [true, true],
      );
      assert.equal((await store.roster(a.id))[0]!.name, odd);
      const again = await store.ingest([{ serverId: a.id, receivedAt: Date.now(), report: report({ reportId: 'NULL' }) }]);
      assert.equal(again[0]!.accepted, false, 'the id "NULL" is an id like any other, already stored');
    } finally {
      await close();
    }
  });

  test(`${name}: two handles on the same storage publishing on one base: one wins`, async () => {
    const { store, tenantId, second, seconds, close } = await open();
    try {
      const other = second ? second() : seconds ? await seconds() : null;
      if (!other) return;
      const server = await store.createServer(tenantId, 's', DEFAULT_BUNDLE, 'system');
      const results = await Promise.all([store.publish(server.id, 1, DEFAULT_BUNDLE, 'a', ''), other.publish(server.id, 1, DEFAULT_BUNDLE, 'b', '')]);
      assert.deepEqual(results.map((r) => r.ok).sort(), [false, true]);
      assert.equal((await other.head(server.id as ServerId))!.bundle.version, 2);
    } finally {
      await close();
    }
  });

  test(`${name}: two handles ingesting one server's reports at once: usage is their sum, the roster the newest, a repeat across handles stored once`, async () => {
    const { store, tenantId, second, seconds, close } = await open();
    try {
      const other = second ? second() : seconds ? await seconds() : null;
      if (!other) return;
      const server = await store.createServer(tenantId, 's', DEFAULT_BUNDLE, 'system');
      const at = Date.parse('2026-05-02T10:00:00Z');
      const who = (name: string) => [{ agent: 1, name, alignment: 'a', goal: 'g', state: 's' }];
      const batch = (h: ControlPlaneStore, tag: string, offset: number) =>
        h.ingest(
          Array.from({ length: 5 }, (_, i) => ({
            serverId: server.id,
            receivedAt: at + offset + i,
            report: report({ reportId: `${tag}${i}`, linesSpoken: 2, cacheHits: 1, roster: who(`${tag}${i}`) }),
          })),
        );
      await Promise.all([batch(store, 'a', 0), batch(other, 'b', 100), batch(store, 'c', 200), batch(other, 'd', 50)]);
      // The same report id again, through the other handle: refused, counted nowhere.
      assert.deepEqual(await other.ingest([{ serverId: server.id, receivedAt: at + 300, report: report({ reportId: 'a0', roster: who('late') }) }]), [
        { accepted: false, received: 0 },
      ]);
      for (const h of [store, other]) {
        const [day] = await h.dailyUsage(server.id, '2026-05-01', '2026-05-31');
        assert.deepEqual([day!.day, day!.reports, day!.linesSpoken, day!.cacheHits], ['2026-05-02', 20, 40, 20]);
        assert.equal(day!.spendUsd, 10);
        assert.equal((await h.tenantUsage(tenantId, '2026-05-01', '2026-05-31')).reports, 20);
        assert.equal((await h.roster(server.id))[0]!.name, 'c4');
      }
      // An older roster from either handle does not replace the newest.
      await store.ingest([{ serverId: server.id, receivedAt: at + 150, report: report({ roster: who('older') }) }]);
      assert.equal((await other.roster(server.id))[0]!.name, 'c4');
      await other.ingest([{ serverId: server.id, receivedAt: at + 400, report: report({ roster: who('newest') }) }]);
      assert.equal((await store.roster(server.id))[0]!.name, 'newest');
    } finally {
      await close();
    }
  });

  test(`${name}: daily counters saturate at Number.MAX_SAFE_INTEGER instead of overflowing; tenant sums too`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const b = await store.createServer(tenantId, 'b', DEFAULT_BUNDLE, 'system');
      const at = Date.parse('2026-05-02T10:00:00Z');
      const huge = report({ linesSpoken: Number.MAX_SAFE_INTEGER, llmTokens: Number.MAX_SAFE_INTEGER, cacheHits: 1 });
      for (let i = 0; i < 3; i++) {
        await store.ingest([
          { serverId: a.id, receivedAt: at, report: huge },
          { serverId: b.id, receivedAt: at, report: huge },
        ]);
      }
      const [day] = await store.dailyUsage(a.id, '2026-05-02', '2026-05-02');
      assert.equal(day!.linesSpoken, Number.MAX_SAFE_INTEGER);
      assert.equal(day!.llmTokens, Number.MAX_SAFE_INTEGER);
      assert.equal(day!.reports, 3);
      const total = await store.tenantUsage(tenantId, '2026-05-01', '2026-05-31');
      assert.equal(total.linesSpoken, Number.MAX_SAFE_INTEGER);
      assert.equal(total.reports, 6);
      assert.equal(total.cacheHits, 6);
      assert.deepEqual(await store.tenantUsage(tenantId, '2027-01-01', '2027-01-31'), {
        reports: 0,
        linesSpoken: 0,
        llmTokens: 0,
        ttsCharacters: 0,
        spendUsd: 0,
        cacheHits: 0,
        ttsUsd: 0,
        llmUsd: 0,
      });
    } finally {
      await close();
    }
  });

  test(`${name}: pruning deletes old raw reports oldest first, at most max, keeping each server's newest; usage stays`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const b = await store.createServer(tenantId, 'b', DEFAULT_BUNDLE, 'system');
      const day = 86_400_000;
      const t0 = Date.parse('2026-01-01T00:00:00Z');
      for (let i = 0; i < 4; i++) await store.ingest([{ serverId: a.id, receivedAt: t0 + i * day, report: report() }]);
      await store.ingest([{ serverId: b.id, receivedAt: t0, report: report() }]);
      assert.equal(await store.pruneReports(t0 + 10 * day, 2), 2);
      assert.equal(await store.countReports(a.id), 2);
      assert.equal(await store.pruneReports(t0 + 10 * day, 100), 1);
      assert.equal(await store.countReports(a.id), 1);
      assert.equal(await store.countReports(b.id), 1);
      assert.equal((await store.latestReport(a.id))!.receivedAt, t0 + 3 * day);
      assert.equal((await store.dailyUsage(a.id, '2026-01-01', '2026-01-31')).length, 4);
    } finally {
      await close();
    }
  });

  test(`${name}: checkouts are found by id and provider reference; completing one stamps it once`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const c = await store.createCheckout({
        tenantId,
        provider: 'offline',
        providerRef: 'ref1',
        status: 'open',
        url: 'https://x/1',
        plan: 'pro',
        tier: null,
        amountUsd: 49,
        interval: 'month',
      });
      assert.equal(c.completedAt, null);
      assert.deepEqual(await store.getCheckout(c.id), c);
      assert.deepEqual(await store.findCheckout('offline', 'ref1'), c);
      assert.equal(await store.findCheckout('stripe', 'ref1'), null);
      const done = await store.setCheckoutStatus(c.id, 'complete');
      assert.equal(done!.status, 'complete');
      assert.ok(done!.completedAt);
      assert.equal((await store.setCheckoutStatus(c.id, 'complete'))!.completedAt, done!.completedAt);
      assert.equal(await store.setCheckoutStatus(999 as typeof c.id, 'complete'), null);
      await assert.rejects(
        store.createCheckout({
          tenantId,
          provider: 'offline',
          providerRef: 'ref1',
          status: 'open',
          url: 'u',
          plan: 'pro',
          tier: null,
          amountUsd: 1,
          interval: 'month',
        }),
      );
    } finally {
      await close();
    }
  });

  test(`${name}: bundle keys are kept in order; a position taken first by another process is refused, nothing changed`, async () => {
    const { store, close } = await open();
    try {
      assert.deepEqual(await store.bundleKeys(), []);
      const k = (seq: number, id: string, previous: string | null) => ({
        seq,
        id,
        publicKey: `ed25519:${id}`,
        privatePem: `pem-${id}`,
        previous,
        endorsement: previous ? `e-${id}` : null,
      });
      assert.equal(await store.addBundleKey(k(1, 'a', null)), true);
      assert.equal(await store.addBundleKey(k(1, 'b', null)), false);
      assert.equal(await store.addBundleKey(k(2, 'c', 'a')), true);
      const keys = await store.bundleKeys();
      assert.deepEqual(
        keys.map((r) => [r.seq, r.id, r.previous, r.endorsement, r.privatePem]),
        [
          [1, 'a', null, null, 'pem-a'],
          [2, 'c', 'a', 'e-c', 'pem-c'],
        ],
      );
      assert.match(keys[0]!.createdAt, /^\d{4}-\d{2}-\d{2}T/);
    } finally {
      await close();
    }
  });

  test(`${name}: the live map keeps each server's newest sample; an older or repeated one changes nothing`, async () => {
    const { store, tenantId, close } = await open();
    try {
      const a = await store.createServer(tenantId, 'a', DEFAULT_BUNDLE, 'system');
      const b = await store.createServer(tenantId, 'b', DEFAULT_BUNDLE, 'system');
      assert.equal(await store.mapSample(a.id), null);
      const at = Date.parse('2026-05-02T10:00:00Z');
      const sample = (ms: number, x: number) => ({
        ts: new Date(ms).toISOString(),
        atMs: ms,
        receivedAt: ms + 20,
        characters: [{ agent: 1, name: 'n', alignment: 'neutral', goal: 'none', state: 'idle', squad: 's', x, z: -x, health: 80 }],
      });
      assert.equal(await store.putMapSample(a.id, sample(at, 1)), true);
      assert.deepEqual(await store.mapSample(a.id), sample(at, 1));
      assert.equal(await store.putMapSample(a.id, sample(at, 2)), false, 'the same moment again');
      assert.equal(await store.putMapSample(a.id, sample(at - 5000, 3)), false, 'an older one');
      assert.deepEqual(await store.mapSample(a.id), sample(at, 1));
      assert.equal(await store.putMapSample(a.id, sample(at + 5000, 4)), true);
      assert.equal((await store.mapSample(a.id))!.characters[0]!.x, 4);
      assert.equal(await store.mapSample(b.id), null, 'per server');
    } finally {
      await close();
    }
  });
}
