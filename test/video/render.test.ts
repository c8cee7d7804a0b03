import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hmacHex } from '../../src/signing/hmac.js';
import { apiKey, createProperty, ffprobe, startVideoServer, testImage, uploadMultipart, waitForVideo } from './helpers.js';

const SIZES = { '16:9': [1920, 1080], '9:16': [1080, 1920], '1:1': [1080, 1080], '4:5': [1080, 1350] } as const;
/** titleS 1 + 3 photos × (photoS 1.5 − fadeS 0.5). */
const EXPECTED_S = 4;

interface Received {
  body: string;
  headers: IncomingMessage['headers'];
  /** The server's clock when the delivery arrived, in ms. */
  at: number;
}

/** A local callback receiver that answers 500 to the first delivery, to exercise the retry. */
async function receiver(clock: () => number): Promise<{ url: string; got: Received[]; next(): Promise<Received>; close(): Promise<void> }> {
  const got: Received[] = [];
  const waiters: ((r: Received) => void)[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls++;
      if (calls === 1) {
        res.statusCode = 500;
        res.end();
        return;
      }
      const r = { body: Buffer.concat(chunks).toString('utf8'), headers: req.headers, at: clock() };
      got.push(r);
      res.end('ok');
      waiters.shift()?.(r);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    next: () => (got.length > 0 ? Promise.resolve(got.shift()!) : new Promise((r) => waiters.push(r))),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test('renders a tour from three photos in each format: H.264 + AAC MP4 at the format size, poster, assets with Range and ETag, signed callback', async () => {
  let clockOffset = 0;
  const s = await startVideoServer({
    now: () => Date.now() + clockOffset,
    limits: { apiKey: { limit: 100_000, windowMs: 60_000 }, tenantApiKeys: { limit: 100_000, windowMs: 60_000 } },
  });
  const hook = await receiver(() => Date.now() + clockOffset);
  try {
    const { key } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await createProperty(s, key, {
      title: 'Maison Étoile, 100% {renovated}',
      address: '5 Avenue Foch',
      price: 1250000,
      currency: 'EUR',
      bedrooms: 4,
    });
    const up = await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [
      { name: 'a.jpg', data: testImage('jpg', '640x480') },
      { name: 'b.png', data: testImage('png', '480x640') },
      { name: 'c.webp', data: testImage('webp', '800x450') },
    ]);
    assert.equal(up.status, 201);
    const secret = (await s.call('GET', '/v1/callback-secret', { token: key })).body.secret as string;

    const ids: Record<string, number> = {};
    for (const format of Object.keys(SIZES)) {
      const body: Record<string, unknown> = { property_id: pid, template: 'tour', format };
      if (format === '16:9') body.callback_url = hook.url;
      const r = await s.call('POST', '/v1/videos', { token: key, body });
      assert.equal(r.status, 202);
      ids[format] = r.body.id;
    }
    const seen = new Set<string>();
    for (const [format, [w, h]] of Object.entries(SIZES)) {
      const v = await waitForVideo(s, key, ids[format]!);
      assert.equal(v.status, 'completed', v.error);
      assert.equal(v.progress, 1);
      assert.ok(v.started_at && v.completed_at && v.created_at <= v.started_at && v.started_at <= v.completed_at);
      const asset = await s.call('GET', `/v1/assets/${v.video_asset_id}`, { token: key });
      assert.equal(asset.status, 200);
      assert.equal(asset.body.kind, 'video');
      assert.equal(asset.body.content_type, 'video/mp4');
      assert.deepEqual([asset.body.width, asset.body.height, asset.body.video_id, asset.body.property_id], [w, h, v.id, pid]);
      assert.equal(asset.body.url, `/v1/assets/${v.video_asset_id}/file`);
      const file = await fetch(s.url + asset.body.url, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(file.status, 200);
      assert.equal(file.headers.get('content-type'), 'video/mp4');
      assert.equal(file.headers.get('accept-ranges'), 'bytes');
      const bytes = Buffer.from(await file.arrayBuffer());
      assert.equal(bytes.length, asset.body.size_bytes);
      const path = join(s.dir, `out-${format.replace(':', 'x')}.mp4`);
      writeFileSync(path, bytes);
      const probe = ffprobe(path);
      assert.equal(probe.codec, 'h264');
      assert.equal(probe.pixFmt, 'yuv420p');
      assert.equal(probe.audio, 'aac');
      assert.deepEqual([probe.width, probe.height], [w, h]);
      assert.ok(Math.abs(probe.duration - EXPECTED_S) <= EXPECTED_S * 0.1, `duration ${probe.duration}`);
      assert.ok(Math.abs(asset.body.duration_s - EXPECTED_S) <= EXPECTED_S * 0.1);
      // faststart: the moov box comes before mdat.
      assert.ok(bytes.indexOf('moov') < bytes.indexOf('mdat'));
      const poster = await s.call('GET', `/v1/assets/${v.poster_asset_id}`, { token: key });
      assert.equal(poster.body.kind, 'poster');
      assert.equal(poster.body.content_type, 'image/jpeg');
      assert.equal(poster.body.duration_s, null);
      const posterFile = await fetch(s.url + poster.body.url, { headers: { authorization: `Bearer ${key}` } });
      const jpeg = Buffer.from(await posterFile.arrayBuffer());
      assert.deepEqual([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff]);
      seen.add(`${w}x${h}`);
    }
    assert.equal(seen.size, 4);

    // Assets: listing, filters, isolation.
    const all = await s.call('GET', '/v1/assets?limit=3', { token: key });
    assert.equal(all.body.data.length, 3);
    const rest = await s.call('GET', `/v1/assets?cursor=${all.body.next_cursor}`, { token: key });
    assert.equal(rest.body.data.length, 5);
    assert.equal(rest.body.next_cursor, null);
    const byVideo = await s.call('GET', `/v1/assets?video_id=${ids['1:1']}`, { token: key });
    assert.deepEqual(byVideo.body.data.map((a: any) => a.kind).sort(), ['poster', 'video']);
    assert.equal((await s.call('GET', `/v1/assets?property_id=${pid}`, { token: key })).body.data.length, 8);
    assert.equal((await s.call('GET', `/v1/assets?property_id=${pid + 1}`, { token: key })).body.data.length, 0);
    assert.deepEqual((await s.call('GET', '/v1/assets', { token: other.key })).body.data, []);
    const v169 = await waitForVideo(s, key, ids['16:9']!);
    assert.equal((await s.call('GET', `/v1/assets/${v169.video_asset_id}`, { token: other.key })).status, 404);
    assert.equal((await s.call('GET', `/v1/assets/${v169.video_asset_id}/file`, { token: other.key })).status, 404);

    // Range requests and conditional GET.
    const meta = (await s.call('GET', `/v1/assets/${v169.video_asset_id}`, { token: key })).body;
    const url = s.url + meta.url;
    const auth = { authorization: `Bearer ${key}` };
    const whole = Buffer.from(await (await fetch(url, { headers: auth })).arrayBuffer());
    const part = await fetch(url, { headers: { ...auth, range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${meta.size_bytes}`);
    assert.equal(part.headers.get('content-length'), '100');
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(100, 200));
    const suffix = await fetch(url, { headers: { ...auth, range: 'bytes=-10' } });
    assert.equal(suffix.status, 206);
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), whole.subarray(whole.length - 10));
    const open = await fetch(url, { headers: { ...auth, range: `bytes=${meta.size_bytes - 5}-` } });
    assert.equal(open.headers.get('content-range'), `bytes ${meta.size_bytes - 5}-${meta.size_bytes - 1}/${meta.size_bytes}`);
    await open.arrayBuffer();
    const beyond = await fetch(url, { headers: { ...auth, range: `bytes=${meta.size_bytes}-` } });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${meta.size_bytes}`);
    assert.equal(((await beyond.json()) as any).error.code, 'range_not_satisfiable');
    const etag = part.headers.get('etag')!;
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    const cached = await fetch(url, { headers: { ...auth, 'if-none-match': etag } });
    assert.equal(cached.status, 304);
    assert.equal(cached.headers.get('etag'), etag);
    assert.ok(cached.headers.get('x-ratelimit-remaining'));
    const stale = await fetch(url, { headers: { ...auth, 'if-none-match': '"other"' } });
    assert.equal(stale.status, 200);
    await stale.arrayBuffer();

    // The callback: the first attempt got a 500; the retry (after the back-off, clock moved) is signed.
    clockOffset = 11_000;
    const delivery = await hook.next();
    assert.equal(delivery.headers['x-service-event'], 'video.completed');
    assert.equal(delivery.headers['x-service-signature'], `v1=${hmacHex(secret, delivery.body)}`);
    assert.ok(Math.abs(Number(delivery.headers['x-service-timestamp']) - delivery.at / 1000) < 60);
    const payload = JSON.parse(delivery.body);
    assert.equal(payload.event, 'video.completed');
    assert.equal(payload.video.id, ids['16:9']);
    assert.equal(payload.video.status, 'completed');
    assert.equal(payload.video.video_asset_id, v169.video_asset_id);
  } finally {
    await s.stop();
    await hook.close();
  }
});
