import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantId } from '../../src/identity/types.js';
import type { CallbackFor, VideoStore } from '../../src/video/store.js';
import { openVideoStore } from '../../src/video/open-store.js';
import { openIdentityStore } from '../../src/identity/open-store.js';
import type { TestDatabase } from '../helpers/databases.js';
import type { AssetId, NewAsset, NewPhoto, PhotoId, PropertyId, PropertyInput, VideoId, VideoRecord } from '../../src/video/types.js';

/** One fresh, empty store per test, on a clock the test moves. */
export interface VideoStoreHarness {
  store: VideoStore;
  /** One process serves the store (SQLite): requeueInterrupted() takes back every render at start. */
  exclusive: boolean;
  /** A new tenant (videos, properties and assets reference tenants). */
  newTenant(): Promise<TenantId>;
  close(): Promise<void>;
}
export type VideoStoreFactory = (now: () => number) => Promise<VideoStoreHarness>;

/** A factory on a fresh test database of one backend (tenants from its identity store); `exclusive` as the backend promises it. */
export function onTestDatabase(open: () => Promise<TestDatabase>, exclusive: boolean): VideoStoreFactory {
  return async (now) => {
    const t = await open();
    const identity = await openIdentityStore(t.database);
    let n = 0;
    return {
      store: await openVideoStore(t.database, now),
      exclusive,
      newTenant: async () => (await identity.createTenant(`Tenant ${++n}`, 'agency')).id as TenantId,
      close: () => t.dispose(),
    };
  };
}

const PROPERTY: PropertyInput = {
  title: 'Sunny flat',
  address: '12 Rue de Rivoli',
  city: 'Paris',
  price: 450000,
  currency: 'EUR',
  bedrooms: 2,
  bathrooms: 1.5,
  area: 64,
  description: 'Bright',
};

let keySeq = 0;
const photo = (name = 'a.jpg'): NewPhoto => ({
  filename: name,
  contentType: 'image/jpeg',
  sizeBytes: 100,
  width: 40,
  height: 30,
  storageKey: `photo-${++keySeq}.jpg`,
});
const asset = (kind: 'video' | 'poster'): NewAsset => ({
  kind,
  contentType: kind === 'video' ? 'video/mp4' : 'image/jpeg',
  sizeBytes: 1000,
  width: 1920,
  height: 1080,
  durationS: kind === 'video' ? 12.5 : null,
  etag: `"e${++keySeq}"`,
  storageKey: `asset-${keySeq}.${kind === 'video' ? 'mp4' : 'jpg'}`,
});
const noCallback: CallbackFor = () => null;
/** Two workers' leases, as two replicas would hold them. */
const L = { owner: 'worker-a/1/aaaa', ms: 60_000 };
const M = { owner: 'worker-b/2/bbbb', ms: 60_000 };
const withCallback: CallbackFor = (v) => ({
  url: 'https://example.com/hook',
  event: v.status === 'completed' ? 'video.completed' : 'video.failed',
  body: `{"id":${v.id}}`,
});

/**
 * The behaviour every VideoStore implementation promises (SQLite, PostgreSQL): run by one
 * test file per implementation with its factory.
 */
export function videoStoreContract(name: string, factory: VideoStoreFactory): void {
  describe(`VideoStore contract: ${name}`, () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    let h: VideoStoreHarness;
    let s: VideoStore;
    beforeEach(async () => {
      clock = Date.parse('2026-01-01T00:00:00.000Z');
      h = await factory(() => clock);
      s = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    async function propertyWithPhotos(tenant: TenantId, n: number): Promise<{ propertyId: PropertyId; photoIds: PhotoId[] }> {
      const p = await s.createProperty(tenant, PROPERTY);
      const photos = await s.addPhotos(
        p.id,
        Array.from({ length: n }, (_, i) => photo(`p${i}.jpg`)),
        100,
      );
      assert.notEqual(photos, 'too_many');
      return { propertyId: p.id, photoIds: (photos as { id: PhotoId }[]).map((x) => x.id) };
    }
    const complete = async (id: VideoId, assets: { video: NewAsset; poster: NewAsset }, callback: CallbackFor) =>
      (await s.completeVideo(L.owner, id, assets, callback))!;
    const fail = async (id: VideoId, error: string, callback: CallbackFor) => (await s.failVideo(L.owner, id, error, callback))!;
    async function queued(tenant: TenantId, callbackUrl: string | null = null): Promise<VideoRecord> {
      const { propertyId, photoIds } = await propertyWithPhotos(tenant, 2);
      return s.createVideo(tenant, { propertyId, template: 'tour', format: '16:9', callbackUrl, photoIds });
    }

    test('a property reads back with its fields, creation time and photo count, only by its own tenant', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const p = await s.createProperty(a, PROPERTY);
      assert.deepEqual(p, { ...PROPERTY, id: p.id, tenantId: a, createdAt: '2026-01-01T00:00:00.000Z', photoCount: 0 });
      assert.deepEqual(await s.getProperty(a, p.id), p);
      assert.equal(await s.getProperty(b, p.id), null);
      assert.equal(await s.getProperty(a, 987654 as PropertyId), null);
      const sparse = await s.createProperty(a, {
        ...PROPERTY,
        city: null,
        price: null,
        currency: null,
        bedrooms: null,
        bathrooms: null,
        area: null,
        description: null,
      });
      assert.equal((await s.getProperty(a, sparse.id))?.price, null);
    });

    test('properties list newest first in pages, per tenant', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await s.createProperty(a, { ...PROPERTY, title: `P${i}` })).id);
      await s.createProperty(b, PROPERTY);
      const first = await s.listProperties(a, 2, null);
      assert.deepEqual(
        first.items.map((p) => p.id),
        [ids[4], ids[3]],
      );
      assert.equal(first.nextAfter, ids[3]);
      const second = await s.listProperties(a, 2, first.nextAfter);
      assert.deepEqual(
        second.items.map((p) => p.id),
        [ids[2], ids[1]],
      );
      const last = await s.listProperties(a, 2, second.nextAfter);
      assert.deepEqual(
        last.items.map((p) => p.id),
        [ids[0]],
      );
      assert.equal(last.nextAfter, null);
      const exact = await s.listProperties(a, 5, null);
      assert.equal(exact.items.length, 5);
      assert.equal(exact.nextAfter, null, 'a page that ends exactly at the last item has no next page');
    });

    test('photos are added all or none, capped per property, and read back by property and by id', async () => {
      const a = await h.newTenant();
      const p = await s.createProperty(a, PROPERTY);
      const other = await s.createProperty(a, PROPERTY);
      const added = await s.addPhotos(p.id, [photo('one.jpg'), photo('two.jpg')], 3);
      assert.ok(Array.isArray(added));
      assert.deepEqual(
        added.map((x) => x.filename),
        ['one.jpg', 'two.jpg'],
      );
      assert.equal(added[0]!.propertyId, p.id);
      assert.equal(added[0]!.createdAt, '2026-01-01T00:00:00.000Z');
      assert.equal(await s.addPhotos(p.id, [photo(), photo()], 3), 'too_many');
      assert.equal((await s.getProperty(a, p.id))?.photoCount, 2, 'a refused batch adds nothing');
      const map = await s.photosOf([p.id, other.id]);
      assert.deepEqual(
        map.get(p.id)!.map((x) => x.id),
        added.map((x) => x.id),
      );
      assert.deepEqual(map.get(other.id), []);
      assert.equal((await s.photosOf([])).size, 0);
      const byIds = await s.photosByIds([added[1]!.id, 99999 as PhotoId, added[0]!.id]);
      assert.deepEqual(
        byIds.map((x) => x.id),
        [added[1]!.id, added[0]!.id],
        'in the order asked, unknown ids left out',
      );
      assert.deepEqual(byIds[0], added[1]);
    });

    test('a video is queued with its inputs and read back only by its own tenant', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const { propertyId, photoIds } = await propertyWithPhotos(a, 3);
      const v = await s.createVideo(a, { propertyId, template: 'tour', format: '9:16', callbackUrl: 'https://example.com/cb', photoIds });
      assert.equal(v.status, 'queued');
      assert.equal(v.progress, 0);
      assert.deepEqual(v.photoIds, photoIds);
      assert.equal(v.format, '9:16');
      assert.equal(v.callbackUrl, 'https://example.com/cb');
      assert.equal(v.createdAt, '2026-01-01T00:00:00.000Z');
      assert.equal(v.startedAt, null);
      assert.equal(v.videoAssetId, null);
      assert.deepEqual(await s.getVideo(a, v.id), v);
      assert.equal(await s.getVideo(b, v.id), null);
      assert.deepEqual(await s.videoById(v.id), v);
      assert.equal(await s.videoById(424242 as VideoId), null);
    });

    test("createVideo refuses past the tenant's unfinished limit, counting queued and rendering only", async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const { propertyId, photoIds } = await propertyWithPhotos(a, 1);
      const input = { propertyId, template: 'tour' as const, format: '1:1' as const, callbackUrl: null, photoIds };
      const first = await s.createVideo(a, input, 2);
      assert.notEqual(first, 'limit');
      assert.notEqual(await s.createVideo(a, input, 2), 'limit');
      assert.equal(await s.createVideo(a, input, 2), 'limit');
      const other = await propertyWithPhotos(b, 1);
      assert.notEqual(await s.createVideo(b, { ...input, ...other }, 2), 'limit', 'the limit is per tenant');
      const claimed = await s.claimNextQueued(L, null);
      assert.ok(claimed);
      await fail(claimed.id, 'boom', noCallback);
      assert.notEqual(await s.createVideo(a, input, 2), 'limit', 'a finished video no longer counts');
    });

    test('the queue hands out the oldest video of the next tenant in turn and marks it rendering', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const a1 = await queued(a);
      const a2 = await queued(a);
      const b1 = await queued(b);
      clock += 1000;
      const [lo, hi] = a < b ? [a, b] : [b, a];
      const first = await s.claimNextQueued(L, null);
      assert.equal(first?.tenantId, lo);
      assert.equal(first?.status, 'rendering');
      assert.equal(first?.startedAt, '2026-01-01T00:00:01.000Z');
      const second = await s.claimNextQueued(L, first!.tenantId);
      assert.equal(second?.tenantId, hi, 'the other tenant goes next');
      const third = await s.claimNextQueued(L, second!.tenantId);
      assert.equal(third?.tenantId, a, 'wraps around to the tenant with work left');
      assert.deepEqual(
        [first!.id, second!.id, third!.id].sort((x, y) => x - y),
        [a1.id, a2.id, b1.id].sort((x, y) => x - y),
      );
      assert.equal(first!.tenantId === a ? first!.id : third!.id, a1.id, 'oldest first within a tenant');
      assert.equal(await s.claimNextQueued(L, third!.tenantId), null);
      assert.equal((await s.getVideo(a, a2.id))?.status, 'rendering');
    });

    test('progress moves only while rendering; requeueInterrupted puts renders back in the queue on an exclusive store only', async () => {
      const a = await h.newTenant();
      const v = await queued(a);
      await s.setProgress(v.id, 0.5);
      assert.equal((await s.videoById(v.id))?.progress, 0, 'a queued video has no progress');
      await s.claimNextQueued(L, null);
      await s.setProgress(v.id, 0.25);
      assert.equal((await s.videoById(v.id))?.progress, 0.25);
      assert.equal(await s.requeueInterrupted(), h.exclusive ? 1 : 0);
      const back = await s.videoById(v.id);
      assert.deepEqual([back?.status, back?.progress], h.exclusive ? ['queued', 0] : ['rendering', 0.25]);
      if (h.exclusive) assert.equal(back?.startedAt, null);
      assert.equal(await s.requeueInterrupted(), 0);
    });

    test('a render lease keeps the video from other workers until it runs out; renewals extend it; a late holder writes nothing', async () => {
      const a = await h.newTenant();
      const v = await queued(a);
      assert.equal((await s.claimNextQueued(L, null))?.id, v.id);
      clock += L.ms - 1;
      assert.equal(await s.claimNextQueued(M, null), null, 'held by L');
      assert.equal(await s.renewRender(L, v.id), true);
      clock += L.ms - 1;
      assert.equal(await s.claimNextQueued(M, null), null, 'the renewal moved the expiry');
      clock += 1;
      const taken = await s.claimNextQueued(M, null);
      assert.deepEqual([taken?.id, taken?.status, taken?.progress], [v.id, 'rendering', 0], 'a lapsed render is claimed again, from the start');
      assert.equal(await s.renewRender(L, v.id), false, 'L learns it lost the render');
      assert.equal(await s.completeVideo(L.owner, v.id, { video: asset('video'), poster: asset('poster') }, withCallback), null);
      assert.equal(await s.failVideo(L.owner, v.id, 'late', withCallback), null);
      assert.deepEqual(
        [(await s.videoById(v.id))?.status, (await s.listAssets(a, {}, 10, null)).items.length, (await s.callbacksOf(v.id)).length],
        ['rendering', 0, 0],
      );
      const done = await s.completeVideo(M.owner, v.id, { video: asset('video'), poster: asset('poster') }, noCallback);
      assert.equal(done?.status, 'completed');
      assert.equal(await s.claimNextQueued(L, null), null);
    });

    test("a lapsed render is claimed before the queue; releaseRenders hands only its owner's renders back", async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const first = await queued(a);
      const second = await queued(b);
      const third = await queued(a);
      assert.equal((await s.claimNextQueued(L, null))?.id, first.id);
      assert.equal((await s.claimNextQueued(M, a))?.id, second.id);
      clock += L.ms;
      // Both leases ran out; the oldest lapsed one is taken, whatever tenant's turn it is.
      assert.equal((await s.claimNextQueued(M, a))?.id, first.id);
      assert.equal(await s.releaseRenders(L.owner), 0, 'L holds nothing now');
      assert.equal(await s.releaseRenders(M.owner), 2);
      const back = await s.videoById(first.id);
      assert.deepEqual([back?.status, back?.startedAt], ['queued', null]);
      const order = [(await s.claimNextQueued(L, null))?.id, (await s.claimNextQueued(L, a))?.id, (await s.claimNextQueued(L, b))?.id];
      assert.deepEqual(order, [first.id, second.id, third.id]);
    });

    test("a callback claim is a lease: no other worker takes it until it runs out, and a late holder's record is refused", async () => {
      const v = await completed(await h.newTenant());
      const [cb] = await s.claimCallbacks(L, clock, 10);
      assert.ok(cb);
      assert.deepEqual(await s.claimCallbacks(M, clock + L.ms - 1, 10), []);
      const [again] = await s.claimCallbacks(M, clock + L.ms, 10);
      assert.equal(again?.id, cb.id);
      assert.equal(await s.recordCallbackAttempt(L.owner, cb.id, { status: 'delivered', nextAttemptAt: clock, error: null }), false);
      assert.equal((await s.callbacksOf(v.id))[0]?.status, 'pending');
      assert.equal(await s.recordCallbackAttempt(M.owner, cb.id, { status: 'delivered', nextAttemptAt: clock, error: null }), true);
      assert.equal((await s.callbacksOf(v.id))[0]?.status, 'delivered');
    });

    test('a completed video records its two assets, listed and read by tenant, and enqueues its callback in the same step', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const v = await queued(a, 'https://example.com/hook');
      await s.claimNextQueued(L, null);
      clock += 5000;
      const done = await complete(v.id, { video: asset('video'), poster: asset('poster') }, withCallback);
      assert.equal(done.status, 'completed');
      assert.equal(done.progress, 1);
      assert.equal(done.completedAt, '2026-01-01T00:00:05.000Z');
      assert.ok(done.videoAssetId !== null && done.posterAssetId !== null);
      const mp4 = await s.getAsset(a, done.videoAssetId);
      assert.equal(mp4?.kind, 'video');
      assert.equal(mp4?.videoId, v.id);
      assert.equal(mp4?.propertyId, v.propertyId);
      assert.equal(mp4?.durationS, 12.5);
      assert.equal(mp4?.contentType, 'video/mp4');
      assert.equal((await s.getAsset(a, done.posterAssetId))?.kind, 'poster');
      assert.equal(await s.getAsset(b, done.videoAssetId), null);
      const cbs = await s.callbacksOf(v.id);
      assert.equal(cbs.length, 1);
      assert.equal(cbs[0]!.event, 'video.completed');
      assert.equal(cbs[0]!.status, 'pending');
      assert.equal(cbs[0]!.body, `{"id":${v.id}}`);
      assert.equal(cbs[0]!.nextAttemptAt, clock);
    });

    test('assets list newest first, filtered by property or video, paginated, per tenant', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const v1 = await queued(a);
      const v2 = await queued(a);
      const vb = await queued(b);
      for (let i = 0; i < 3; i++) {
        const c = await s.claimNextQueued(L, null);
        await complete(c!.id, { video: asset('video'), poster: asset('poster') }, noCallback);
      }
      const all = await s.listAssets(a, {}, 10, null);
      assert.equal(all.items.length, 4);
      assert.ok(all.items.every((x) => x.tenantId === a));
      assert.deepEqual(
        all.items.map((x) => x.id),
        [...all.items.map((x) => x.id)].sort((x, y) => y - x),
      );
      const p1 = await s.listAssets(a, {}, 3, null);
      assert.equal(p1.items.length, 3);
      const p2 = await s.listAssets(a, {}, 3, p1.nextAfter);
      assert.equal(p2.items.length, 1);
      assert.equal(p2.nextAfter, null);
      assert.deepEqual(
        (await s.listAssets(a, { videoId: v1.id }, 10, null)).items.map((x) => x.videoId),
        [v1.id, v1.id],
      );
      assert.deepEqual(
        (await s.listAssets(a, { propertyId: v2.propertyId }, 10, null)).items.map((x) => x.videoId),
        [v2.id, v2.id],
      );
      assert.equal((await s.listAssets(a, { videoId: vb.id }, 10, null)).items.length, 0);
      assert.equal((await s.listAssets(b, {}, 10, null)).items.length, 2);
    });

    test('a failed video keeps its error and enqueues its callback', async () => {
      const a = await h.newTenant();
      const v = await queued(a, 'https://example.com/hook');
      await s.claimNextQueued(L, null);
      const failed = await fail(v.id, 'ffmpeg exited 1', withCallback);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error, 'ffmpeg exited 1');
      assert.equal(failed.videoAssetId, null);
      assert.deepEqual(
        (await s.callbacksOf(v.id)).map((c) => c.event),
        ['video.failed'],
      );
      const none = await queued(a);
      await s.claimNextQueued(L, null);
      await fail(none.id, 'x', noCallback);
      assert.deepEqual(await s.callbacksOf(none.id), []);
    });

    test('callbacks come due by time and record each attempt', async () => {
      const a = await h.newTenant();
      const v = await queued(a, 'https://example.com/hook');
      await s.claimNextQueued(L, null);
      await complete(v.id, { video: asset('video'), poster: asset('poster') }, withCallback);
      const [cb] = await s.claimCallbacks(L, clock, 10);
      assert.ok(cb);
      assert.equal(cb.tenantId, a);
      assert.equal(cb.url, 'https://example.com/hook');
      assert.equal(cb.attempts, 0);
      await s.recordCallbackAttempt(L.owner, cb.id, { status: 'pending', nextAttemptAt: clock + 60_000, error: 'HTTP 500' });
      assert.deepEqual(await s.claimCallbacks(L, clock, 10), []);
      const retry = await s.claimCallbacks(L, clock + 60_000, 10);
      assert.equal(retry[0]?.attempts, 1);
      assert.equal(retry[0]?.lastError, 'HTTP 500');
      await s.recordCallbackAttempt(L.owner, cb.id, { status: 'delivered', nextAttemptAt: clock + 60_000, error: null });
      assert.deepEqual(await s.claimCallbacks(L, clock + 120_000, 10), []);
      const [after] = await s.callbacksOf(v.id);
      assert.equal(after?.status, 'delivered');
      assert.equal(after?.attempts, 2);
      assert.equal(after?.lastError, null);
    });

    test("a tenant's callback secret is made once, kept, and replaced by a rotation", async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      let made = 0;
      const fresh = () => `secret-${++made}`;
      const first = await s.callbackSecret(a, fresh);
      assert.equal(await s.callbackSecret(a, fresh), first);
      assert.notEqual(await s.callbackSecret(b, fresh), first);
      await s.rotateCallbackSecret(a, 'rotated');
      assert.equal(await s.callbackSecret(a, fresh), 'rotated');
      await s.rotateCallbackSecret(b, 'new-b');
      assert.equal(await s.callbackSecret(b, fresh), 'new-b');
    });

    test('unknown asset ids read as null', async () => {
      const a = await h.newTenant();
      assert.equal(await s.getAsset(a, 31337 as AssetId), null);
      assert.equal(await s.assetById(31337 as AssetId), null);
    });

    async function completed(tenant: TenantId): Promise<VideoRecord> {
      const v = await queued(tenant);
      const claimed = await s.claimNextQueued(L, null);
      assert.equal(claimed?.id, v.id, 'the test claims the video it just queued');
      return complete(v.id, { video: asset('video'), poster: asset('poster') }, withCallback);
    }

    test('videos list newest first, filtered by property or status, paginated, per tenant', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const v1 = await completed(a);
      const v2 = await queued(a);
      const v3 = await queued(a);
      await queued(b);
      const all = await s.listVideos(a, {}, 10, null);
      assert.deepEqual(
        all.items.map((v) => v.id),
        [v3.id, v2.id, v1.id],
      );
      assert.equal(all.nextAfter, null);
      const p1 = await s.listVideos(a, {}, 2, null);
      assert.deepEqual(
        p1.items.map((v) => v.id),
        [v3.id, v2.id],
      );
      assert.equal(p1.nextAfter, v2.id);
      assert.deepEqual(
        (await s.listVideos(a, {}, 2, p1.nextAfter)).items.map((v) => v.id),
        [v1.id],
      );
      assert.deepEqual(
        (await s.listVideos(a, { status: 'completed' }, 10, null)).items.map((v) => v.id),
        [v1.id],
      );
      assert.deepEqual(
        (await s.listVideos(a, { status: 'queued' }, 10, null)).items.map((v) => v.id),
        [v3.id, v2.id],
      );
      assert.deepEqual(
        (await s.listVideos(a, { propertyId: v2.propertyId }, 10, null)).items.map((v) => v.id),
        [v2.id],
      );
      assert.deepEqual((await s.listVideos(a, { propertyId: v2.propertyId, status: 'failed' }, 10, null)).items, []);
      assert.equal((await s.listVideos(b, {}, 10, null)).items.length, 1);
      assert.deepEqual((await s.listVideos(a, {}, 10, null)).items[2], await s.getVideo(a, v1.id));
    });

    test("assetById finds any tenant's asset", async () => {
      const a = await h.newTenant();
      const v = await completed(a);
      const got = await s.assetById(v.videoAssetId!);
      assert.equal(got?.tenantId, a);
      assert.deepEqual(got, await s.getAsset(a, v.videoAssetId!));
    });

    test('deleting a finished video removes it, its assets and callbacks, and names their files', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const v = await completed(a);
      const keys = [(await s.getAsset(a, v.videoAssetId!))!.storageKey, (await s.getAsset(a, v.posterAssetId!))!.storageKey];
      assert.deepEqual(await s.deleteVideo(b, v.id), { kind: 'not_found' }, "another tenant's video is not found");
      const out = await s.deleteVideo(a, v.id);
      assert.equal(out.kind, 'deleted');
      assert.deepEqual(out.kind === 'deleted' && [...out.orphans.assetKeys].sort(), [...keys].sort());
      assert.deepEqual(out.kind === 'deleted' && out.orphans.photoKeys, []);
      assert.equal(await s.getVideo(a, v.id), null);
      assert.equal(await s.getAsset(a, v.videoAssetId!), null);
      assert.equal(await s.assetById(v.posterAssetId!), null);
      assert.deepEqual(await s.callbacksOf(v.id), []);
      assert.deepEqual(await s.claimCallbacks(L, clock + 1e9, 10), []);
      assert.deepEqual(await s.deleteVideo(a, v.id), { kind: 'not_found' });
      assert.equal((await s.getProperty(a, v.propertyId))?.photoCount, 2, 'the property and its photos stay');
    });

    test('a queued video is deleted out of the queue; a rendering one is busy', async () => {
      const a = await h.newTenant();
      const first = await queued(a);
      const second = await queued(a);
      const rendering = await s.claimNextQueued(L, null);
      assert.equal(rendering?.id, first.id);
      assert.deepEqual(await s.deleteVideo(a, first.id), { kind: 'busy', videoId: first.id, status: 'rendering' });
      assert.equal((await s.getVideo(a, first.id))?.status, 'rendering');
      assert.deepEqual(await s.deleteVideo(a, second.id), { kind: 'deleted', orphans: { photoKeys: [], assetKeys: [] } });
      assert.equal(await s.claimNextQueued(L, null), null, 'the deleted video left the queue');
    });

    test('a photo is deleted unless an unfinished video shows it; finished videos keep its id', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const done = await completed(a);
      const [shown, spare] = done.photoIds;
      const key = (await s.photosByIds([shown!]))[0]!.storageKey;
      assert.deepEqual(await s.deletePhoto(b, done.propertyId, shown!), { kind: 'not_found' }, "another tenant's photo is not found");
      const other = await s.createProperty(a, PROPERTY);
      assert.deepEqual(await s.deletePhoto(a, other.id, shown!), { kind: 'not_found' }, 'a photo is found only under its own property');
      assert.deepEqual(await s.deletePhoto(a, done.propertyId, shown!), { kind: 'deleted', orphans: { photoKeys: [key], assetKeys: [] } });
      assert.deepEqual(await s.photosByIds([shown!]), []);
      assert.deepEqual((await s.getVideo(a, done.id))?.photoIds, done.photoIds);
      assert.equal((await s.getProperty(a, done.propertyId))?.photoCount, 1);
      const waiting = await s.createVideo(a, { propertyId: done.propertyId, template: 'tour', format: '1:1', callbackUrl: null, photoIds: [spare!] });
      assert.deepEqual(await s.deletePhoto(a, done.propertyId, spare!), { kind: 'busy', videoId: waiting.id, status: 'queued' });
      await s.claimNextQueued(L, null);
      assert.deepEqual(await s.deletePhoto(a, done.propertyId, spare!), { kind: 'busy', videoId: waiting.id, status: 'rendering' });
      await fail(waiting.id, 'x', noCallback);
      assert.equal((await s.deletePhoto(a, done.propertyId, spare!)).kind, 'deleted');
    });

    test('deleting a property removes its photos, videos, assets and callbacks, unless one of its videos is rendering', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const done = await completed(a);
      const keep = await completed(a);
      const photoKeys = (await s.photosByIds(done.photoIds)).map((p) => p.storageKey);
      const assetKeys = (await s.listAssets(a, { videoId: done.id }, 10, null)).items.map((x) => x.storageKey);
      const waiting = await s.createVideo(a, { propertyId: done.propertyId, template: 'tour', format: '1:1', callbackUrl: null, photoIds: done.photoIds });
      assert.deepEqual(await s.deleteProperty(b, done.propertyId), { kind: 'not_found' });
      const rendering = await s.claimNextQueued(L, null);
      assert.equal(rendering?.id, waiting.id);
      assert.deepEqual(await s.deleteProperty(a, done.propertyId), { kind: 'busy', videoId: waiting.id, status: 'rendering' });
      assert.ok(await s.getProperty(a, done.propertyId), 'a refused delete changes nothing');
      await s.releaseRenders(L.owner);
      const out = await s.deleteProperty(a, done.propertyId);
      assert.equal(out.kind, 'deleted');
      assert.deepEqual(out.kind === 'deleted' && [...out.orphans.photoKeys].sort(), [...photoKeys].sort());
      assert.deepEqual(out.kind === 'deleted' && [...out.orphans.assetKeys].sort(), [...assetKeys].sort());
      assert.equal(await s.getProperty(a, done.propertyId), null);
      assert.equal(await s.getVideo(a, done.id), null);
      assert.equal(await s.getVideo(a, waiting.id), null, 'a queued video goes with its property');
      assert.deepEqual(await s.photosByIds(done.photoIds), []);
      assert.deepEqual(await s.callbacksOf(done.id), []);
      assert.equal(await s.claimNextQueued(L, null), null);
      assert.equal((await s.listAssets(a, {}, 10, null)).items.length, 2, "the other property's assets stay");
      assert.ok(await s.getVideo(a, keep.id));
      assert.deepEqual(await s.deleteProperty(a, done.propertyId), { kind: 'not_found' });
    });
    test('several formats are one batch, all or none under the limit; the batch is claimed together', async () => {
      const a = await h.newTenant();
      const { propertyId, photoIds } = await propertyWithPhotos(a, 2);
      const options = { branded: false, captions: true, voiceover: false, musicId: null };
      const inputs = (['16:9', '9:16', '1:1'] as const).map((format) => ({
        propertyId,
        template: 'tour' as const,
        format,
        callbackUrl: null,
        photoIds,
        options,
      }));
      assert.deepEqual(await s.createVideos(a, inputs, 2, null), { kind: 'limit' });
      const out = await s.createVideos(a, inputs, 10, null);
      assert.equal(out.kind, 'created');
      const videos = out.kind === 'created' ? out.videos : [];
      assert.deepEqual(
        videos.map((v) => [v.format, v.batchId, v.options.captions, v.options.branded]),
        [
          ['16:9', videos[0]!.id, true, false],
          ['9:16', videos[0]!.id, true, false],
          ['1:1', videos[0]!.id, true, false],
        ],
      );
      const first = await s.claimNextQueued(L, null);
      assert.equal(first?.id, videos[0]!.id);
      const rest = await s.claimBatch(L, first!.batchId!);
      assert.deepEqual(
        rest.map((v) => [v.id, v.status]),
        [
          [videos[1]!.id, 'rendering'],
          [videos[2]!.id, 'rendering'],
        ],
      );
      assert.equal(await s.claimNextQueued(M, null), null);
    });

    test('an Idempotency-Key answers its first videos for 24 h, refuses another body, and is per tenant', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const { propertyId, photoIds } = await propertyWithPhotos(a, 1);
      const input = { propertyId, template: 'tour' as const, format: '16:9' as const, callbackUrl: null, photoIds };
      const key = (hash: string) => ({ key: 'k1', hash, ttlMs: 24 * 3600_000 });
      const made = await s.createVideos(a, [input], 10, key('h1'));
      assert.equal(made.kind, 'created');
      const again = await s.createVideos(a, [input], 10, key('h1'));
      assert.equal(again.kind, 'replayed');
      assert.deepEqual(again.kind === 'replayed' && again.videos.map((v) => v.id), made.kind === 'created' && made.videos.map((v) => v.id));
      assert.deepEqual(await s.createVideos(a, [input], 10, key('h2')), { kind: 'key_reused' });
      const { propertyId: pb, photoIds: phb } = await propertyWithPhotos(b, 1);
      assert.equal((await s.createVideos(b, [{ ...input, propertyId: pb, photoIds: phb }], 10, key('h2'))).kind, 'created');
      clock += 24 * 3600_000 + 1;
      assert.equal((await s.createVideos(a, [input], 10, key('h2'))).kind, 'created', 'a key is forgotten after 24 h');
    });

    test('cancel: a queued or rendering video becomes cancelled with its callback, its lease ends; a finished one is answered as it is', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      const v = await queued(a, 'https://example.com/hook');
      const cb: CallbackFor = (x) => ({ url: 'https://example.com/hook', event: 'video.cancelled', body: `{"id":${x.id},"status":"${x.status}"}` });
      assert.deepEqual(await s.cancelVideo(b, v.id, cb), { kind: 'not_found' });
      const claimed = await s.claimNextQueued(L, null);
      assert.equal(claimed?.id, v.id);
      const out = await s.cancelVideo(a, v.id, cb);
      assert.equal(out.kind === 'cancelled' && out.video.status, 'cancelled');
      assert.equal(await s.renewRender(L, v.id), false, 'the render loses its lease');
      assert.equal(await s.completeVideo(L.owner, v.id, { video: asset('video'), poster: asset('poster') }, noCallback), null);
      assert.deepEqual(
        (await s.callbacksOf(v.id)).map((c) => c.event),
        ['video.cancelled'],
      );
      assert.equal((await s.cancelVideo(a, v.id, cb)).kind, 'finished');
    });

    test('branding, room tags and audio tracks: per tenant, a replaced logo named, a track in use not deleted', async () => {
      const a = await h.newTenant();
      const b = await h.newTenant();
      assert.equal(await s.getBranding(a), null);
      const brand = {
        primaryColor: '#112233',
        secondaryColor: '#FFFFFF',
        font: 'serif' as const,
        logoKey: 'logo-1.png',
        logoContentType: 'image/png',
        logoWidth: 10,
        logoHeight: 5,
      };
      assert.equal((await s.putBranding(a, brand, brand)).replacedLogoKey, null);
      assert.equal((await s.putBranding(a, { ...brand, logoKey: 'logo-2.png' }, brand)).replacedLogoKey, 'logo-1.png');
      assert.equal((await s.getBranding(a))?.logoKey, 'logo-2.png');
      // A change writes only the fields it names, onto the branding stored at the write.
      const colours = await s.putBranding(a, { primaryColor: '#445566' }, brand);
      assert.deepEqual([colours.branding.primaryColor, colours.branding.logoKey, colours.replacedLogoKey], ['#445566', 'logo-2.png', null]);
      const first = await s.putBranding(b, { font: 'sans' }, brand);
      assert.deepEqual(
        [first.branding.font, first.branding.primaryColor, first.branding.logoKey],
        ['sans', '#112233', 'logo-1.png'],
        'on the defaults when none is stored',
      );
      await s.putBranding(b, { logoKey: null, logoContentType: null, logoWidth: null, logoHeight: null }, brand);
      const c = await h.newTenant();
      assert.equal(await s.getBranding(c), null);
      const { propertyId, photoIds } = await propertyWithPhotos(a, 1);
      assert.equal(await s.setPhotoRoom(b, propertyId, photoIds[0]!, 'kitchen'), null);
      assert.equal((await s.setPhotoRoom(a, propertyId, photoIds[0]!, 'kitchen'))?.room, 'kitchen');
      const track = { filename: 'm.mp3', contentType: 'audio/mpeg', codec: 'mp3', sizeBytes: 10, durationS: 30, storageKey: 'audio-1.mp3' };
      const added = await s.addAudio(a, track, 1);
      assert.notEqual(added, 'too_many');
      assert.equal(await s.addAudio(a, { ...track, storageKey: 'audio-2.mp3' }, 1), 'too_many');
      const id = (added as { id: number }).id as Parameters<VideoStore['getAudio']>[1];
      assert.equal(await s.getAudio(b, id), null);
      assert.equal(await s.getAudio(c, id), null);
      const options = { branded: true, captions: false, voiceover: false, musicId: id };
      const v = await s.createVideo(a, { propertyId, template: 'tour', format: '1:1', callbackUrl: null, photoIds, options });
      assert.deepEqual(await s.deleteAudio(a, id), { kind: 'busy', videoId: v.id, status: 'queued' });
      assert.equal((await s.cancelVideo(a, v.id, noCallback)).kind, 'cancelled');
      assert.deepEqual(await s.deleteAudio(a, id), { kind: 'deleted', orphans: { photoKeys: [], assetKeys: [], mediaKeys: ['audio-1.mp3'] } });
      assert.equal((await s.listAudio(a, 10, null)).items.length, 0);
    });
  });
}
