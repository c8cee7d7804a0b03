import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AttackerProxy } from './proxy.js';
import { applied, RecordingLogger, stack, type LogLine } from './helpers.js';
import { BUNDLE_KEY_ID_HEADER, BUNDLE_SIGNATURE_HEADER, endorseKey, newKeyPair, signBundle } from '../../src/signing/bundle.js';
import { openControlPlaneStore } from '../../src/controlplane/open-store.js';
import { addNextBundleKey } from '../../src/controlplane/bundle-signer.js';

const refused = (pattern: RegExp) => (l: LogLine) =>
  l.message === 'bundle from the control plane refused; keeping the last good one' && pattern.test(String(l.fields.reason));

async function status(url: string): Promise<any> {
  return (await fetch(`${url}/status`)).json();
}

test('the control plane signs every version with its installation key, published at GET /v1/config/keys', async () => {
  const s = await stack();
  try {
    const keys = await s.cp.call('GET', '/v1/config/keys');
    assert.equal(keys.status, 200);
    assert.equal(keys.body.keys.length, 1);
    const [k] = keys.body.keys;
    assert.match(k.publicKey, /^ed25519:[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual([k.active, k.previous, k.endorsement], [true, null, null]);
  } finally {
    await s.stop();
  }
});

test('rollback: an older signed bundle replayed by the path is refused with a clear log line; the applied one keeps serving', async () => {
  const s = await stack();
  const proxy = await new AttackerProxy(s.cp.url).start();
  try {
    const { sidecar, source, logger } = await s.start({ url: proxy.url, push: false });
    await s.publish((b) => (b.speech.limits.per_hour = 2));
    await source.pollNow();
    await s.publish((b) => (b.speech.limits.per_hour = 3));
    await source.pollNow();
    assert.equal((await status(sidecar.url)).version, 3);
    const old = proxy.pulls.find((p) => JSON.parse(p.body).version === 2)!;
    proxy.rewrite = () => old;
    const line = logger.next(refused(/version 2 is lower than version 3, already applied: refused as a rollback/));
    await source.pollNow();
    await line;
    const st = await status(sidecar.url);
    assert.equal(st.version, 3);
    assert.equal(st.controlPlane.trust.highestVersion, 3);
  } finally {
    await proxy.stop();
    await s.stop();
  }
});

test('mix-and-match: a signature moved onto another bundle is refused', async () => {
  const s = await stack();
  const proxy = await new AttackerProxy(s.cp.url).start();
  try {
    const { sidecar, source, logger } = await s.start({ url: proxy.url, push: false });
    await s.publish((b) => (b.speech.limits.per_hour = 2));
    // The attacker keeps version 2's signature and serves its own bundle under it.
    proxy.rewrite = (up) => {
      const forged = {
        ...JSON.parse(up.body),
        speech: { ...JSON.parse(up.body).speech, limits: { per_5min: 100, per_hour: 1000, per_day: 10000, economy: 'Chatty' } },
      };
      return { ...up, body: JSON.stringify(forged) };
    };
    const line = logger.next(refused(/the signature does not match the bundle/));
    await source.pollNow();
    await line;
    assert.equal((await status(sidecar.url)).version, 1);
    proxy.rewrite = null;
    const ok = logger.next(applied(2));
    await source.pollNow();
    await ok;
  } finally {
    await proxy.stop();
    await s.stop();
  }
});

test('a wrong key: a bundle signed by a key the pinned one never endorsed is refused', async () => {
  const s = await stack();
  const proxy = await new AttackerProxy(s.cp.url).start();
  const attacker = newKeyPair();
  try {
    const { sidecar, source, logger } = await s.start({ url: proxy.url, push: false });
    const pinned = (await status(sidecar.url)).controlPlane.trust.keyId;
    assert.match(pinned, /^[0-9a-f]{16}$/);
    proxy.rewrite = (up) => {
      const body = JSON.stringify({ ...JSON.parse(up.body), version: 50 });
      return {
        ...up,
        body,
        headers: {
          ...up.headers,
          etag: '"v50"',
          [BUNDLE_KEY_ID_HEADER]: attacker.keyId,
          [BUNDLE_SIGNATURE_HEADER]: signBundle(attacker.privatePem, String(s.server.serverId), body),
        },
      };
    };
    const line = logger.next(refused(new RegExp(`signed by key ${attacker.keyId}, which the pinned key ${pinned} has not endorsed`)));
    await s.publish((b) => (b.speech.limits.per_hour = 2));
    await source.pollNow();
    await line;
    assert.equal((await status(sidecar.url)).version, 1);
  } finally {
    await proxy.stop();
    await s.stop();
  }
});

test('--bundle-key pins the given key: the control plane key, not given, is refused from the first pull', async () => {
  const s = await stack();
  try {
    const other = newKeyPair();
    const { sidecar, logger } = await s.start({ push: false, bundleKey: other.publicKey });
    await logger.seen((l) => l.message.startsWith('config pull failed at start'));
    const st = await status(sidecar.url);
    assert.equal(st.source, 'defaults');
    assert.equal(st.controlPlane.trust.pinned, 'flag');
    assert.match(st.lastError, /has not endorsed/);
  } finally {
    await s.stop();
  }
});

test('a disk cache edited while the sidecar was down is not trusted; an untouched one is', async () => {
  const s = await stack();
  const proxy = await new AttackerProxy(s.cp.url).start();
  try {
    const first = await s.start({ url: proxy.url, push: false });
    await s.publish((b) => (b.speech.limits.per_hour = 9));
    await first.source.pollNow();
    await first.sidecar.close();
    proxy.down = true;
    const again = await s.start({ url: proxy.url, push: false });
    assert.equal((await status(again.sidecar.url)).source, 'disk-cache');
    assert.equal((await status(again.sidecar.url)).version, 2);
    await again.sidecar.close();
    const file = join(s.dir.path, 'bundle.json');
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    saved.body = saved.body.replace('"per_hour":9', '"per_hour":900');
    writeFileSync(file, JSON.stringify(saved));
    const logger = new RecordingLogger();
    const edited = await s.start({ url: proxy.url, push: false }, logger);
    const line = await logger.seen((l) => l.message === 'the saved bundle refused; not trusted');
    assert.match(String(line.fields.reason), /the signature does not match the bundle/);
    assert.equal((await status(edited.sidecar.url)).source, 'defaults');
  } finally {
    await proxy.stop();
    await s.stop();
  }
});

test('freeze: with the push stream held open and its events withheld, the safety poll still brings the new version', async () => {
  const s = await stack();
  const proxy = await new AttackerProxy(s.cp.url).start();
  proxy.withholdStream = true;
  try {
    const { sidecar, logger } = await s.start({ url: proxy.url, livePollMs: 200 });
    while ((await status(sidecar.url)).controlPlane.path !== 'live') await new Promise((r) => setImmediate(r));
    const done = logger.next(applied(2));
    await s.publish((b) => (b.speech.limits.per_hour = 4));
    await done;
    assert.equal((await status(sidecar.url)).version, 2);
  } finally {
    await proxy.stop();
    await s.stop();
  }
});

test('key rotation: a new key endorsed by the pinned one is followed and pinned; an unendorsed one is refused', async () => {
  const s = await stack();
  try {
    const { sidecar, source, logger } = await s.start({ push: false });
    const k1 = (await status(sidecar.url)).controlPlane.trust.keyId;
    const store = await openControlPlaneStore(s.cp.database);
    const k2 = await addNextBundleKey(store);
    await s.cp.controlPlane.refreshKeys();
    const keys = (await s.cp.call('GET', '/v1/config/keys')).body.keys;
    assert.deepEqual(
      keys.map((k: any) => [k.id, k.active, k.previous]),
      [
        [k1, false, null],
        [k2.id, true, k1],
      ],
    );
    const rotated = logger.next((l) => l.message === 'bundle key rotated: following the endorsed key' && l.fields.keyId === k2.id);
    await s.publish((b) => (b.speech.limits.per_hour = 5));
    await source.pollNow();
    await rotated;
    const st = await status(sidecar.url);
    assert.equal(st.version, 2);
    assert.deepEqual([st.controlPlane.trust.keyId, st.controlPlane.trust.pinned], [k2.id, 'rotation']);
    // A key "endorsed" by someone else's key sits in the list: the chain breaks there.
    const rogue = newKeyPair();
    const stranger = newKeyPair();
    const all = await store.bundleKeys();
    await store.addBundleKey({
      seq: all.length + 1,
      id: rogue.keyId,
      publicKey: rogue.publicKey,
      privatePem: rogue.privatePem,
      previous: k2.id,
      endorsement: endorseKey(stranger.privatePem, rogue.keyId, rogue.publicKey),
    });
    await s.cp.controlPlane.refreshKeys();
    const line = logger.next(refused(new RegExp(`signed by key ${rogue.keyId}, which the pinned key ${k2.id} has not endorsed`)));
    await s.publish((b) => (b.speech.limits.per_hour = 6));
    await source.pollNow();
    await line;
    assert.equal((await status(sidecar.url)).version, 2);
  } finally {
    await s.stop();
  }
});
