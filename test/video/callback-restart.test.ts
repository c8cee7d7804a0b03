import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { startEmbedded } from '../../src/embedded/start.js';
import { hmacHex } from '../../src/signing/hmac.js';
import { tempDir } from '../helpers/paths.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { testImage } from './helpers.js';

test('a callback that failed before a restart is retried by the next process after its back-off (injected clock)', async () => {
  const bodies: { body: string; signature: string }[] = [];
  let answer = 503;
  let delivered: () => void = () => {};
  const second = new Promise<void>((r) => (delivered = r));
  let firstAttempt: () => void = () => {};
  const first = new Promise<void>((r) => (firstAttempt = r));
  const hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({ body: Buffer.concat(chunks).toString(), signature: String(req.headers['x-service-signature']) });
      res.statusCode = answer;
      res.end();
      if (answer === 503) firstAttempt();
      else delivered();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const dir = tempDir();
  let now = Date.parse('2026-05-01T10:00:00Z');
  const options = {
    port: 0,
    db: join(dir.path, 'c.db'),
    dataDir: join(dir.path, 'data'),
    adminToken: ADMIN_TOKEN,
    now: () => now,
    ffmpegPath: '/nonexistent/ffmpeg',
    allowPrivateWebhooks: true,
    video: { callbackPollMs: 20 },
  };
  let e = await startEmbedded(options);
  try {
    const call = async (method: string, path: string, token: string, body?: unknown): Promise<any> => {
      const res = await fetch(e.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return res.json();
    };
    const t = await call('POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'c', plan: 'agency' });
    await call('POST', `/v1/admin/tenants/${t.id}/users`, ADMIN_TOKEN, { email: 'c@c.test', password: 'password123' });
    const login = (await (
      await fetch(`${e.url}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'c@c.test', password: 'password123' }),
      })
    ).json()) as { token: string };
    const key = (await call('POST', '/v1/api-keys', login.token, { name: 'k' })).key;
    const pid = (await call('POST', '/v1/properties', key, { title: 'C', address: 'C', price: 1, currency: 'USD' })).id;
    await call('POST', `/v1/properties/${pid}/photos`, key, { photos: [{ data_base64: testImage('jpg').toString('base64') }] });
    const url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/cb`;
    await call('POST', '/v1/videos', key, { property_id: pid, template: 'tour', format: '16:9', callback_url: url });
    await first;
    await e.close();

    answer = 200;
    // Before the 10 s back-off the new process must not deliver; after it, it must.
    now += 5_000;
    e = await startEmbedded(options);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(bodies.length, 1);
    now += 6_000;
    await second;
    assert.equal(bodies.length, 2);
    assert.equal(bodies[1]!.body, bodies[0]!.body);
    const secret = (await call('GET', '/v1/callback-secret', key)).secret;
    assert.equal(bodies[1]!.signature, `v1=${hmacHex(secret, bodies[1]!.body)}`);
    assert.equal(JSON.parse(bodies[1]!.body).event, 'video.failed');
    const row = e.db.prepare('SELECT status, attempts FROM video_callbacks').get() as { status: string; attempts: number };
    assert.deepEqual(row, { status: 'delivered', attempts: 2 });
  } finally {
    await e.close();
    dir.dispose();
    await new Promise((r) => hook.close(r));
  }
});
