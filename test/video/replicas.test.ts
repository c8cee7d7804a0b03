import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pg from 'pg';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/paths.js';
import { call, startReplica, tenantSession, type Replica } from '../helpers/replicas.js';
import { testImage } from './helpers.js';

const LEASE_S = 15;
/** One photo: a render of several seconds at the product's timings, long enough to be killed mid-way, rendered twice. */
const PHOTOS = 1;

test('a render on a replica killed with SIGKILL mid-render completes on another replica once its lease runs out', async () => {
  const url = await freshDatabase();
  const dir = tempDir();
  const db = new pg.Client({ connectionString: url });
  const replicas: Replica[] = [];
  try {
    // Both replicas on one machine share the data directory (photos and assets), as they would share a bucket.
    const flags = ['--job-lease', String(LEASE_S), '--data', join(dir.path, 'data'), '--render-concurrency', '1'];
    const limits = { apiKey: { limit: 100_000, windowSeconds: 60 }, tenantApiKeys: { limit: 100_000, windowSeconds: 60 } };
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(url, dir.path, flags, limits));
    await db.connect();
    const [a, b] = replicas.map((r) => r.url) as [string, string];
    const { token } = await tenantSession(a);
    const { key } = await call(a, 'POST', '/v1/api-keys', token, { name: 'k' });
    const property = await call(b, 'POST', '/v1/properties', key, { title: 'Replicated', address: '1 Lease Lane', price: 1, currency: 'USD' });
    const photos = Array.from({ length: PHOTOS }, (_, i) => ({ data_base64: testImage(i % 2 ? 'png' : 'jpg', '640x360').toString('base64') }));
    await call(a, 'POST', `/v1/properties/${property.id}/photos`, key, { photos });
    const video = await call(b, 'POST', '/v1/videos', key, { property_id: property.id, template: 'tour', format: '16:9' });

    // Whoever claimed it is killed while it renders.
    let owner: string | null = null;
    while (!owner) {
      const { rows } = await db.query(`SELECT lease_owner FROM video_videos WHERE id = $1 AND status = 'rendering'`, [video.id]);
      owner = rows[0]?.lease_owner ?? null;
      if (!owner) await new Promise((r) => setTimeout(r, 20));
    }
    const holder = replicas.find((r) => owner!.includes(`/${r.pid}/`))!;
    const survivor = replicas.find((r) => r !== holder)!;
    await holder.kill();

    let v: any;
    do {
      await new Promise((r) => setTimeout(r, 200));
      v = await call(survivor.url, 'GET', `/v1/videos/${video.id}`, key);
    } while (v.status === 'queued' || v.status === 'rendering');
    assert.equal(v.status, 'completed', v.error);
    const { rows } = await db.query('SELECT COUNT(*)::int AS n FROM video_assets WHERE video_id = $1', [video.id]);
    assert.equal(rows[0].n, 2, 'one video and one poster: the dead replica wrote nothing');
    const file = await fetch(`${survivor.url}/v1/assets/${v.video_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(file.status, 200);
    assert.ok((await file.arrayBuffer()).byteLength > 1000);
  } finally {
    for (const r of replicas) await r.kill();
    await db.end().catch(() => {});
    dir.dispose();
  }
});
