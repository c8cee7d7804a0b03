import type { Format } from './types.js';
import { FORMATS } from './types.js';

/** Seconds of each part of a tour; the defaults make a 10-photo tour 29 s long. */
export interface TourTimings {
  titleS: number;
  photoS: number;
  /** Cross-fade between consecutive parts, taken out of both. */
  fadeS: number;
  fps: number;
}

export const DEFAULT_TIMINGS: TourTimings = { titleS: 3, photoS: 3, fadeS: 0.5, fps: 25 };

/**
 * The title card: either text drawn by ffmpeg with a font file (text taken literally:
 * `expansion=none`, so a `%` in a title is not a drawtext function), or a ready-made image.
 */
export type TitleCard = { kind: 'drawtext'; fontFile: string; lines: { textFile: string; scale: number }[] } | { kind: 'image'; path: string };

export interface TourInput {
  photos: readonly string[];
  format: Format;
  title: TitleCard;
  output: string;
  timings: TourTimings;
  /** With xfade parts cross-fade into each other; without it (old ffmpeg) each fades through black. */
  xfade: boolean;
  preset: string;
}

export interface TourPlan {
  args: string[];
  durationS: number;
  /** A moment inside the first photo (the title card when there is none), for the poster frame. */
  posterAtS: number;
  width: number;
  height: number;
}

/** Escapes a value for a filter option inside a -filter_complex graph (two levels of quoting). */
export function filterValue(v: string): string {
  const option = v.replace(/[\\':]/g, (c) => `\\${c}`);
  return option.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}

const BACKGROUND = '0x1f2933';

/**
 * The ffmpeg command for a `tour`: a title card, then each photo with a slow zoom (alternating
 * in and out, odd photos also panning left to right), joined by cross-fades, with a silent
 * AAC track, H.264 yuv420p, faststart. Without photos the title card is the whole tour.
 */
export function planTour(input: TourInput): TourPlan {
  const { width: W, height: H } = FORMATS[input.format];
  const { titleS, photoS, fadeS, fps } = input.timings;
  const n = input.photos.length;
  const frames = Math.round(photoS * fps);
  const args: string[] = [];
  const graph: string[] = [];

  const title = input.title;
  if (title.kind === 'drawtext') {
    args.push('-f', 'lavfi', '-i', `color=c=${BACKGROUND}:s=${W}x${H}:r=${fps}:d=${titleS}`);
    const base = Math.min(W, H);
    const lines = title.lines;
    const sizes = lines.map((l) => Math.round(base * l.scale));
    const gap = Math.round(base * 0.03);
    const total = sizes.reduce((a, b) => a + b, 0) + gap * (lines.length - 1);
    let y = Math.round((H - total) / 2);
    const draws = lines.map((l, i) => {
      const d = `drawtext=fontfile=${filterValue(title.fontFile)}:textfile=${filterValue(l.textFile)}:expansion=none:fontcolor=white:fontsize=${sizes[i]}:x=(w-text_w)/2:y=${y}`;
      y += sizes[i]! + gap;
      return d;
    });
    graph.push(`[0:v]${[...draws, 'format=yuv420p', 'setsar=1', 'settb=AVTB'].join(',')}[v0]`);
  } else {
    args.push('-loop', '1', '-framerate', String(fps), '-t', String(titleS), '-i', title.path);
    graph.push(`[0:v]scale=${W}:${H},format=yuv420p,setsar=1,settb=AVTB[v0]`);
  }

  input.photos.forEach((photo, i) => {
    args.push('-i', photo);
    const zoom = i % 2 === 0 ? `1+0.12*on/${frames}` : `1.12-0.12*on/${frames}`;
    const x = i % 2 === 0 ? 'iw/2-(iw/zoom/2)' : `(iw-iw/zoom)*on/${frames}`;
    graph.push(
      `[${i + 1}:v]scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H},setsar=1,` +
        `zoompan=z='${zoom}':x='${x}':y='ih/2-(ih/zoom/2)':d=${frames}:s=${W}x${H}:fps=${fps},format=yuv420p,settb=AVTB[v${i + 1}]`,
    );
  });
  const audioInput = n + 1;
  args.push('-f', 'lavfi', '-i', 'anullsrc=channel_layout=stereo:sample_rate=44100');

  let durationS: number;
  if (input.xfade) {
    let offset = titleS - fadeS;
    let prev = 'v0';
    for (let i = 1; i <= n; i++) {
      const out = i === n ? 'vout' : `x${i}`;
      graph.push(`[${prev}][v${i}]xfade=transition=fade:duration=${fadeS}:offset=${round(offset)}[${out}]`);
      prev = out;
      offset += photoS - fadeS;
    }
    if (n === 0) graph.push('[v0]null[vout]');
    durationS = titleS + n * (photoS - fadeS);
  } else {
    const faded = [0, ...input.photos.map((_, i) => i + 1)].map((i) => {
      const len = i === 0 ? titleS : photoS;
      graph.push(`[v${i}]fade=t=in:st=0:d=${fadeS / 2},fade=t=out:st=${round(len - fadeS / 2)}:d=${fadeS / 2}[f${i}]`);
      return `[f${i}]`;
    });
    graph.push(`${faded.join('')}concat=n=${n + 1}:v=1:a=0[vout]`);
    durationS = titleS + n * photoS;
  }
  durationS = round(durationS);
  args.push(
    '-filter_complex',
    graph.join(';'),
    '-map',
    '[vout]',
    '-map',
    `${audioInput}:a`,
    '-c:v',
    'libx264',
    '-preset',
    input.preset,
    '-crf',
    '23',
    '-pix_fmt',
    'yuv420p',
    '-r',
    String(fps),
    '-c:a',
    'aac',
    '-b:a',
    '64k',
    '-t',
    String(durationS),
    '-movflags',
    '+faststart',
    '-y',
    input.output,
  );
  const posterAtS = round(n === 0 ? titleS / 2 : input.xfade ? titleS + (photoS - fadeS) / 2 : titleS + photoS / 2);
  return { args, durationS, posterAtS, width: W, height: H };
}

/**
 * Brings one photo down to the output size (cover-fit, centre crop) as a high-quality JPEG,
 * first frame only. Each photo is decoded alone, so the tour itself, which opens every photo
 * at once, holds frames of the output size instead of full-resolution ones.
 */
export function fitPhotoArgs(photo: string, format: Format, output: string): string[] {
  const { width: W, height: H } = FORMATS[format];
  return ['-i', photo, '-frames:v', '1', '-vf', `scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H},setsar=1`, '-q:v', '2', '-y', output];
}

/** Grabs one frame of a rendered video as a JPEG. */
export function posterArgs(video: string, atS: number, output: string): string[] {
  return ['-ss', String(atS), '-i', video, '-frames:v', '1', '-q:v', '3', '-y', output];
}

function round(s: number): number {
  return Math.round(s * 1000) / 1000;
}
