import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { DEFAULT_BUNDLE } from '../../../brain/index.js';
import { ControlPlaneClient } from '../../../src/sidecar/link/control-plane-client.js';
import { ControlPlaneSource } from '../../../src/sidecar/link/control-plane-source.js';
import { tempDir } from '../../helpers/paths.js';
import { BUNDLE_KEY_ID_HEADER, BUNDLE_SIGNATURE_HEADER, newKeyPair, signBundle } from '../../../src/signing/bundle.js';

const KEY = newKeyPair();

// Regression: a fresh sidecar's first pull logged {"version":1,"previous":1}, reading as a
// change from version 1, when what it replaced was the built-in defaults.
test('the first bundle applied says it replaced the built-in defaults; a later one names the version it replaced', async () => {
  const answers = [DEFAULT_BUNDLE, { ...DEFAULT_BUNDLE, version: 2 }];
  const fake = createServer((_req, res) => {
    const next = answers.shift() ?? { ...DEFAULT_BUNDLE, version: 2 };
    const body = JSON.stringify(next);
    // Signed like the real control plane, with a key the source is given (--bundle-key).
    res.writeHead(200, {
      'content-type': 'application/json',
      etag: `"v${next.version}"`,
      [BUNDLE_KEY_ID_HEADER]: KEY.keyId,
      [BUNDLE_SIGNATURE_HEADER]: signBundle(KEY.privatePem, '9', body),
    });
    res.end(body);
  }).listen(0, '127.0.0.1');
  await once(fake, 'listening');
  const dir = tempDir();
  const lines: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger = { info: (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields }), warn() {}, error() {} };
  const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const source = new ControlPlaneSource({
    client: new ControlPlaneClient({ url, serverId: '9', key: 'bsk_x' }),
    stateDir: dir.path,
    pollMs: 3_600_000,
    push: false,
    bundleKey: KEY.publicKey,
    logger,
  });
  try {
    await source.start(() => {});
    await source.pollNow();
    const applied = lines.filter((l) => l.message === 'bundle applied from the control plane').map((l) => l.fields);
    assert.deepEqual(applied, [
      { version: 1, previous: 'built-in defaults' },
      { version: 2, previous: 1 },
    ]);
  } finally {
    await source.stop();
    fake.close();
    dir.dispose();
  }
});
