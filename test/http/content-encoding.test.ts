/**
 * A compressed body (`Content-Encoding: gzip`, `br`, …) was read as it came: its bytes were no
 * JSON, so the answer was 400 "not valid JSON", which sends a client looking in the wrong
 * place. No route reads a compressed body; every service answers it 415 unsupported_media_type
 * with `Accept-Encoding: identity` (RFC 7694), before reading it and after the credential, and
 * changes nothing. `identity` is the body as is and is read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { contentCodingRefusal } from '../../src/http/codec.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { fullTick, startTest } from '../sidecar/helpers.js';

const gz = (value: unknown) => gzipSync(JSON.stringify(value));

async function send(url: string, body: Uint8Array | string, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

function isRefusal(r: { status: number; headers: Headers; body: any }, what: string): void {
  assert.equal(r.status, 415, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error.code, 'unsupported_media_type', what);
  assert.match(r.body.error.message, /Content-Encoding/, what);
  assert.equal(r.headers.get('accept-encoding'), 'identity', what);
}

test('contentCodingRefusal: none and identity are read; every other coding is a 415 naming it (cut to 64 characters)', () => {
  for (const ok of [undefined, '', 'identity', 'Identity', ' identity ']) assert.equal(contentCodingRefusal(ok), null, String(ok));
  for (const coding of ['gzip', 'x-gzip', 'deflate', 'br', 'zstd', 'gzip, identity', 'identity, gzip', 'nonsense']) {
    const err = contentCodingRefusal(coding);
    assert.equal(err?.status, 415, coding);
    assert.ok(err?.message.includes(JSON.stringify(coding)), coding);
  }
  assert.ok(contentCodingRefusal('g'.repeat(10_000))!.message.length < 200);
});

test('serve: a gzip body is a 415 on every kind of route (public, session, admin, visitor); nothing is created; identity is read; no credential is still a 401', async () => {
  const s = await startTestServer({ allowPrivateWebhooks: true });
  try {
    const { token, email } = await tenantSession(s);
    const session = { authorization: `Bearer ${token}` };
    isRefusal(await send(`${s.url}/v1/auth/login`, gz({ email, password: 'correct horse battery' }), { 'content-encoding': 'gzip' }), 'login');
    isRefusal(await send(`${s.url}/v1/servers`, gz({ name: 'packed' }), { ...session, 'content-encoding': 'gzip' }), 'servers');
    isRefusal(await send(`${s.url}/v1/servers`, gz({ name: 'packed' }), { ...session, 'content-encoding': 'GZIP' }), 'servers, upper case');
    isRefusal(await send(`${s.url}/v1/servers`, JSON.stringify({ name: 'br' }), { ...session, 'content-encoding': 'br' }), 'servers, br');
    isRefusal(
      await send(`${s.url}/v1/admin/tenants`, gz({ name: 'x', plan: 'pro' }), { authorization: 'Bearer bsa_test_admin_token', 'content-encoding': 'gzip' }),
      'admin',
    );
    isRefusal(
      await send(`${s.url}/v1/properties`, gz({ title: 't', address: 'a' }), { ...session, 'content-encoding': 'deflate' }),
      'video (the server-wide credential check passes a known session; the body is refused before the route checks its kind)',
    );
    const servers = await s.call('GET', '/v1/servers', { token });
    assert.deepEqual(servers.body, [], 'nothing was created');

    // No credential: the 401, not the 415 (a caller without one learns nothing more).
    const anonymous = await send(`${s.url}/v1/servers`, gz({ name: 'x' }), { 'content-encoding': 'gzip' });
    assert.equal(anonymous.status, 401);

    const widget = await s.call('POST', '/v1/widgets', { token, body: { name: 'w' } });
    isRefusal(await send(`${s.url}/v1/widgets/${widget.body.id}/conversations`, gz({}), { 'content-encoding': 'gzip' }), 'visitor');

    const plain = await send(`${s.url}/v1/servers`, JSON.stringify({ name: 'plain' }), { ...session, 'content-encoding': 'identity' });
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
  } finally {
    await s.stop();
  }
});

test('sidecar: a gzip body on /tick, /ticks and an OFREP flag is a 415 after the token; identity is read', async () => {
  const sidecar = await startTest({ token: 'tok_ce' });
  try {
    const auth = { authorization: 'Bearer tok_ce' };
    isRefusal(await send(`${sidecar.url}/tick`, gz(fullTick()), { ...auth, 'content-encoding': 'gzip' }), '/tick');
    isRefusal(await send(`${sidecar.url}/ticks`, gz([fullTick()]), { ...auth, 'content-encoding': 'gzip' }), '/ticks');
    isRefusal(await send(`${sidecar.url}/ofrep/v1/evaluate/flags/any`, gz({ context: {} }), { ...auth, 'content-encoding': 'gzip' }), 'ofrep flag');
    isRefusal(await send(`${sidecar.url}/ofrep/v1/evaluate/flags`, gz({ context: {} }), { ...auth, 'content-encoding': 'gzip' }), 'ofrep bulk');
    assert.equal((await send(`${sidecar.url}/tick`, gz(fullTick()), { 'content-encoding': 'gzip' })).status, 401);
    const plain = await send(`${sidecar.url}/tick`, JSON.stringify(fullTick()), { ...auth, 'content-encoding': 'identity' });
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
  } finally {
    await sidecar.close();
  }
});
