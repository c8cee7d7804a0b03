import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { ADMIN_TOKEN, startTestServer } from '../helpers/embedded.js';
import { tempDir } from '../helpers/paths.js';
import { signRequest } from '../../src/signing/request.js';

function get(
  url: string,
  ca: Buffer,
  headers: Record<string, string>,
  method = 'GET',
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('serve over TLS (uWS SSLApp) with a self-signed certificate: signed pulls and the dashboard work over https', async () => {
  const dir = tempDir();
  const certFile = join(dir.path, 'cert.pem');
  const keyFile = join(dir.path, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const ca = readFileSync(certFile);
  const s = await startTestServer({ tls: { certFile, keyFile } });
  try {
    assert.match(s.url, /^https:\/\//);
    const json = { 'content-type': 'application/json' };
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, ...json };
    const tenant = JSON.parse((await get(`${s.url}/v1/admin/tenants`, ca, admin, 'POST', JSON.stringify({ name: 'tls', plan: 'pro' }))).body);
    await get(`${s.url}/v1/admin/tenants/${tenant.id}/users`, ca, admin, 'POST', JSON.stringify({ email: 'tls@example.com', password: 'correct horse' }));
    const { token } = JSON.parse(
      (await get(`${s.url}/v1/auth/login`, ca, json, 'POST', JSON.stringify({ email: 'tls@example.com', password: 'correct horse' }))).body,
    );
    const session = { authorization: `Bearer ${token}`, ...json };
    const server = JSON.parse((await get(`${s.url}/v1/servers`, ca, session, 'POST', JSON.stringify({ name: 'tls' }))).body);
    const { key } = JSON.parse((await get(`${s.url}/v1/servers/${server.id}/keys`, ca, session, 'POST')).body);
    const target = `/v1/config?server=${server.id}`;
    const pull = await get(s.url + target, ca, signRequest(key, { method: 'GET', target }));
    assert.equal(pull.status, 200);
    assert.equal(pull.headers.etag, '"v1"');
    const checkout = JSON.parse((await get(`${s.url}/v1/billing/checkout`, ca, session, 'POST', JSON.stringify({ plan: 'self-host' }))).body);
    assert.match(checkout.url, /^https:\/\//, 'links point at the TLS origin');
  } finally {
    await s.stop();
    dir.dispose();
  }
});
