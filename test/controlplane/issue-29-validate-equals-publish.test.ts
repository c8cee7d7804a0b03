import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_BUNDLE_BYTES } from '../../src/bundles.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { repoRoot, runCli, tempDir } from '../helpers/paths.js';

/**
 * Issue 29: a bundle `bundle validate` accepted could be refused on publish (413 over 1 MiB).
 * One size rule now, measured on the stored form (compact JSON): what validate accepts,
 * publish accepts, whatever whitespace the file has; what it refuses, publish refuses.
 */
const base = JSON.parse(readFileSync(join(repoRoot, 'bundles', 'default', 'bundle.json'), 'utf8')) as Record<string, any>;

/** The default bundle with 256 themes of `chars` characters of '€' (3 bytes each in UTF-8). */
function withThemes(chars: number): Record<string, any> {
  return { ...base, flavor: { ...base.flavor, themes: Array.from({ length: 256 }, (_, i) => ({ text: `${i} ${'€'.repeat(chars)}`, weight: 1 })) } };
}

test('issue 29: bundle validate = publish: one size rule on the stored form, both ways', async () => {
  const fits = withThemes(1350);
  const over = withThemes(1990);
  assert.ok(Buffer.byteLength(JSON.stringify(fits)) <= MAX_BUNDLE_BYTES);
  // Pretty-printed, the file is over the limit; stored, it is not.
  const fitsText = JSON.stringify(fits, null, 60);
  assert.ok(Buffer.byteLength(fitsText) > MAX_BUNDLE_BYTES);
  assert.ok(Buffer.byteLength(JSON.stringify(over)) > MAX_BUNDLE_BYTES);
  const dir = tempDir();
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'pro');
    const server = (await s.call('POST', '/v1/servers', { token, body: { name: 'big' } })).body.id as number;
    const file = join(dir.path, 'bundle.json');

    writeFileSync(file, fitsText);
    const ok = await runCli(['bundle', 'validate', dir.path]);
    assert.equal(ok.code, 0, ok.stderr);
    const published = await fetch(`${s.url}/v1/servers/${server}/config`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...fits, version: 1 }, null, 60),
    });
    assert.equal(published.status, 200, await published.clone().text());

    writeFileSync(file, JSON.stringify(over));
    const refused = await runCli(['bundle', 'validate', dir.path]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /bytes as stored \(compact JSON\); at most 1048576/);
    const put = await s.call('PUT', `/v1/servers/${server}/config`, { token, body: { ...over, version: 2 } });
    assert.equal(put.status, 413);
    assert.equal(put.body.error.code, 'payload_too_large');
    assert.match(put.body.error.message, /bytes as stored \(compact JSON\); at most 1048576/);
  } finally {
    await s.stop();
    dir.dispose();
  }
});

test('bundle validate = publish: a flag named prototype is refused by both, naming the key', async () => {
  const bundle = { ...base, flags: { ...(base.flags as Record<string, unknown>), prototype: true } };
  const text = `{${JSON.stringify(bundle).slice(1, -1)}}`;
  assert.ok(text.includes('"prototype":true'));
  const dir = tempDir();
  const s = await startTestServer();
  try {
    const { token } = await tenantSession(s, 'pro');
    const server = (await s.call('POST', '/v1/servers', { token, body: { name: 'proto' } })).body.id as number;
    writeFileSync(join(dir.path, 'bundle.json'), text);
    const refused = await runCli(['bundle', 'validate', dir.path]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /a key named "prototype"/);
    const put = await fetch(`${s.url}/v1/servers/${server}/config`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"version":1,${text.slice(1)}`,
    });
    assert.equal(put.status, 400);
    assert.match(((await put.json()) as { error: { message: string } }).error.message, /a key named "prototype"/);
  } finally {
    await s.stop();
    dir.dispose();
  }
});
