import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { locateFfmpeg, probeFfmpeg } from '../../src/video/ffmpeg.js';
import { POLLING_LIMITS, apiKey, createProperty, startVideoServer, testImage, waitForVideo } from './helpers.js';

// ffmpeg is found at start but first run at the first render: a start never spawns it.

const dir = mkdtempSync(join(tmpdir(), 'brainstem-ffmpeg-on-use-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** An ffmpeg that writes each of its runs' arguments to `log` before doing the real one's work (or failing). */
function wrapper(name: string, log: string, works: boolean): string {
  const real = locateFfmpeg().path;
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\necho "$*" >> '${log}'\n${works ? `exec '${real}' "$@"` : 'echo broken >&2; exit 1'}\n`);
  chmodSync(file, 0o755);
  return file;
}

function probes(log: string): number {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes('-filters')).length
    : 0;
}

async function renderOne(s: Awaited<ReturnType<typeof startVideoServer>>): Promise<any> {
  const { key } = await apiKey(s);
  const pid = await createProperty(s, key);
  const up = await s.call('POST', `/v1/properties/${pid}/photos`, { token: key, body: { photos: [{ data_base64: testImage('jpg').toString('base64') }] } });
  assert.equal(up.status, 201);
  const v = await s.call('POST', '/v1/videos', { token: key, body: { property_id: pid, template: 'tour', format: '1:1' } });
  assert.equal(v.status, 202);
  return waitForVideo(s, key, v.body.id);
}

test('a server starts without running ffmpeg, probes it once at the first render, and renders', async () => {
  const log = join(dir, 'works.log');
  const s = await startVideoServer({ ffmpegPath: wrapper('ffmpeg-works', log, true), limits: POLLING_LIMITS });
  try {
    assert.equal(existsSync(log), false, 'the start ran ffmpeg');
    const first = await renderOne(s);
    assert.equal(first.status, 'completed', first.error);
    const second = await renderOne(s);
    assert.equal(second.status, 'completed', second.error);
    assert.equal(probes(log), 1);
  } finally {
    await s.close();
  }
});

test('an ffmpeg that does not run fails the render with a reason that names no path, and the server keeps serving', async () => {
  const log = join(dir, 'broken.log');
  const s = await startVideoServer({ ffmpegPath: wrapper('ffmpeg-broken', log, false), limits: POLLING_LIMITS });
  try {
    assert.equal(existsSync(log), false);
    const v = await renderOne(s);
    assert.equal(v.status, 'failed');
    assert.match(v.error, /ffmpeg does not run/);
    assert.doesNotMatch(v.error, /ffmpeg-broken|brainstem-ffmpeg-on-use/);
    assert.equal((await s.call('GET', '/health')).status, 200);
  } finally {
    await s.close();
  }
});

test('probes at once share one run; a failed probe is not kept', async () => {
  const log = join(dir, 'shared.log');
  const found = { path: wrapper('ffmpeg-shared', log, true), source: 'option' as const };
  const bins = await Promise.all([probeFfmpeg(found), probeFfmpeg(found), probeFfmpeg(found)]);
  assert.equal(probes(log), 1);
  for (const bin of bins) assert.deepEqual(bin, bins[0]);
  assert.equal(typeof bins[0]!.xfade, 'boolean');
  await probeFfmpeg(found);
  assert.equal(probes(log), 1);

  const brokenLog = join(dir, 'broken-twice.log');
  const broken = { path: wrapper('ffmpeg-broken-twice', brokenLog, false), source: 'option' as const };
  await assert.rejects(probeFfmpeg(broken), /does not run: broken/);
  await assert.rejects(probeFfmpeg(broken), /does not run/);
  assert.equal(probes(brokenLog), 2);
});

test('an ffmpeg named but missing is "not found" at start; a bare name is looked up on PATH', () => {
  assert.throws(() => locateFfmpeg(join(dir, 'no-such-ffmpeg')), /ffmpeg not found: .*no-such-ffmpeg \(from option\) does not exist/);
  const onPath = locateFfmpeg('ffmpeg');
  assert.equal(onPath.source, 'option');
  assert.match(onPath.path, /\/ffmpeg$/);
});
