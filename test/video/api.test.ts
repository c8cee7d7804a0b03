import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { ADMIN_TOKEN, tenantSession } from '../helpers/embedded.js';
import { hmacHex } from '../../src/signing/hmac.js';
import { apiKey, createProperty, startVideoServer, testImage } from './helpers.js';

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

test("auth: no key 401, the tenant's session 200 (the dashboard), the admin token 403 forbidden, unknown key 401, suspended tenant 403 tenant_suspended", async () => {
  const s = await startVideoServer();
  try {
    const none = await s.call('GET', '/v1/properties');
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'unauthorized');
    const { key, tenantId, session } = await apiKey(s);
    const withSession = await s.call('GET', '/v1/properties', { token: session });
    assert.equal(withSession.status, 200);
    assert.ok(withSession.headers.get('x-ratelimit-limit'), 'a session is rate limited like a key');
    const withAdmin = await s.call('GET', '/v1/properties', { token: ADMIN_TOKEN });
    assert.equal(withAdmin.status, 403);
    assert.equal(withAdmin.body.error.code, 'forbidden');
    assert.equal((await s.call('GET', '/v1/properties', { token: 'bpk_nope' })).status, 401);
    assert.equal((await s.call('GET', '/v1/properties', { token: key })).status, 200);
    await s.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN });
    const suspended = await s.call('GET', '/v1/properties', { token: key });
    assert.equal(suspended.status, 403);
    assert.equal(suspended.body.error.code, 'tenant_suspended');
    await s.call('POST', `/v1/admin/tenants/${tenantId}/resume`, { token: ADMIN_TOKEN });
    assert.equal((await s.call('GET', '/v1/properties', { token: key })).status, 200);
  } finally {
    await s.stop();
  }
});

test('plan gate: a key of a tenant whose plan dropped below agency is 403 plan_required, with rate-limit headers', async () => {
  const s = await startVideoServer();
  try {
    const { key, tenantId } = await apiKey(s);
    const down = await s.call('PATCH', `/v1/admin/tenants/${tenantId}`, { token: ADMIN_TOKEN, body: { plan: 'pro' } });
    assert.equal(down.status, 200);
    const r = await s.call('GET', '/v1/properties', { token: key });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'plan_required');
    for (const h of RATE_HEADERS) assert.ok(r.headers.get(h), h);
    const pro = await tenantSession(s, 'pro');
    const issue = await s.call('POST', '/v1/api-keys', { token: pro.token, body: { name: 'k' } });
    assert.equal(issue.status, 403);
    assert.equal(issue.body.error.code, 'plan_required');
  } finally {
    await s.stop();
  }
});

test('rate limit: exactly 100 requests per minute per key (injected clock), then 429 with Retry-After; headers on every response', async () => {
  let now = Date.parse('2026-03-01T12:00:00Z');
  const s = await startVideoServer({ now: () => now });
  try {
    const a = await apiKey(s);
    const b = await apiKey(s);
    const start = now;
    for (let i = 1; i <= 100; i++) {
      // Spread over the minute: the window slides, so the 100 count until the first is a minute old.
      now = start + i * 500;
      const path = i % 3 === 0 ? '/v1/properties/999' : '/v1/properties';
      const r = await s.call('GET', path, { token: a.key });
      assert.equal(r.status, i % 3 === 0 ? 404 : 200);
      assert.equal(r.headers.get('x-ratelimit-limit'), '100');
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(100 - i));
      assert.equal(r.headers.get('x-ratelimit-reset'), String(Math.ceil((start + 500 + 60_000) / 1000)));
    }
    now = start + 60_000 + 499;
    const limited = await s.call('GET', '/v1/properties', { token: a.key });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    // Another key has its own budget.
    assert.equal((await s.call('GET', '/v1/properties', { token: b.key })).status, 200);
    // The first request leaves the window at start+500+60000; then exactly one slot frees.
    now = start + 60_000 + 500;
    const again = await s.call('GET', '/v1/properties', { token: a.key });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('x-ratelimit-remaining'), '0');
    assert.equal((await s.call('GET', '/v1/properties', { token: a.key })).status, 429);
    now = start + 3 * 60_000;
    const fresh = await s.call('GET', '/v1/properties', { token: a.key });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.headers.get('x-ratelimit-remaining'), '99');
  } finally {
    await s.stop();
  }
});

test('properties: create with validation (422 details), read, integer ids, tenant isolation', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const bad = await s.call('POST', '/v1/properties', {
      token: key,
      body: { title: '', price: -1, currency: 'euro', bedrooms: 1.5, bathrooms: 1.25, area: 'big', bedroom: 3 },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error.code, 'validation_failed');
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), [
      'address',
      'area',
      'bathrooms',
      'bedrooms',
      'currency',
      'price',
      'title',
    ]);
    assert.equal((await s.call('POST', '/v1/properties', { token: key, body: '{' })).status, 400);
    assert.equal((await s.call('POST', '/v1/properties', { token: key, body: 'x', headers: { 'content-type': 'text/plain' } })).status, 415);

    const created = await s.call('POST', '/v1/properties', {
      token: key,
      body: {
        title: 'Loft',
        address: '1 Main St',
        city: 'Springfield',
        price: 250000.5,
        currency: 'USD',
        bedrooms: 3,
        bathrooms: 1.5,
        area: 92.5,
        description: 'Bright.',
      },
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('location'), `/v1/properties/${created.body.id}`);
    assert.ok(Number.isInteger(created.body.id));
    assert.deepEqual(Object.keys(created.body).sort(), [
      'address',
      'area',
      'bathrooms',
      'bedrooms',
      'city',
      'created_at',
      'currency',
      'description',
      'id',
      'photo_count',
      'photos',
      'price',
      'title',
    ]);
    assert.equal(created.body.photo_count, 0);
    assert.deepEqual(created.body.photos, []);
    const minimal = await s.call('POST', '/v1/properties', { token: key, body: { title: 'T', address: 'A', price: 0, currency: 'GBP' } });
    assert.equal(minimal.status, 201);
    assert.equal(minimal.body.bedrooms, null);

    const got = await s.call('GET', `/v1/properties/${created.body.id}`, { token: key });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, created.body);
    assert.equal((await s.call('GET', `/v1/properties/${created.body.id}`, { token: other.key })).status, 404);
    for (const id of ['abc', '1.5', '-1', '0', '99999']) {
      const r = await s.call('GET', `/v1/properties/${id}`, { token: key });
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error.code, 'not_found');
    }
    const otherList = await s.call('GET', '/v1/properties', { token: other.key });
    assert.deepEqual(otherList.body, { data: [], next_cursor: null });
  } finally {
    await s.stop();
  }
});

test('pagination: limit 1-100 (default 20), opaque cursor, newest first, no overlap', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const ids: number[] = [];
    for (let i = 0; i < 25; i++) ids.push(await createProperty(s, key, { title: `P${i}` }));
    const first = await s.call('GET', '/v1/properties', { token: key });
    assert.equal(first.body.data.length, 20);
    assert.equal(typeof first.body.next_cursor, 'string');
    assert.equal(first.body.data[0].id, ids[24]);
    const second = await s.call('GET', `/v1/properties?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: key });
    assert.equal(second.body.data.length, 5);
    assert.equal(second.body.next_cursor, null);
    const all = [...first.body.data, ...second.body.data].map((p: { id: number }) => p.id);
    assert.deepEqual(all, [...ids].reverse());
    const walk: number[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await s.call('GET', `/v1/properties?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { token: key });
      walk.push(...r.body.data.map((p: { id: number }) => p.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    assert.deepEqual(walk, [...ids].reverse());
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=garbage']) {
      const r = await s.call('GET', `/v1/properties?${q}`, { token: key });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'bad_request');
    }
    assert.equal((await s.call('GET', '/v1/properties?limit=100', { token: key })).body.data.length, 25);
  } finally {
    await s.stop();
  }
});

test('videos: validation 422, unknown or foreign property 404, 202 queued (a property without photos too)', async () => {
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await createProperty(s, key);
    const cases: [unknown, string[]][] = [
      [{}, ['format', 'property_id', 'template']],
      [{ property_id: '1', template: 'tour', format: '16:9' }, ['property_id']],
      [{ property_id: pid, template: 'slideshow', format: '16:9' }, ['template']],
      [{ property_id: pid, template: 'tour', format: '4:3' }, ['format']],
      [{ property_id: pid, template: 'tour', format: 169 }, ['format']],
      [{ property_id: pid, template: 'tour', format: '1:1', callback_url: 'not a url' }, ['callback_url']],
    ];
    for (const [body, paths] of cases) {
      const r = await s.call('POST', '/v1/videos', { token: key, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(), paths);
    }
    assert.equal((await s.call('POST', '/v1/videos', { token: key, body: { property_id: 999, template: 'tour', format: '16:9' } })).status, 404);
    assert.equal((await s.call('POST', '/v1/videos', { token: other.key, body: { property_id: pid, template: 'tour', format: '16:9' } })).status, 404);
    // A property without photos gets a tour of its title card alone.
    const empty = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '16:9' } });
    assert.equal(empty.status, 202);
    assert.deepEqual(empty.body.photo_ids, []);

    const up = await s.call('POST', `/v1/properties/${pid}/photos`, {
      token: key,
      body: { photos: [{ filename: 'a.png', data_base64: testImage('png').toString('base64') }] },
    });
    assert.equal(up.status, 201);
    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '9:16' } });
    assert.equal(v.status, 202);
    assert.equal(v.body.status, 'queued');
    assert.equal(v.body.progress, 0);
    assert.equal(v.body.property_id, pid);
    assert.equal(v.body.format, '9:16');
    assert.equal(v.headers.get('location'), `/v1/videos/${v.body.id}`);
    for (const h of RATE_HEADERS) assert.ok(v.headers.get(h), h);
    assert.equal((await s.call('GET', `/v1/videos/${v.body.id}`, { token: other.key })).status, 404);
    assert.equal((await s.call('GET', '/v1/videos/x', { token: key })).status, 404);
    // Without ffmpeg the render fails with the reason rather than staying queued.
    let got;
    do {
      await new Promise((r) => setTimeout(r, 20));
      got = await s.call('GET', `/v1/videos/${v.body.id}`, { token: key });
    } while (got.body.status === 'queued' || got.body.status === 'rendering');
    assert.equal(got.body.status, 'failed');
    assert.match(got.body.error, /ffmpeg/);
    assert.ok(got.body.completed_at);
  } finally {
    await s.stop();
  }
});

test('assets: empty list, bad filters 400, unknown asset 404', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    assert.deepEqual((await s.call('GET', '/v1/assets', { token: key })).body, { data: [], next_cursor: null });
    assert.equal((await s.call('GET', '/v1/assets?property_id=x', { token: key })).status, 400);
    assert.equal((await s.call('GET', '/v1/assets/1', { token: key })).status, 404);
    assert.equal((await s.call('GET', '/v1/assets/1/file', { token: key })).status, 404);
    const secret = await s.call('GET', '/v1/callback-secret', { token: key });
    assert.match(secret.body.secret, /^whsec_/);
    assert.equal((await s.call('GET', '/v1/callback-secret', { token: key })).body.secret, secret.body.secret);
    const rotated = await s.call('POST', '/v1/callback-secret/rotate', { token: key });
    assert.notEqual(rotated.body.secret, secret.body.secret);
  } finally {
    await s.stop();
  }
});

test('a failed render posts a signed video.failed callback; callback URLs to private addresses are refused by default', async () => {
  const received: { body: string; signature: string | undefined; event: string | undefined }[] = [];
  let arrived: () => void = () => {};
  const done = new Promise<void>((r) => (arrived = r));
  const hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString(),
        signature: req.headers['x-service-signature'] as string,
        event: req.headers['x-service-event'] as string,
      });
      res.end();
      arrived();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const s = await startVideoServer({ ffmpegPath: '/nonexistent/ffmpeg' });
  const strict = await startVideoServer({ allowPrivateWebhooks: false });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: testImage('jpg').toString('base64') }] } });
    const url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/cb`;
    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1', callback_url: url } });
    assert.equal(v.status, 202);
    assert.equal(v.body.callback_url, url);
    await done;
    const secret = (await s.call('GET', '/v1/callback-secret', { token: key })).body.secret;
    const [got] = received;
    assert.equal(got!.event, 'video.failed');
    assert.equal(got!.signature, `v1=${hmacHex(secret, got!.body)}`);
    const payload = JSON.parse(got!.body);
    assert.equal(payload.event, 'video.failed');
    assert.equal(payload.video.status, 'failed');
    assert.match(payload.video.error, /ffmpeg not found/);
    assert.doesNotMatch(payload.video.error, /nonexistent/);

    const k2 = await apiKey(strict);
    const p2 = await createProperty(strict, k2.key);
    await strict.call('POST', `/v1/properties/${p2}/photos`, { token: k2.key, body: { photos: [{ data_base64: testImage('jpg').toString('base64') }] } });
    for (const bad of [
      url,
      'https://127.0.0.1/cb',
      'https://localhost/cb',
      'https://10.1.2.3/cb',
      'https://[::1]/cb',
      'https://169.254.169.254/latest',
      'ftp://example.com/x',
    ]) {
      const r = await strict.call('POST', '/v1/videos', { token: k2.key, body: { property_id: p2, template: 'tour', format: '1:1', callback_url: bad } });
      assert.equal(r.status, 422, bad);
      assert.deepEqual(
        r.body.error.details.map((d: { path: string }) => d.path),
        ['callback_url'],
      );
    }
  } finally {
    await s.stop();
    await strict.stop();
    await new Promise((r) => hook.close(r));
  }
});
