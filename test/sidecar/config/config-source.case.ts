import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateBundle } from '../../../brain/index.js';
import type { ConfigSource } from '../../../src/sidecar/config/config-source.js';

/**
 * The contract every ConfigSource keeps (bundle directory, defaults, later the control
 * plane): start resolves with a valid bundle, status reports its version and a source, and
 * stop is safe to call twice.
 */
export function runConfigSourceSuite(name: string, make: () => { source: ConfigSource; dispose?: () => void }): void {
  test(`${name}: start resolves with a valid bundle and status reports it`, async () => {
    const { source, dispose } = make();
    try {
      const bundle = await source.start(() => {});
      assert.ok(validateBundle(bundle).ok);
      const status = source.status();
      assert.equal(status.version, bundle.version);
      assert.equal(typeof status.source, 'string');
      assert.ok(status.source.length > 0);
      assert.equal(status.lastError, null);
    } finally {
      await source.stop();
      await source.stop();
      dispose?.();
    }
  });
}
