import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { parseObjectStoreUrl, S3Storage, s3ClientFromEnv } from '../../src/video/s3-storage.js';
import { assetStorageContract } from './storage-contract.js';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { apiKey, createProperty, ffprobe, POLLING_LIMITS, startVideoServer, testImage, uploadMultipart, waitForVideo } from './helpers.js';

/**
 * Photos, videos and posters in S3-compatible storage, against a real s3rver process (an
 * S3-compatible server) started here, addressed as MinIO or R2 would be: AWS_ENDPOINT_URL.
 */

const BUCKET = 'brainstem-media';
let s3rver: ChildProcess;
let s3dir: { path: string; dispose(): void };
let client: S3Client;

/** A real s3rver process on `port` (0: any free one) serving s3dir, with the bucket made. */
async function startS3rver(port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'node_modules', 's3rver', 'bin', 's3rver.js'),
      '-d',
      s3dir.path,
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '--silent',
      '--configure-bucket',
      BUCKET,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const bound = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on [^:]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`s3rver exited ${code}: ${out}`)));
  });
  return { child, port: bound };
}

before(async () => {
  s3dir = tempDir('brainstem-s3-');
  const started = await startS3rver(0);
  s3rver = started.child;
  // The standard AWS environment, as an operator would set it; s3rver accepts its own fixed credentials.
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${started.port}`,
  });
  client = s3ClientFromEnv();
});

after(() => {
  client?.destroy();
  s3rver?.kill();
  s3dir?.dispose();
});

async function keys(prefix: string): Promise<string[]> {
  const r = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

async function object(key: string): Promise<Buffer> {
  const r = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

let prefixes = 0;
assetStorageContract('S3-compatible bucket (s3rver)', async () => {
  const storage = new S3Storage({ bucket: BUCKET, prefix: `contract/${++prefixes}` }, s3ClientFromEnv());
  return { storage, close: async () => storage.close() };
});

test('--object-store URLs: s3://bucket with an optional prefix, anything else refused in one line', () => {
  assert.deepEqual(parseObjectStoreUrl('s3://media'), { bucket: 'media', prefix: '' });
  assert.deepEqual(parseObjectStoreUrl('s3://media/a/b/'), { bucket: 'media', prefix: 'a/b' });
  for (const bad of ['media', 'http://media/x', 's3://', 's3://Media', 's3://a', 's3://media/a//b', 's3://media/../x', 's3://media?x=1']) {
    assert.throws(() => parseObjectStoreUrl(bad), /--object-store/, bad);
  }
});

test('photos, renders, downloads (Range, signed URLs) and deletes go through the bucket; nothing stays in the data directory', async () => {
  const prefix = 'tenants/test';
  const s = await startVideoServer({ objectStore: `s3://${BUCKET}/${prefix}/`, limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const photos = [testImage('jpg', '1920x1080'), testImage('png')];
    const up = await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [
      { name: 'a.jpg', data: photos[0]! },
      { name: 'b.png', data: photos[1]! },
    ]);
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const photoKeys = await keys(`${prefix}/photos/`);
    assert.equal(photoKeys.length, 2);
    const stored = await Promise.all(photoKeys.map(object));
    assert.deepEqual(stored.map((b) => b.length).sort(), photos.map((b) => b.length).sort(), 'the photos are stored byte for byte');

    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '16:9' } });
    const done = await waitForVideo(s, key, v.body.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const assetKeys = await keys(`${prefix}/assets/`);
    assert.equal(assetKeys.length, 2, 'the video and its poster');
    const data = join(s.dir, 'data');
    assert.ok(!existsSync(join(data, 'photos')) && !existsSync(join(data, 'assets')), 'no local photos or assets folder');
    assert.deepEqual(readdirSync(join(data, 'work')), [], 'render scratch (local photo copies included) is removed');

    const file = await fetch(`${s.url}/v1/assets/${done.video_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(file.status, 200);
    const mp4 = Buffer.from(await file.arrayBuffer());
    assert.ok(
      (await Promise.all(assetKeys.map(object))).some((b) => b.equals(mp4)),
      'the download is the stored object',
    );
    const local = join(s.dir, 'download.mp4');
    writeFileSync(local, mp4);
    const probe = ffprobe(local);
    assert.equal(probe.codec, 'h264');
    assert.deepEqual([probe.width, probe.height], [1920, 1080]);

    const signed = await s.call('GET', `/v1/assets/${done.video_asset_id}/url?ttl=120`, { token: key });
    assert.equal(signed.status, 200);
    const range = await fetch(signed.body.url, { headers: { range: 'bytes=100-1099' } });
    assert.equal(range.status, 206, 'a signed URL streams from the bucket through the server');
    assert.equal(range.headers.get('content-range'), `bytes 100-1099/${mp4.length}`);
    assert.deepEqual(Buffer.from(await range.arrayBuffer()), mp4.subarray(100, 1100));
    const tail = await fetch(signed.body.url, { headers: { range: 'bytes=-500' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), mp4.subarray(mp4.length - 500));
    const poster = await fetch(`${s.url}/v1/assets/${done.poster_asset_id}/file`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(poster.headers.get('content-type'), 'image/jpeg');
    assert.equal(
      Buffer.from(await poster.arrayBuffer())
        .subarray(0, 2)
        .toString('hex'),
      'ffd8',
    );

    const photoId = done.photo_ids[0];
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}/photos/${photoId}`, { token: key })).status, 204);
    assert.equal((await keys(`${prefix}/photos/`)).length, 1, "a deleted photo's object is removed");
    assert.equal((await s.call('DELETE', `/v1/videos/${done.id}`, { token: key })).status, 204);
    assert.deepEqual(await keys(`${prefix}/assets/`), [], "a deleted video's objects are removed");
    assert.equal((await fetch(signed.body.url)).status, 404);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: key })).status, 204);
    assert.deepEqual(await keys(prefix), [], 'a deleted property leaves nothing in the bucket');
  } finally {
    await s.stop();
  }
});

test("a bucket that does not exist stops the server's start with the reason", async () => {
  await assert.rejects(startVideoServer({ objectStore: 's3://no-such-bucket-here' }), /object store s3:\/\/no-such-bucket-here is not usable: no such bucket/);
});

test('downloads while the bucket is out of reach are 503 unavailable with Retry-After, and work again when it is back', async () => {
  const s = await startVideoServer({ objectStore: `s3://${BUCKET}/outage`, limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    assert.equal((await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [{ name: 'a.png', data: testImage('png') }])).status, 201);
    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
    const done = await waitForVideo(s, key, v.body.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const signed = (await s.call('GET', `/v1/assets/${done.poster_asset_id}/url`, { token: key })).body.url as string;
    assert.equal((await fetch(signed)).status, 200);

    const port = Number(new URL(process.env.AWS_ENDPOINT_URL!).port);
    const exited = new Promise((resolve) => s3rver.once('exit', resolve));
    s3rver.kill();
    await exited;
    const out = await fetch(signed);
    assert.equal(out.status, 503);
    assert.equal(out.headers.get('retry-after'), '5');
    assert.equal(((await out.json()) as { error: { code: string } }).error.code, 'unavailable');
    const keyed = await s.call('GET', `/v1/assets/${done.video_asset_id}/file`, { token: key });
    assert.equal(keyed.status, 503, 'keyed downloads alike');

    s3rver = (await startS3rver(port)).child;
    const back = await fetch(signed);
    assert.equal(back.status, 200);
    assert.equal(back.headers.get('content-type'), 'image/jpeg');
    await back.arrayBuffer();
  } finally {
    await s.stop();
  }
});
