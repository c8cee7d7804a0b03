import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalString, signature } from '../../../src/signing/request.js';
import { ControlPlaneClient } from '../../../src/sidecar/link/control-plane-client.js';
import { startTestServer, tenantSession } from '../../helpers/embedded.js';
import { repoRoot } from '../../helpers/paths.js';
import { serverWithKey } from '../../controlplane/helpers.js';

test('the worked signing example in docs/controlplane.md matches src/signing/request.ts', () => {
  const key = 'bsk_example_key_do_not_use';
  const ts = 1767225600;
  const get = { method: 'GET', target: '/v1/config?server=7', timestamp: ts };
  assert.equal(canonicalString(get), 'GET\n/v1/config?server=7\n1767225600\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(signature(key, get), '296b33fe257d6dd96cccc443a7a289eb506e60760b5a2fec350ca477a4cb0a49');
  const body =
    '{"serverId":"7","ts":"2026-01-01T00:00:00Z","botCount":3,"playersOnline":5,"linesSpoken":2,"spendUsd":0.01,"events":[{"kind":"spoke","count":2}]}';
  const post = { method: 'POST', target: '/v1/telemetry', timestamp: ts, body };
  assert.equal(canonicalString(post), 'POST\n/v1/telemetry\n1767225600\nb39f18d0a5a4bc52f49518351dfe588894f03897e61c0e9935ce41386ffe1f67');
  assert.equal(signature(key, post), 'c429c6cfa9858b13fe7673e2f2e28da7c7d87628dce4e4fa4ca6b33628952d7f');
  const docs = readFileSync(join(repoRoot, 'docs', 'controlplane.md'), 'utf8');
  assert.ok(docs.includes('296b33fe257d6dd96cccc443a7a289eb506e60760b5a2fec350ca477a4cb0a49'));
  assert.ok(docs.includes('c429c6cfa9858b13fe7673e2f2e28da7c7d87628dce4e4fa4ca6b33628952d7f'));
});

test('the public signing module imports nothing but node:crypto', () => {
  const text = readFileSync(join(repoRoot, 'src', 'signing', 'request.ts'), 'utf8');
  const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
  assert.deepEqual([...new Set(imports)], ['node:crypto']);
});

test('a client whose clock is 10 minutes slow adopts the server Date offset after one 401 and succeeds; two identical pulls in one second are not replays', async () => {
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s);
    const sc = await serverWithKey(s, token);
    const slow = new ControlPlaneClient({ url: s.url, serverId: String(sc.serverId), key: sc.key, now: () => Date.now() - 600_000 });
    const first = await slow.request('GET', `/v1/config?server=${sc.serverId}`, { timeoutMs: 5000 });
    assert.equal(first.status, 200);
    assert.ok(Math.abs(slow.skewMs - 600_000) < 5_000, `skew ${slow.skewMs}`);
    const again = await slow.request('GET', `/v1/config?server=${sc.serverId}`, { timeoutMs: 5000, headers: { 'if-none-match': '"v1"' } });
    const twice = await slow.request('GET', `/v1/config?server=${sc.serverId}`, { timeoutMs: 5000, headers: { 'if-none-match': '"v1"' } });
    assert.equal(again.status, 304);
    assert.equal(twice.status, 304);

    // A wrong key is a 401 with no skew: returned as is, the offset untouched.
    const wrong = new ControlPlaneClient({ url: s.url, serverId: String(sc.serverId), key: 'bsk_wrong' });
    const refused = await wrong.request('GET', `/v1/config?server=${sc.serverId}`, { timeoutMs: 5000 });
    assert.equal(refused.status, 401);
    assert.equal(wrong.skewMs, 0);
  } finally {
    await s.stop();
  }
});

test('bad client options fail at construction with the fix named', () => {
  assert.throws(() => new ControlPlaneClient({ url: 'ftp://x', serverId: '1', key: 'k' }), /http:\/\/ or https:\/\//);
  assert.throws(() => new ControlPlaneClient({ url: 'http://x', serverId: 'abc', key: 'k' }), /positive integer/);
  assert.throws(() => new ControlPlaneClient({ url: 'http://x', serverId: '1', key: '' }), /server key/);
});
