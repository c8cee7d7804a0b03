import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { Resolve } from '../../src/net/ssrf.js';
import { ISSUE_URLS } from '../helpers/ssrf-cases.js';
import type { TestServer } from '../helpers/embedded.js';
import { apiKey, createProperty, startVideoServer, testImage } from './helpers.js';

async function propertyWithPhoto(s: TestServer): Promise<{ key: string; pid: number }> {
  const { key } = await apiKey(s);
  const pid = await createProperty(s, key);
  const up = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: testImage('jpg').toString('base64') }] } });
  assert.equal(up.status, 201);
  return { key, pid };
}

/** Waits (polling the outbox, the only observable) until the video's callback is no longer pending. */
async function settledCallback(s: TestServer, videoId: number): Promise<{ status: string; last_error: string | null; attempts: number }> {
  for (;;) {
    const row = s.db.prepare('SELECT status, last_error, attempts FROM video_callbacks WHERE video_id = ?').get(videoId) as
      | { status: string; last_error: string | null; attempts: number }
      | undefined;
    if (row && (row.status !== 'pending' || row.attempts > 0)) return row;
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('video callback URLs in every address form of the issue are 422 at creation, as webhook URLs are', async () => {
  const s = await startVideoServer({
    allowPrivateWebhooks: false,
    ffmpegPath: '/nonexistent/ffmpeg',
    video: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
  });
  try {
    const { key, pid } = await propertyWithPhoto(s);
    for (const url of ISSUE_URLS) {
      const r = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '16:9', callback_url: url } });
      assert.equal(r.status, 422, url);
      assert.equal(r.body.error.details[0].path, 'callback_url', url);
    }
  } finally {
    await s.stop();
  }
});

test('DNS rebinding: a callback host that resolved to a public address at creation and to 127.0.0.1 at delivery is not contacted', async () => {
  let contacted = 0;
  const local = createServer((req, res) => {
    contacted++;
    req.resume();
    res.end();
  });
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
  // Public for the first lookup (the check at creation), loopback for every later one.
  let lookups = 0;
  const resolve: Resolve = async () => [{ address: lookups++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
  const s = await startVideoServer({ allowPrivateWebhooks: false, ffmpegPath: '/nonexistent/ffmpeg', video: { resolve, callbackPollMs: 20 } });
  try {
    const { key, pid } = await propertyWithPhoto(s);
    const port = (local.address() as { port: number }).port;
    const v = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', format: '16:9', callback_url: `https://rebind.example:${port}/cb` },
    });
    assert.equal(v.status, 202, JSON.stringify(v.body));
    assert.equal(lookups >= 1, true);
    const row = await settledCallback(s, v.body.id);
    assert.equal(row.status, 'failed');
    assert.match(row.last_error ?? '', /SSRF guard.*loopback.*127\.0\.0\.1/);
    assert.equal(contacted, 0);
  } finally {
    await s.stop();
    await new Promise((r) => local.close(r));
  }
});

test("a callback connects to the address the guard resolved (pinned), with the URL's own Host", async () => {
  const got: IncomingHttpHeaders[] = [];
  let arrived: () => void = () => {};
  const delivered = new Promise<void>((r) => (arrived = r));
  const receiver = createServer((req, res) => {
    got.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.end();
      arrived();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  // 'receiver.test' exists in no real DNS: the callback can only arrive through the pinned address.
  const s = await startVideoServer({
    ffmpegPath: '/nonexistent/ffmpeg',
    video: { resolve: async () => [{ address: '127.0.0.1', family: 4 }], callbackPollMs: 20 },
  });
  try {
    const { key, pid } = await propertyWithPhoto(s);
    const port = (receiver.address() as { port: number }).port;
    const v = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', format: '16:9', callback_url: `http://receiver.test:${port}/cb` },
    });
    assert.equal(v.status, 202);
    await delivered;
    assert.equal(got[0]!.host, `receiver.test:${port}`);
    assert.equal(got[0]!['x-service-event'], 'video.failed');
    assert.equal((await settledCallback(s, v.body.id)).status, 'delivered');
  } finally {
    await s.stop();
    await new Promise((r) => receiver.close(r));
  }
});

test('a callback URL with a #fragment is 422; one with a non-ASCII host is kept as it is called (xn-- host, percent-encoded path)', async () => {
  const s = await startVideoServer({
    allowPrivateWebhooks: false,
    ffmpegPath: '/nonexistent/ffmpeg',
    video: { resolve: async () => [{ address: '93.184.216.34', family: 4 }] },
  });
  try {
    const { key, pid } = await propertyWithPhoto(s);
    const frag = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', format: '16:9', callback_url: 'https://hooks.example.com/done#x' },
    });
    assert.equal(frag.status, 422);
    assert.deepEqual(frag.body.error.details, [{ path: 'callback_url', message: 'must not carry a fragment (#…): a fragment is never sent with the request' }]);
    const idn = await s.call('POST', '/v1/videos', {
      token: key,
      body: { property_id: pid, template: 'tour', format: '16:9', callback_url: 'https://bücher.example/fertig' },
    });
    assert.equal(idn.status, 202);
    assert.equal(idn.body.callback_url, 'https://xn--bcher-kva.example/fertig');
  } finally {
    await s.stop();
  }
});
