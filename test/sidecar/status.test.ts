import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_BUNDLE } from '../../brain/index.js';
import { BundleDirSource } from '../../src/sidecar/config/bundle-dir-source.js';
import { LatencyHistogram } from '../../src/sidecar/tick/histogram.js';
import { tempDir } from '../helpers/paths.js';
import { fullTick, post, startTest } from './helpers.js';

test('GET /status is behind the bearer gate and reports the defaults source, ticks and latency', async () => {
  const s = await startTest({ token: 'sekret' });
  try {
    assert.equal((await fetch(`${s.url}/status`)).status, 401);
    await post(s.url, fullTick(), 'json', { authorization: 'Bearer sekret' });
    const res = await fetch(`${s.url}/status`, { headers: { authorization: 'Bearer sekret' } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as Record<string, any>;
    assert.equal(body.version, DEFAULT_BUNDLE.version);
    assert.equal(body.source, 'defaults');
    assert.equal(body.location, null);
    assert.equal(body.controlPlane, undefined);
    assert.deepEqual(body.ticks, { ok: 1, rejected: 0, failed: 0 });
    assert.equal(body.latency.count, 1);
    // Inline, the agents tracked are known at once (with workers, as of the last telemetry drain).
    assert.equal(body.agents, 1);
  } finally {
    await s.close();
  }
});

test('GET /status names a bundle directory as source bundle-dir, and drainTelemetry counts players seen', async () => {
  const dir = tempDir();
  writeFileSync(join(dir.path, 'bundle.json'), JSON.stringify({ ...DEFAULT_BUNDLE, version: 7 }));
  const s = await startTest({ source: new BundleDirSource(dir.path, { pollMs: 0 }) });
  try {
    await post(s.url, fullTick(1));
    await post(s.url, fullTick(2)); // the same player (id 3) seen by a second character
    const body = (await (await fetch(`${s.url}/status`)).json()) as Record<string, any>;
    assert.equal(body.source, 'bundle-dir');
    assert.equal(body.version, 7);
    assert.equal(body.location, dir.path);
    assert.equal((await s.drainTelemetry()).playersOnline, 1);
  } finally {
    await s.close();
    dir.dispose();
  }
});

test('latency percentiles of an interval: percentileSince ignores what came before the mark', () => {
  const h = new LatencyHistogram();
  for (let i = 0; i < 100; i++) h.record(10_000);
  const mark = h.mark();
  assert.equal(h.percentileSince(mark, 0.5), 0);
  for (let i = 0; i < 10; i++) h.record(100);
  assert.ok(h.percentileSince(mark, 0.99) <= 112);
  assert.ok(h.percentile(0.5) >= 9_000);
});
