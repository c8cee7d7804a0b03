import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { concatList, filterValue, planTour, SILENCE, type TitleCard, type TourInput } from '../../src/video/tour.js';
import type { Format } from '../../src/video/types.js';
import { renderTitleImage, titleLines } from '../../src/video/titlecard.js';
import { DEFAULT_FFMPEG_ADDRESS_SPACE, findPrlimit, runFfmpeg, type FfmpegConfinement } from '../../src/video/ffmpeg.js';
import { findFont } from '../../src/video/font.js';
import type { PropertyRecord } from '../../src/video/types.js';
import { tempDir } from '../helpers/paths.js';
import { ffprobe, testImage } from './helpers.js';

const CONFINED: FfmpegConfinement = { prlimit: findPrlimit(), addressSpaceBytes: DEFAULT_FFMPEG_ADDRESS_SPACE };

const PROPERTY = { title: 'Château Vue', address: '1 Quai', city: 'Lyon', price: 725000, currency: 'EUR', bedrooms: 1 } as PropertyRecord;
const TIMINGS = { titleS: 1, photoS: 1.5, fadeS: 0.5, fps: 25 };

/** A one-format tour input without branding, captions or sound. */
function tourInput(photos: string[], format: Format, title: TitleCard, output: string, xfade: boolean): TourInput {
  return {
    photos,
    formats: [{ format, title, captions: [], captionFont: null, captionBox: '0x000000', cornerMark: false, output, poster: output.replace(/\.mp4$/, '.jpg') }],
    logo: null,
    audio: SILENCE,
    timings: TIMINGS,
    xfade,
    preset: 'ultrafast',
    photosPerSegment: 100,
    work: '/tmp',
  };
}

test('tour plan: durations with and without xfade, filter values escaped', () => {
  const base = (xfade: boolean) => tourInput(['a.jpg', 'b.jpg', 'c.jpg'], '4:5', { kind: 'image', path: 't.ppm' }, 'o.mp4', xfade);
  // Timings are whole frames: 1 s title (25), 1.5 s photos (38), 0.5 s fades (13).
  const x = planTour(base(true));
  assert.equal(x.durationS, 4);
  // One picture run (no segments), the sound beside it, one join.
  assert.deepEqual(
    x.steps.map((s) => s.stage),
    ['picture', 'sound', 'join'],
  );
  const args = x.steps[0]!.args;
  assert.match(args.join(' '), /crop=1080:1350:/);
  const graph = args[args.indexOf('-filter_complex') + 1]!;
  // Only the overlapping frames are cross-faded (three fades of 13 frames); the rest is joined around them.
  assert.equal([...graph.matchAll(/fade=t=out:s=0:n=13:alpha=1\[/g)].length, 3);
  assert.equal([...graph.matchAll(/overlay=format=yuv420:eof_action=pass\[/g)].length, 3);
  // Each photo is scaled once, to the frame's height and 2 px a frame wider than the frame, and
  // each of its frames is a crop of it, made once by the piece that shows it.
  assert.equal([...graph.matchAll(/scale=1154:1350:force_original_aspect_ratio=increase/g)].length, 3);
  assert.equal(
    [...graph.matchAll(/loop=loop=(\d+):size=1:start=0,crop=1080:1350:/g)].reduce((a, m) => a + Number(m[1]) + 1, 0),
    3 * 38,
  );
  assert.doesNotMatch(graph, /zoompan/);
  assert.match(graph, /concat=n=7:v=1:a=0/);
  // A key frame where each photo is first shown alone (frames 25, 50, 75, after each 13-frame
  // cross-fade) and at the poster (frame 37, the middle of the first photo).
  assert.equal(args[args.indexOf('-force_key_frames') + 1], '1,1.48,2,3');
  // The join also takes the poster, from that key frame of the segment holding it: one process.
  const joinArgs = x.steps[2]!.args.join(' ');
  assert.match(joinArgs, /-ss 1\.48 -t 0\.04 -i \/tmp\/seg-0-0\.mp4 /);
  assert.match(joinArgs, /-map 2:v -frames:v 1 -q:v 3 .* -y o\.jpg$/);
  const plain = planTour(base(false));
  assert.equal(plain.durationS, 5.56);
  const plainArgs = plain.steps[0]!.args;
  assert.match(plainArgs[plainArgs.indexOf('-filter_complex') + 1]!, /concat=n=4:v=1:a=0/);
  assert.equal(filterValue("a:b'c,d"), String.raw`a\\:b\\\'c\,d`);
  assert.deepEqual(
    titleLines(PROPERTY, '1:1').map((l) => l.text),
    ['Château Vue', '1 Quai, Lyon', 'EUR 725,000 · 1 bedroom'],
  );
  const long = titleLines({ ...PROPERTY, title: 'x'.repeat(300) }, '9:16')[0]!.text;
  assert.ok(long.length < 60 && long.endsWith('…'));
});

test('filter values survive both quoting levels: drawtext reads a text file from an awkward path', async () => {
  const dir = tempDir();
  try {
    const odd = join(dir.path, "a b:c'd,[e];f");
    mkdirSync(odd);
    const textFile = join(odd, 't.txt');
    writeFileSync(textFile, 'hello');
    const font = findFont();
    if (!font) return;
    const graph = `color=c=black:s=64x64:d=0.1,drawtext=fontfile=${filterValue(font)}:textfile=${filterValue(textFile)}:fontcolor=white`;
    await runFfmpeg('ffmpeg', ['-f', 'lavfi', '-i', 'nullsrc=s=64x64:d=0.1', '-filter_complex', graph, '-frames:v', '1', '-f', 'null', '-'], {
      durationS: 0,
      timeoutMs: 60_000,
      confinement: CONFINED,
    });
  } finally {
    dir.dispose();
  }
});

test('fallbacks render: the bitmap title card (no font) and fades through black (ffmpeg without xfade)', async () => {
  const dir = tempDir();
  try {
    const photos = ['jpg', 'png'].map((ext) => {
      const p = join(dir.path, `p.${ext}`);
      writeFileSync(p, testImage(ext as 'jpg', '320x240'));
      return p;
    });
    const title = join(dir.path, 'title.ppm');
    writeFileSync(title, renderTitleImage(titleLines(PROPERTY, '1:1'), '1:1'));
    const output = join(dir.path, 'o.mp4');
    const plan = planTour({ ...tourInput(photos, '1:1', { kind: 'image', path: title }, output, false), work: dir.path });
    const seen: number[] = [];
    // One after the other, in the plan's order: the picture, the sound, the join.
    assert.deepEqual(
      plan.steps.map((s) => s.stage),
      ['picture', 'sound', 'join'],
    );
    for (const step of plan.steps) {
      for (const list of step.lists ?? []) writeFileSync(list.path, concatList(list.files));
      await runFfmpeg('ffmpeg', step.args, { durationS: step.durationS, timeoutMs: 120_000, confinement: CONFINED, onProgress: (f) => seen.push(f) });
    }
    const probe = ffprobe(output);
    assert.deepEqual([probe.codec, probe.width, probe.height, probe.audio], ['h264', 1080, 1080, 'aac']);
    const poster = ffprobe(output.replace(/\.mp4$/, '.jpg'));
    assert.deepEqual([poster.codec, poster.width, poster.height], ['mjpeg', 1080, 1080]);
    assert.ok(Math.abs(probe.duration - plan.durationS) <= plan.durationS * 0.1, String(probe.duration));
    assert.ok(seen.length > 0 && seen.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= seen[i - 1]!)));
  } finally {
    dir.dispose();
  }
});
