import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../src/http/limits.js';
import { tempDir } from '../helpers/paths.js';
import { apiKey, createProperty, startVideoServer, testImage, uploadMultipart } from './helpers.js';

/**
 * An ffmpeg that claims every filter and then never finishes a render, so videos stay
 * queued or rendering for as long as the test needs (close() kills it).
 */
function stuckFfmpeg(dir: string): string {
  const path = join(dir, 'ffmpeg');
  writeFileSync(path, '#!/bin/sh\ncase "$*" in *-filters*) printf " ... xfade VV->V x\\n ... drawtext V->V x\\n"; exit 0;; esac\nexec sleep 600\n');
  chmodSync(path, 0o755);
  return path;
}

test('queued videos: at most 10 queued or rendering per tenant, the 11th is 403 plan_limit naming the limit; another tenant is not affected', async () => {
  assert.equal(DEFAULT_LIMITS.queuedVideosPerTenant, 10);
  const bin = tempDir();
  const s = await startVideoServer({ ffmpegPath: stuckFfmpeg(bin.path), renderConcurrency: 1 });
  try {
    const make = async () => {
      const { key } = await apiKey(s);
      const property = await createProperty(s, key);
      assert.equal(
        (await uploadMultipart(s, `/v1/properties/${property}/photos`, key, [{ name: 'a.jpg', data: testImage('jpg'), type: 'image/jpeg' }])).status,
        201,
      );
      return { key, property };
    };
    const a = await make();
    const video = () => s.call('POST', '/v1/videos', { token: a.key, body: { property_id: a.property, template: 'tour', format: '16:9' } });
    for (let i = 0; i < 10; i++) assert.equal((await video()).status, 202, `video ${i}`);
    const over = await video();
    assert.equal(over.status, 403);
    assert.equal(over.body.error.code, 'plan_limit');
    assert.match(over.body.error.message, /at most 10 videos queued or rendering/);
    // The refusal still carries the API's rate-limit headers.
    assert.ok(over.headers.get('x-ratelimit-limit'));
    const b = await make();
    assert.equal((await s.call('POST', '/v1/videos', { token: b.key, body: { property_id: b.property, template: 'tour', format: '1:1' } })).status, 202);
  } finally {
    await s.stop();
    bin.dispose();
  }
});
