import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbedded, type Embedded } from '../../src/embedded/start.js';
import { tempDir } from '../helpers/paths.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { testImage } from './helpers.js';

async function call(e: Embedded, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(e.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

test('a server stopped mid-render resumes the video on the next start with the same DB and data dir', async () => {
  const dir = tempDir();
  const options = {
    port: 0,
    db: join(dir.path, 'b.db'),
    dataDir: join(dir.path, 'data'),
    adminToken: ADMIN_TOKEN,
    // Long enough that the render is still running when the server stops.
    video: { timings: { titleS: 2, photoS: 4, fadeS: 0.5, fps: 25 } },
    limits: { apiKey: { limit: 100_000, windowMs: 60_000 }, tenantApiKeys: { limit: 100_000, windowMs: 60_000 } },
  };
  let e = await startEmbedded(options);
  try {
    const tenant = await call(e, 'POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'R', plan: 'enterprise' });
    await call(e, 'POST', `/v1/admin/tenants/${tenant.body.id}/users`, ADMIN_TOKEN, { email: 'r@r.test', password: 'password123' });
    const login = await fetch(`${e.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'r@r.test', password: 'password123' }),
    });
    const session = ((await login.json()) as { token: string }).token;
    const key = (await call(e, 'POST', '/v1/api-keys', session, { name: 'k' })).body.key as string;
    const pid = (await call(e, 'POST', '/v1/properties', key, { title: 'R', address: '1 R St', price: 1, currency: 'USD' })).body.id;
    const photos = ['jpg', 'png', 'webp'].map((ext) => ({ data_base64: testImage(ext as 'jpg', '640x360').toString('base64') }));
    assert.equal((await call(e, 'POST', `/v1/properties/${pid}/photos`, key, { photos })).status, 201);
    const id = (await call(e, 'POST', '/v1/videos', key, { property_id: pid, template: 'tour', format: '16:9' })).body.id;

    const poll = async (): Promise<any> => {
      await new Promise((r) => setTimeout(r, 20));
      return (await call(e, 'GET', `/v1/videos/${id}`, key)).body;
    };
    let v;
    do v = await poll();
    while (v.status === 'queued' || (v.status === 'rendering' && v.progress === 0));
    assert.equal(v.status, 'rendering', 'the render finished before the server could be stopped');
    await e.close();
    const row = new (await import('better-sqlite3')).default(options.db).prepare('SELECT status FROM video_videos WHERE id = ?').get(id) as { status: string };
    assert.equal(row.status, 'queued', 'a stopping server hands its render back to the queue');

    e = await startEmbedded(options);
    do v = await poll();
    while (v.status === 'queued' || v.status === 'rendering');
    assert.equal(v.status, 'completed', v.error);
    assert.ok(v.video_asset_id && v.poster_asset_id);
    const assets = await call(e, 'GET', `/v1/assets?video_id=${id}`, key);
    assert.equal(assets.body.data.length, 2);
    assert.equal(readdirSync(join(options.dataDir, 'assets')).length, 2);
    assert.deepEqual(readdirSync(join(options.dataDir, 'work')), []);
  } finally {
    await e.close();
    dir.dispose();
  }
});
