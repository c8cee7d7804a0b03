import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startEmbedded } from '../../src/embedded/start.js';
import { tempDir } from '../helpers/paths.js';
import { ADMIN_TOKEN, type TestServer } from '../helpers/embedded.js';
import { apiKey, createProperty, testImage } from './helpers.js';

test("one tenant's long queue does not hold back another's video: tenants take turns, also after a restart", async () => {
  const dir = tempDir();
  let t = Date.parse('2026-05-01T10:00:00Z');
  // Each reading of the clock is a millisecond later, so started_at records the order of claims.
  const options = {
    port: 0,
    db: join(dir.path, 'q.db'),
    dataDir: join(dir.path, 'data'),
    adminToken: ADMIN_TOKEN,
    now: () => (t += 1),
    ffmpegPath: '/nonexistent/ffmpeg',
    renderConcurrency: 1,
  };
  let e = await startEmbedded(options);
  try {
    const s = {
      ...e,
      async call(method: string, path: string, o: { token?: string; body?: unknown } = {}) {
        const res = await fetch(e.url + path, {
          method,
          headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), 'content-type': 'application/json' },
          ...(o.body ? { body: JSON.stringify(o.body) } : {}),
        });
        return { status: res.status, headers: res.headers, body: (await res.json()) as any };
      },
    } as unknown as TestServer;
    const tenants: { tenantId: number; propertyId: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const { key, tenantId } = await apiKey(s);
      const propertyId = await createProperty(s, key);
      assert.equal(
        (await s.call('POST', `/v1/properties/${propertyId}/photos`, { token: key, body: { photos: [{ data_base64: testImage('jpg').toString('base64') }] } }))
          .status,
        201,
      );
      tenants.push({ tenantId, propertyId });
    }
    await e.close();
    // Queued while no server runs: tenant 1 has four videos, tenant 2 two, tenant 3 one, in that order of arrival.
    const db = new Database(options.db);
    const photoIds = (propertyId: number) =>
      JSON.stringify((db.prepare('SELECT id FROM video_photos WHERE property_id = ?').all(propertyId) as { id: number }[]).map((r) => r.id));
    const insert = db.prepare(
      `INSERT INTO video_videos (tenant_id, property_id, template, format, status, progress, photo_ids, created_at) VALUES (?, ?, 'tour', '16:9', 'queued', 0, ?, ?)`,
    );
    const plan = [0, 0, 0, 0, 1, 1, 2];
    for (const [n, i] of plan.entries())
      insert.run(tenants[i]!.tenantId, tenants[i]!.propertyId, photoIds(tenants[i]!.propertyId), new Date(t + n).toISOString());
    db.close();

    e = await startEmbedded(options);
    const order = async (): Promise<{ tenant_id: number; status: string }[]> =>
      e.db.prepare('SELECT tenant_id, status FROM video_videos ORDER BY started_at, id').all() as { tenant_id: number; status: string }[];
    for (;;) {
      const rows = await order();
      if (rows.every((r) => r.status === 'failed')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const ids = tenants.map((x) => x.tenantId);
    assert.deepEqual(
      (await order()).map((r) => r.tenant_id),
      [ids[0], ids[1], ids[2], ids[0], ids[1], ids[0], ids[0]],
    );
  } finally {
    await e.close();
    dir.dispose();
  }
});
