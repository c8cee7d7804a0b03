import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BUNDLE } from '../brain/index.js';
import { loadBundleDir } from '../src/bundles.js';
import { BundleDirSource } from '../src/sidecar/config/bundle-dir-source.js';
import { tempDir } from './helpers/paths.js';

// The issue: a bundle.json saved by Windows Notepad or PowerShell (UTF-8 with a byte-order mark)
// was "not valid JSON": bundle validate failed and a sidecar on that directory would not start.
test('a bundle.json that starts with a UTF-8 byte-order mark is read like one without it', async () => {
  const dir = tempDir('brainstem-bundle-bom-');
  try {
    writeFileSync(
      join(dir.path, 'bundle.json'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ ...DEFAULT_BUNDLE, version: 4 }))]),
    );
    const loaded = await loadBundleDir(dir.path);
    assert.equal(loaded.ok, true, JSON.stringify(loaded));
    assert.equal(loaded.ok && loaded.bundle.version, 4);
    const source = new BundleDirSource(dir.path, { pollMs: 0 });
    try {
      assert.equal((await source.start(() => {})).version, 4);
    } finally {
      await source.stop();
    }
    // A mark anywhere else is still a JSON error, with the file named.
    writeFileSync(join(dir.path, 'bundle.json'), `{"version":\uFEFF4}`);
    const bad = await loadBundleDir(dir.path);
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? '' : bad.problems[0]!.message, /bundle\.json is not valid JSON/);
  } finally {
    dir.dispose();
  }
});
