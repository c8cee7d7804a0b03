import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AssetUrlSigner, loadSigningKey, originOf, signingKeyFromHex, SIGNED_URL_TTL, URL_SIGNING_KEY_FILE } from '../../src/video/signed-urls.js';
import type { Request } from '../../src/http/server.js';
import type { AssetId } from '../../src/video/types.js';
import { ADMIN_TOKEN } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';
import { apiKey, createProperty, POLLING_LIMITS, startVideoServer, testImage, uploadMultipart, waitForVideo } from './helpers.js';

const A = 7 as AssetId;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

test('a signature opens only its own asset until its expiry; any change is invalid', () => {
  const signer = new AssetUrlSigner(Buffer.alloc(32, 1));
  const q = new URLSearchParams(signer.query(A, 2_000_000_000));
  const [expires, signature] = [q.get('expires'), q.get('signature')];
  assert.equal(signer.verify(A, expires, signature, 1_999_999_999_000), 'ok');
  assert.equal(signer.verify(A, expires, signature, 2_000_000_000_000), 'expired');
  assert.equal(signer.verify(8 as AssetId, expires, signature, 0), 'invalid');
  assert.equal(signer.verify(A, '2000000001', signature, 0), 'invalid');
  assert.equal(signer.verify(A, expires, signature!.slice(0, -1) + (signature!.endsWith('A') ? 'B' : 'A'), 0), 'invalid');
  for (const [e, s] of [
    [null, signature],
    [expires, null],
    ['abc', signature],
    ['-1', signature],
    [expires, 'short'],
    [expires, `${signature}==`],
    [`0${expires}`, signature],
    // The last of 43 base64url characters carries 2 bits of padding: only the spelling with them zero is the signature.
    [expires, signature!.slice(0, -1) + ALPHABET[ALPHABET.indexOf(signature!.at(-1)!) ^ 1]],
  ] as const) {
    assert.equal(signer.verify(A, e, s, 0), 'invalid', `${e} ${s}`);
  }
  assert.equal(new AssetUrlSigner(Buffer.alloc(32, 2)).verify(A, expires, signature, 0), 'invalid', 'another key');
});

test('the signing key is made once in the data directory (0600) and read back by every later start', async () => {
  const dir = tempDir();
  try {
    const [a, b] = await Promise.all([loadSigningKey(dir.path), loadSigningKey(dir.path)]);
    assert.deepEqual(a, b, 'two processes starting at once agree on one key');
    assert.equal(a.length, 32);
    assert.equal(statSync(join(dir.path, URL_SIGNING_KEY_FILE)).mode & 0o777, 0o600);
    assert.deepEqual(await loadSigningKey(dir.path), a);
  } finally {
    dir.dispose();
  }
});

// The issue: the key file was created empty and then written, so a crash between the two left
// an empty url-signing.key, and every later start refused it ("must be at least 32 bytes as hex").
test('an empty url-signing.key (a crash while it was made) is replaced at start; a key file with other content is never overwritten', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, URL_SIGNING_KEY_FILE);
    writeFileSync(file, '', { mode: 0o600 });
    const key = await loadSigningKey(dir.path);
    assert.equal(key.length, 32);
    assert.equal(readFileSync(file, 'utf8'), `${key.toString('hex')}\n`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(await loadSigningKey(dir.path), key);
    writeFileSync(file, 'not a key\n');
    await assert.rejects(loadSigningKey(dir.path), /url-signing\.key .*must be at least 32 bytes as hex/);
    assert.equal(readFileSync(file, 'utf8'), 'not a key\n', "an operator's file is left as it is");
    assert.deepEqual(
      readdirSync(dir.path).filter((n) => n.endsWith('.tmp')),
      [],
      'no temp file is left behind',
    );
  } finally {
    dir.dispose();
  }
});

test('SERVICE_URL_SIGNING_KEY (hex, at least 32 bytes) replaces the key file, so replicas can share one key', async () => {
  const hex = 'ab'.repeat(32);
  assert.deepEqual(signingKeyFromHex(` ${hex}\n`, 'X'), Buffer.alloc(32, 0xab));
  for (const bad of ['', 'ab'.repeat(31), `${hex}a`, 'zz'.repeat(32)])
    assert.throws(() => signingKeyFromHex(bad, 'SERVICE_URL_SIGNING_KEY'), /SERVICE_URL_SIGNING_KEY must be at least 32 bytes as hex/, bad);
  process.env.SERVICE_URL_SIGNING_KEY = 'not hex';
  try {
    await assert.rejects(startVideoServer(), /SERVICE_URL_SIGNING_KEY must be at least 32 bytes/);
    process.env.SERVICE_URL_SIGNING_KEY = hex;
    const s = await startVideoServer();
    try {
      assert.equal(existsSync(join(s.dir, 'data', URL_SIGNING_KEY_FILE)), false, 'no key file is made when the key is given');
    } finally {
      await s.stop();
    }
  } finally {
    delete process.env.SERVICE_URL_SIGNING_KEY;
  }
});

test("signed URLs start with the configured public URL, else the request's scheme and Host", () => {
  const req = (host?: string) => ({ headers: host === undefined ? {} : { host } }) as unknown as Request;
  assert.equal(originOf(req('example.com:8080'), undefined, 'http'), 'http://example.com:8080');
  assert.equal(originOf(req('[::1]:9'), undefined, 'https'), 'https://[::1]:9');
  assert.equal(originOf(req('evil.com/path'), 'https://videos.example.com/', 'http'), 'https://videos.example.com');
  for (const bad of [undefined, '', 'a b', 'x/y', 'host:port', 'a@b']) assert.throws(() => originOf(req(bad), undefined, 'http'), /Host/, String(bad));
});

test('GET /v1/assets/{id}/url: an absolute URL that opens the file without a key (Range too) until it expires', async () => {
  let skew = 0;
  const s = await startVideoServer({ now: () => Date.now() + skew, limits: POLLING_LIMITS });
  try {
    const { key, tenantId } = await apiKey(s);
    const other = await apiKey(s);
    const pid = await createProperty(s, key);
    assert.equal(
      (
        await uploadMultipart(s, `/v1/properties/${pid}/photos`, key, [
          { name: 'a.png', data: testImage('png') },
          { name: 'b.jpg', data: testImage('jpg') },
        ])
      ).status,
      201,
    );
    const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
    const done = await waitForVideo(s, key, v.body.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const assetId = done.video_asset_id;
    const keyed = Buffer.from(await (await fetch(`${s.url}/v1/assets/${assetId}/file`, { headers: { authorization: `Bearer ${key}` } })).arrayBuffer());

    const before = Date.now();
    const r = await s.call('GET', `/v1/assets/${assetId}/url`, { token: key });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['expires_at', 'url']);
    assert.ok(r.body.url.startsWith(`${s.url}/v1/assets/${assetId}/file?`), r.body.url);
    const expiresMs = Date.parse(r.body.expires_at);
    assert.ok(
      expiresMs >= Math.floor(before / 1000) * 1000 + SIGNED_URL_TTL.defaultS * 1000 && expiresMs <= Date.now() + SIGNED_URL_TTL.defaultS * 1000,
      r.body.expires_at,
    );

    const open = await fetch(r.body.url);
    assert.equal(open.status, 200);
    assert.equal(open.headers.get('content-type'), 'video/mp4');
    assert.deepEqual(Buffer.from(await open.arrayBuffer()), keyed);
    const part = await fetch(r.body.url, { headers: { range: 'bytes=10-19' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-19/${keyed.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), keyed.subarray(10, 20));
    const withWrongKey = await fetch(r.body.url, { headers: { authorization: 'Bearer bpk_wrong' } });
    assert.equal(withWrongKey.status, 200, 'a signed URL is answered by its signature, whatever else the request carries');
    await withWrongKey.arrayBuffer();

    const short = await s.call('GET', `/v1/assets/${done.poster_asset_id}/url?ttl=60`, { token: key });
    assert.equal(short.status, 200);
    assert.ok(Date.parse(short.body.expires_at) <= Date.now() + 60_000);
    assert.equal((await fetch(short.body.url)).headers.get('content-type'), 'image/jpeg');
    assert.equal((await s.call('GET', `/v1/assets/${assetId}/url?ttl=${SIGNED_URL_TTL.maxS}`, { token: key })).status, 200);
    for (const ttl of ['0', '-1', 'abc', '1.5', String(SIGNED_URL_TTL.maxS + 1), '1e3']) {
      const bad = await s.call('GET', `/v1/assets/${assetId}/url?ttl=${ttl}`, { token: key });
      assert.equal(bad.status, 400, ttl);
      assert.equal(bad.body.error.code, 'bad_request');
      assert.match(bad.body.error.message, /ttl must be/);
    }
    assert.equal((await s.call('GET', `/v1/assets/${assetId}/url`, { token: other.key })).status, 404, "another tenant's asset");
    assert.equal((await s.call('GET', `/v1/assets/${assetId}/url`)).status, 401);

    const url = new URL(r.body.url);
    const sig = url.searchParams.get('signature')!;
    const tamper = async (mutate: (u: URL) => void) => {
      const u = new URL(url);
      mutate(u);
      const res = await fetch(u);
      return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } };
    };
    for (const mutate of [
      (u: URL) => u.searchParams.set('signature', sig.slice(0, -2) + (sig.endsWith('AA') ? 'BB' : 'AA')),
      (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600)),
      (u: URL) => u.searchParams.delete('signature'),
      (u: URL) => (u.pathname = `/v1/assets/${done.poster_asset_id}/file`),
    ]) {
      const t = await tamper(mutate);
      assert.equal(t.status, 403);
      assert.equal(t.body.error.code, 'forbidden');
      assert.match(t.body.error.message, /invalid/);
    }

    skew = (SIGNED_URL_TTL.defaultS + 1) * 1000;
    const expired = await tamper(() => {});
    assert.equal(expired.status, 403);
    assert.match(expired.body.error.message, /expired at/);
    skew = 0;

    await s.call('POST', `/v1/admin/tenants/${tenantId}/suspend`, { token: ADMIN_TOKEN });
    assert.equal((await tamper(() => {})).body.error.code, 'tenant_suspended');
    await s.call('POST', `/v1/admin/tenants/${tenantId}/resume`, { token: ADMIN_TOKEN });
    assert.equal((await fetch(r.body.url)).status, 200);

    const assetsDir = join(s.dir, 'data', 'assets');
    assert.equal(readdirSync(assetsDir).length, 2);
    assert.equal((await s.call('DELETE', `/v1/videos/${done.id}`, { token: key })).status, 204);
    const deleted = await tamper(() => {});
    assert.equal(deleted.status, 404);
    assert.equal(deleted.body.error.code, 'not_found');
    assert.deepEqual(readdirSync(assetsDir), [], "the video's files are removed with it");
    assert.equal((await s.call('GET', `/v1/assets/${assetId}`, { token: key })).status, 404);
    assert.equal((await s.call('DELETE', `/v1/properties/${pid}`, { token: key })).status, 204);
    assert.deepEqual(readdirSync(join(s.dir, 'data', 'photos')), [], "the property's photos are removed with it");
  } finally {
    await s.stop();
  }
});
