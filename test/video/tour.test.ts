import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filterValue, planTour } from '../../src/video/tour.js';
import { renderTitleImage, titleLines } from '../../src/video/titlecard.js';
import { DEFAULT_FFMPEG_ADDRESS_SPACE, findPrlimit, runFfmpeg, type FfmpegConfinement } from '../../src/video/ffmpeg.js';
import { findFont } from '../../src/video/font.js';
import type { PropertyRecord } from '../../src/video/types.js';
import { tempDir } from '../helpers/paths.js';
import { ffprobe, testImage } from './helpers.js';

const CONFINED: FfmpegConfinement = { prlimit: findPrlimit(), addressSpaceBytes: DEFAULT_FFMPEG_ADDRESS_SPACE };

const PROPERTY = { title: 'Château Vue', address: '1 Quai', city: 'Lyon', price: 725000, currency: 'EUR', bedrooms: 1 } as PropertyRecord;
const TIMINGS = { titleS: 1, photoS: 1.5, fadeS: 0.5, fps: 25 };

test('tour plan: durations with and without xfade, filter values escaped', () => {
  const base = {
    photos: ['a.jpg', 'b.jpg', 'c.jpg'],
    format: '4:5' as const,
    title: { kind: 'image' as const, path: 't.ppm' },
    output: 'o.mp4',
    timings: TIMINGS,
    preset: 'ultrafast',
  };
  const x = planTour({ ...base, xfade: true });
  assert.equal(x.durationS, 4);
  assert.deepEqual([x.width, x.height], [1080, 1350]);
  const graph = x.args[x.args.indexOf('-filter_complex') + 1]!;
  assert.deepEqual(
    [...graph.matchAll(/offset=([\d.]+)/g)].map((m) => Number(m[1])),
    [0.5, 1.5, 2.5],
  );
  const plain = planTour({ ...base, xfade: false });
  assert.equal(plain.durationS, 5.5);
  assert.match(plain.args[plain.args.indexOf('-filter_complex') + 1]!, /concat=n=4:v=1:a=0/);
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
    const plan = planTour({ photos, format: '1:1', title: { kind: 'image', path: title }, output, timings: TIMINGS, xfade: false, preset: 'ultrafast' });
    const seen: number[] = [];
    await runFfmpeg('ffmpeg', plan.args, { durationS: plan.durationS, timeoutMs: 120_000, confinement: CONFINED, onProgress: (f) => seen.push(f) });
    const probe = ffprobe(output);
    assert.deepEqual([probe.codec, probe.width, probe.height, probe.audio], ['h264', 1080, 1080, 'aac']);
    assert.ok(Math.abs(probe.duration - plan.durationS) <= plan.durationS * 0.1, String(probe.duration));
    assert.ok(seen.length > 0 && seen.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= seen[i - 1]!)));
  } finally {
    dir.dispose();
  }
});
