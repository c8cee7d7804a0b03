import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { BundleDirSource } from '../../src/sidecar/config/bundle-dir-source.js';
import { BundleTrust } from '../../src/sidecar/config/bundle-trust.js';
import { newKeyPair } from '../../src/signing/bundle.js';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { runCli as brainstem, tempDir } from '../helpers/paths.js';

test('brainstem bundle sign: a signed directory is applied by a sidecar pinned to the key; an edit or another key is refused, the last good bundle stays', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'bundle.json');
    writeFileSync(file, JSON.stringify({ ...DEFAULT_BUNDLE, version: 3, flags: { double_xp: { type: 'boolean', value: true } } }, null, 2));
    const key = join(dir.path, 'signing.pem');
    const missing = await brainstem(['bundle', 'sign', dir.path, '--key', key]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /does not exist; make one with --new-key, or: openssl genpkey -algorithm ed25519/);
    const signed = await brainstem(['bundle', 'sign', dir.path, '--key', key, '--new-key', '--json']);
    assert.equal(signed.code, 0, signed.stderr);
    assert.equal(statSync(key).mode & 0o777, 0o600);
    const out = JSON.parse(signed.stdout);
    assert.equal(out.version, 3);
    assert.match(out.publicKey, /^ed25519:/);

    const trust = new BundleTrust({ file: null, givenKey: out.publicKey });
    const source = new BundleDirSource(dir.path, { trust, pollMs: 0 });
    const first = await source.start(() => {});
    assert.equal(first.version, 3);
    // Edited after signing: refused, version 3 stays.
    writeFileSync(file, readFileSync(file, 'utf8').replace('"value": true', '"value": false').replace('"version": 3', '"version": 4'));
    const edited = await source.reload();
    assert.equal(edited.kind, 'refused');
    assert.match(JSON.stringify(edited), /the signature does not match the bundle/);
    assert.equal(source.status().version, 3);
    // Signed again (version 4): applied. Then an older signed version is a rollback.
    assert.equal((await brainstem(['bundle', 'sign', dir.path, '--key', key])).code, 0);
    // The directory's watcher may have applied it already: either way version 4 is in force.
    assert.match((await source.reload()).kind, /^(applied|unchanged)$/);
    assert.equal(source.status().version, 4);
    writeFileSync(file, JSON.stringify({ ...DEFAULT_BUNDLE, version: 2 }, null, 2));
    assert.equal((await brainstem(['bundle', 'sign', dir.path, '--key', key])).code, 0);
    assert.match(JSON.stringify(await source.reload()), /version 2 is lower than version 4, already applied: refused as a rollback/);
    await source.stop();

    // Another key pinned: the directory is refused at start.
    const other = new BundleDirSource(dir.path, { trust: new BundleTrust({ file: null, givenKey: newKeyPair().publicKey }), pollMs: 0 });
    await assert.rejects(
      other.start(() => {}),
      /signed by key [0-9a-f]{16}, not the pinned key/,
    );
  } finally {
    dir.dispose();
  }
});

test('brainstem keys rotate adds a key endorsed by the current one; keys list shows the chain; config diff shows a flag change', async () => {
  const s = await startTestServer();
  const work = tempDir();
  try {
    const dbFlags = ['--db', join(s.dir, 'test.db')];
    const before = (await s.call('GET', '/v1/config/keys')).body.keys;
    const rotated = await brainstem(['keys', 'rotate', ...dbFlags]);
    assert.equal(rotated.code, 0, rotated.stderr);
    const key = JSON.parse(rotated.stdout);
    assert.deepEqual([key.active, key.previous], [true, before[0].id]);
    assert.match(key.endorsement, /^[A-Za-z0-9+/]+=*$/);
    const list = JSON.parse((await brainstem(['keys', 'list', ...dbFlags])).stdout);
    assert.deepEqual(
      list.map((k: { id: string; active: boolean }) => [k.id, k.active]),
      [
        [before[0].id, false],
        [key.id, true],
      ],
    );
    await s.controlPlane.refreshKeys();
    assert.equal((await s.call('GET', '/v1/config/keys')).body.keys.at(-1).id, key.id);

    const { token } = await tenantSession(s, 'pro');
    const server = (await s.call('POST', '/v1/servers', { token, body: { name: 'eu-1' } })).body.id as number;
    const pat = (await s.call('POST', '/v1/tokens', { token, body: { name: 'ci', scopes: ['config:write'] } })).body.token as string;
    const env = { BRAINSTEM_URL: s.url, BRAINSTEM_TOKEN: pat };
    const flags = ['--server', String(server), '--dir', work.path];
    assert.equal((await brainstem(['config', 'pull', ...flags], env)).code, 0);
    const file = join(work.path, 'bundle.json');
    const bundle = JSON.parse(readFileSync(file, 'utf8'));
    bundle.flags = { double_xp: { type: 'boolean', value: true } };
    writeFileSync(file, JSON.stringify(bundle));
    const diff = await brainstem(['config', 'diff', ...flags, '--json'], env);
    assert.equal(diff.code, 1, diff.stderr);
    assert.deepEqual(JSON.parse(diff.stdout).changes, ['+ flags: {"double_xp":{"type":"boolean","value":true}}']);
  } finally {
    work.dispose();
    await s.stop();
  }
});
