import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BUNDLE, type ConfigBundle } from '../../../brain/index.js';
import { BundleDirSource } from '../../../src/sidecar/config/bundle-dir-source.js';
import { DefaultsSource } from '../../../src/sidecar/config/defaults-source.js';
import { repoRoot, tempDir } from '../../helpers/paths.js';
import { runConfigSourceSuite } from './config-source.case.js';
import { fullTick, post, startTest } from '../helpers.js';

function writeBundle(dir: string, bundle: unknown): void {
  writeFileSync(join(dir, 'bundle.json'), JSON.stringify(bundle));
}

function bundleDir(version = 1): { path: string; dispose(): void } {
  const dir = tempDir('brainstem-bundle-');
  writeBundle(dir.path, { ...DEFAULT_BUNDLE, version });
  return dir;
}

runConfigSourceSuite('defaults', () => ({ source: new DefaultsSource() }));
runConfigSourceSuite('bundle dir', () => {
  const dir = bundleDir(3);
  return { source: new BundleDirSource(dir.path, { pollMs: 0 }), dispose: dir.dispose };
});
runConfigSourceSuite('bundles/default', () => ({ source: new BundleDirSource(join(repoRoot, 'bundles', 'default'), { pollMs: 0 }) }));

test('a new version is applied, the same version is not, an invalid bundle is refused and the old one kept', async () => {
  const dir = bundleDir(1);
  const source = new BundleDirSource(dir.path, { pollMs: 0 });
  const applied: number[] = [];
  try {
    assert.equal((await source.start((b) => applied.push(b.version))).version, 1);
    writeBundle(dir.path, { ...DEFAULT_BUNDLE, version: 2 });
    assert.deepEqual(await source.reload(), { kind: 'applied', version: 2 });
    writeBundle(dir.path, { ...DEFAULT_BUNDLE, version: 2, game: { name: 'x', premise: 'y', goal: 'z' } });
    assert.deepEqual(await source.reload(), { kind: 'unchanged', version: 2 });
    writeBundle(dir.path, { ...DEFAULT_BUNDLE, version: 3, flavor: { ...DEFAULT_BUNDLE.flavor, themes_per_bot: 999 } });
    const refused = await source.reload();
    assert.equal(refused.kind, 'refused');
    assert.ok(refused.kind === 'refused' && refused.problems.some((p) => p.path === 'flavor.themes_per_bot'));
    assert.equal(source.status().version, 2);
    assert.match(source.status().lastError ?? '', /themes_per_bot/);
    writeFileSync(join(dir.path, 'bundle.json'), '{not json');
    assert.equal((await source.reload()).kind, 'refused');
    writeBundle(dir.path, { ...DEFAULT_BUNDLE, version: 4 });
    assert.deepEqual(await source.reload(), { kind: 'applied', version: 4 });
    assert.equal(source.status().lastError, null);
    assert.deepEqual(applied, [2, 4]);
  } finally {
    await source.stop();
    dir.dispose();
  }
});

test('a start on an invalid directory fails with the reasons', async () => {
  const dir = tempDir();
  writeBundle(dir.path, { version: 'one' });
  try {
    await assert.rejects(
      new BundleDirSource(dir.path).start(() => {}),
      /is not valid: .*version/,
    );
  } finally {
    dir.dispose();
  }
});

test('the sidecar picks up a rewritten bundle.json by itself and every worker gets it', async () => {
  const dir = bundleDir(5);
  const source = new BundleDirSource(dir.path, { debounceMs: 10, pollMs: 50 });
  const s = await startTest({ source, workers: 2 });
  try {
    assert.equal(s.status().config.version, 5);
    const applied = new Promise<ConfigBundle>((resolve) => {
      const original = s.evaluator.setBundle.bind(s.evaluator);
      s.evaluator.setBundle = async (b) => {
        await original(b);
        resolve(b);
      };
    });
    writeBundle(dir.path, { ...JSON.parse(readFileSync(join(dir.path, 'bundle.json'), 'utf8')), version: 6 });
    assert.equal((await applied).version, 6);
    assert.equal(s.status().config.version, 6);
    assert.equal((await post(s.url, fullTick())).status, 200);
  } finally {
    await s.close();
    dir.dispose();
  }
});
