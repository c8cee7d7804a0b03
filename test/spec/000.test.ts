/**
 * Conformance with spec 000 (property-video API), section by section in the spec's own order.
 * Each case quotes the line it checks; rendering and uploads are tested in depth in test/video.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, tenantSession } from '../helpers/embedded.js';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, waitForVideo } from '../video/helpers.js';

// §1 "Base address: {base_url}, which already ends with the version segment /v1." "Format: JSON."
// §9 "The version is part of the base address: /v1."
test('§1/§9 every route is under /v1 and answers JSON', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const r = await s.call('GET', '/v1/properties', { token: key });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal((await s.call('GET', '/properties', { token: key })).status, 404);
  } finally {
    await s.stop();
  }
});

// §1 "API access is only available from the agency plan tier upward." §5.2 "API access requires the agency plan tier or higher."
test('§1/§5.2 agency or higher: below it an API key is refused 403 plan_required; the agency plan can be bought and then a key works', async () => {
  const s = await startVideoServer();
  try {
    const { token } = await tenantSession(s, 'pro');
    const denied = await s.call('POST', '/v1/api-keys', { token, body: { name: 'k' } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'plan_required');
    const checkout = await s.call('POST', '/v1/billing/checkout', { token, body: { plan: 'agency' } });
    assert.equal(checkout.status, 201);
    await fetch(checkout.body.url, { method: 'POST' });
    const issued = await s.call('POST', '/v1/api-keys', { token, body: { name: 'k' } });
    assert.equal(issued.status, 201);
    assert.equal((await s.call('GET', '/v1/properties', { token: issued.body.key })).status, 200);
    for (const plan of ['agency', 'enterprise'] as const) {
      const { key } = await apiKey(s, plan);
      assert.equal((await s.call('GET', '/v1/assets', { token: key })).status, 200, plan);
    }
  } finally {
    await s.stop();
  }
});

// §2 "video (creation input) | property_id | number (integer) | yes"; "template | string | yes ... ("tour")"; "format | string | yes | Aspect ratio written as <width>:<height>"
test('§2 video creation input: property_id (integer), template ("tour") and format (<width>:<height>) are required and checked', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    for (const [body, field] of [
      [{ template: 'tour', format: '16:9' }, 'property_id'],
      [{ property_id: 'one', template: 'tour', format: '16:9' }, 'property_id'],
      [{ property_id: 1.5, template: 'tour', format: '16:9' }, 'property_id'],
      [{ property_id: pid, format: '16:9' }, 'template'],
      [{ property_id: pid, template: 'tour' }, 'format'],
      [{ property_id: pid, template: 'tour', format: 'wide' }, 'format'],
    ] as const) {
      const r = await s.call('POST', '/v1/videos', { token: key, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.ok(
        r.body.error.details.some((d: { path: string }) => d.path === field),
        `${field} in ${JSON.stringify(r.body.error.details)}`,
      );
    }
  } finally {
    await s.stop();
  }
});

// §3 "A video has a status that can be read with GET /videos/:id."
// §4 the seven endpoints: POST/GET /properties, GET /properties/:id, POST /properties/:id/photos, POST /videos, GET /videos/:id, GET /assets.
test('§3/§4 the seven endpoints, in order: create and read properties, upload photos, request a video and read its status, list assets', async () => {
  const s = await startVideoServer();
  try {
    const { key } = await apiKey(s);
    const created = await s.call('POST', '/v1/properties', {
      token: key,
      body: { title: 'Harbour loft', address: '1 Quay', city: 'Bristol', price: 300000, currency: 'GBP' },
    });
    assert.equal(created.status, 201);
    const id = created.body.id;
    assert.ok(Number.isInteger(id));
    assert.ok((await s.call('GET', '/v1/properties', { token: key })).body.data.some((p: { id: number }) => p.id === id));
    assert.equal((await s.call('GET', `/v1/properties/${id}`, { token: key })).body.id, id);
    // §4 "All requests send Content-Type: application/json where a body is sent."
    const photos = await s.call('POST', `/v1/properties/${id}/photos`, {
      token: key,
      body: { photos: [{ filename: 'a.jpg', data_base64: testImage('jpg').toString('base64') }] },
    });
    assert.equal(photos.status, 201);
    const video = await s.call('POST', '/v1/videos', { token: key, body: { property_id: id, template: 'tour', format: '16:9' } });
    assert.equal(video.status, 202);
    const status = await s.call('GET', `/v1/videos/${video.body.id}`, { token: key });
    assert.equal(status.status, 200);
    assert.ok(['queued', 'rendering', 'completed'].includes(status.body.status), status.body.status);
    const assets = await s.call('GET', '/v1/assets', { token: key });
    assert.equal(assets.status, 200);
    assert.ok(Array.isArray(assets.body.data));
  } finally {
    await s.stop();
  }
});

// Where spec 000 says "not shown" the design decides: integer ids; lists take ?limit= (1–100, default 20) and ?cursor= and
// answer {data, next_cursor: string|null}; POST /videos → 202 {id, status: "queued", ...}; formats 16:9, 9:16, 1:1, 4:5;
// status queued → rendering → completed with progress 0–1 and error; assets: the MP4 and a JPEG poster, each with /file.
test('not shown, decided: list pages {data, next_cursor}; 201/202 with Location; the four formats; a video completes with an MP4 and a poster', async () => {
  const s = await startVideoServer({ limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    let last = 0;
    for (let i = 0; i < 21; i++) {
      const r = await s.call('POST', '/v1/properties', { token: key, body: { address: `${i} Quay` } });
      assert.equal(r.status, 201);
      assert.equal(r.headers.get('location'), `/v1/properties/${r.body.id}`);
      last = r.body.id;
    }
    const first = await s.call('GET', '/v1/properties', { token: key });
    assert.deepEqual(Object.keys(first.body).sort(), ['data', 'next_cursor']);
    assert.equal(first.body.data.length, 20, 'default limit 20');
    assert.equal(first.body.data[0].id, last, 'newest first');
    assert.equal(typeof first.body.next_cursor, 'string');
    const rest = await s.call('GET', `/v1/properties?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: key });
    assert.equal(rest.body.data.length, 1);
    assert.equal(rest.body.next_cursor, null);
    for (const limit of ['0', '101', 'x']) assert.equal((await s.call('GET', `/v1/properties?limit=${limit}`, { token: key })).status, 400, limit);
    assert.equal((await s.call('GET', '/v1/properties?limit=100', { token: key })).body.data.length, 21);

    const ids: number[] = [];
    for (const format of ['16:9', '9:16', '1:1', '4:5']) {
      const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: last, template: 'tour', format } });
      assert.equal(r.status, 202, format);
      assert.equal(r.headers.get('location'), `/v1/videos/${r.body.id}`);
      assert.equal(r.body.status, 'queued');
      assert.equal(r.body.progress, 0);
      assert.equal(r.body.error, null);
      assert.equal(r.body.format, format);
      ids.push(r.body.id);
    }
    const done = await waitForVideo(s, key, ids[0]!);
    assert.equal(done.status, 'completed', done.error);
    assert.equal(done.progress, 1);
    const assets = (await s.call('GET', `/v1/assets?video_id=${done.id}`, { token: key })).body.data;
    assert.deepEqual(assets.map((a: { kind: string }) => a.kind).sort(), ['poster', 'video']);
    for (const a of assets) {
      const file = await fetch(`${s.url}${a.url}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(file.status, 200);
      assert.equal(file.headers.get('content-type'), a.kind === 'video' ? 'video/mp4' : 'image/jpeg');
      await file.arrayBuffer();
    }
  } finally {
    await s.stop();
  }
});

// §5.1 "Every request carries the header Authorization: Bearer <API_KEY>."
test("§5.1 without a bearer API key every route is 401; the admin token is not an API key (403); the tenant's own session (the dashboard) is admitted", async () => {
  const s = await startVideoServer();
  try {
    const { session } = await apiKey(s);
    for (const [method, path] of [
      ['GET', '/v1/properties'],
      ['POST', '/v1/properties'],
      ['GET', '/v1/properties/1'],
      ['POST', '/v1/videos'],
      ['GET', '/v1/videos/1'],
      ['GET', '/v1/assets'],
    ] as const) {
      const r = await s.call(method, path, method === 'POST' ? { body: {} } : {});
      assert.equal(r.status, 401, `${method} ${path}`);
      assert.equal(r.body.error.code, 'unauthorized');
    }
    assert.equal((await s.call('GET', '/v1/assets', { token: 'bpk_not_a_key' })).status, 401);
    const byAdmin = await s.call('GET', '/v1/assets', { token: ADMIN_TOKEN });
    assert.equal(byAdmin.status, 403);
    assert.equal(byAdmin.body.error.code, 'forbidden');
    assert.equal((await s.call('GET', '/v1/assets', { token: session })).status, 200);
  } finally {
    await s.stop();
  }
});

// §8 "Rate limit | 100 requests per minute"
test('§8 100 requests per minute per key: the 101st is 429 with Retry-After; every answer carries X-RateLimit-*', async () => {
  const s = await startVideoServer();
  try {
    const { key, session } = await apiKey(s);
    for (let i = 1; i <= 100; i++) {
      const r = await s.call('GET', '/v1/assets', { token: key });
      assert.equal(r.status, 200, `request ${i}`);
      assert.equal(r.headers.get('x-ratelimit-limit'), '100');
    }
    const over = await s.call('GET', '/v1/assets', { token: key });
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, 'rate_limited');
    assert.ok(Number(over.headers.get('retry-after')) > 0);
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
    // Counted per key (the design's choice where §8 is silent): another key of the same tenant is still admitted.
    const other = await s.call('POST', '/v1/api-keys', { token: session, body: { name: 'second' } });
    const fresh = await s.call('GET', '/v1/assets', { token: other.body.key });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.headers.get('x-ratelimit-remaining'), '99');
    // "on every response": a refusal after the key is known carries them too.
    const missing = await s.call('GET', '/v1/properties/999', { token: other.body.key });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-ratelimit-limit'), '100');
  } finally {
    await s.stop();
  }
});
