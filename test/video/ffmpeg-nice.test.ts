import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getPriority } from 'node:os';
import { DEFAULT_FFMPEG_ADDRESS_SPACE, findPrlimit, runFfmpeg, type FfmpegConfinement } from '../../src/video/ffmpeg.js';
import { stepNice } from '../../src/video/render.js';

const CONFINED: FfmpegConfinement = { prlimit: findPrlimit(), addressSpaceBytes: DEFAULT_FFMPEG_ADDRESS_SPACE };
const ARGS = ['-f', 'lavfi', '-i', 'testsrc2=size=320x240:duration=0.2', '-f', 'null', '-'];

test('runFfmpeg runs ffmpeg as much nicer than the server as asked, and at the server’s own priority without it', async () => {
  const seen: number[] = [];
  for (const nice of [10, undefined]) {
    await runFfmpeg('ffmpeg', ARGS, {
      durationS: 0,
      timeoutMs: 60_000,
      confinement: CONFINED,
      nice,
      onSpawn: (child) => seen.push(getPriority(child.pid!)),
    });
  }
  assert.deepEqual(seen, [Math.min(19, getPriority() + 10), getPriority()]);
});

test('a render niced its picture processes only: the sound, joins and posters it waits on at the end run at the server’s priority', () => {
  assert.equal(stepNice({ stage: 'picture' }), 10);
  assert.equal(stepNice({ stage: 'sound' }), 0);
  assert.equal(stepNice({ stage: 'join' }), 0);
});
