import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFromEnv } from '../../src/video/s3-storage.js';
import { repoRoot, tempDir } from '../helpers/paths.js';
import { execFileSync } from 'node:child_process';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, waitForVideo } from './helpers.js';

/**
 * Logos and audio tracks in S3-compatible storage beside photos and renders, against a real
 * s3rver process (as object-store.test.ts does for photos and renders).
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

test('a logo and a music track go to the bucket, a branded render with music reads them from it, deletes remove them', async () => {
  const prefix = 'media-test';
  const s = await startVideoServer({ objectStore: `s3://${BUCKET}/${prefix}/`, limits: POLLING_LIMITS });
  try {
    const { key } = await apiKey(s);
    const pid = await createProperty(s, key);
    const up = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: testImage('jpg').toString('base64') }] } });
    assert.equal(up.status, 201);
    const logo = await fetch(`${s.url}/v1/branding/logo`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' },
      body: testImage('png'),
    });
    assert.equal(logo.status, 200);
    const wav = join(s.dir, 'm.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=330:d=2', wav]);
    const track = await fetch(`${s.url}/v1/audio`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' },
      body: readFileSync(wav),
    });
    assert.equal(track.status, 201);
    const musicId = ((await track.json()) as { id: number }).id;
    assert.equal((await keys(`${prefix}/media/`)).length, 2, 'the logo and the track are objects');
    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1', music_id: musicId } });
    const done = await waitForVideo(s, key, v.body.id, 120_000);
    assert.equal(done.status, 'completed', done.error);
    const data = join(s.dir, 'data');
    assert.ok(!existsSync(join(data, 'media')), 'no local media folder');
    assert.deepEqual(readdirSync(join(data, 'work')), [], 'render scratch (local copies of the logo and track) is removed');
    assert.equal((await s.call('DELETE', `/v1/audio/${musicId}`, { token: key })).status, 204);
    assert.equal((await s.call('DELETE', '/v1/branding/logo', { token: key })).status, 200);
    assert.deepEqual(await keys(`${prefix}/media/`), [], 'deleted logo and track objects are removed');
  } finally {
    await s.stop();
  }
});
