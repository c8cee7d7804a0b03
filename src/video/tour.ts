import type { Format } from './types.js';
import { FORMATS } from './types.js';

/** Seconds of each part of a tour; the defaults make a 10-photo tour 28 s long. */
export interface TourTimings {
  titleS: number;
  photoS: number;
  /** Cross-fade between consecutive parts, taken out of both. */
  fadeS: number;
  fps: number;
}

export const DEFAULT_TIMINGS: TourTimings = { titleS: 3, photoS: 3, fadeS: 0.5, fps: 25 };

/**
 * x264 threads of every encode, fixed rather than taken from the machine's core count: x264's
 * output depends on its thread count, and the same inputs must give the same bytes on any
 * machine (and two threads keep a 2-core machine busy while the filters run).
 */
export const X264_THREADS = 2;

/**
 * Flags that keep version strings, creation times and other run-dependent values out of the
 * files, so that the same inputs give the same bytes.
 */
const BITEXACT = ['-fflags', '+bitexact', '-flags:v', '+bitexact', '-flags:a', '+bitexact', '-map_metadata', '-1', '-map_chapters', '-1'];

/** Text drawn by ffmpeg from a file (taken literally: `expansion=none`, so a `%` is not a drawtext function). */
export interface TextLine {
  textFile: string;
  /** Font size as a share of the frame's shorter side. */
  scale: number;
}

/**
 * The title card: text drawn by ffmpeg with a font file on the background colour (with the
 * tenant's logo above it when branded), or a ready-made image (no font on the machine).
 */
export type TitleCard =
  | { kind: 'drawtext'; fontFile: string; background: string; color: string; lines: TextLine[]; logo: boolean }
  | { kind: 'image'; path: string };

/** A caption over the photos: one line of text shown from `fromS` to `toS` of the whole tour. */
export interface CaptionCue {
  textFile: string;
  fromS: number;
  toS: number;
}

/** One output format of a render and what is drawn on it. */
export interface FormatJob {
  format: Format;
  title: TitleCard;
  /** Burned-in captions, drawn with `captionFont` (empty: none). */
  captions: CaptionCue[];
  captionFont: string | null;
  /** The caption box's colour (the tenant's primary colour when branded). */
  captionBox: string;
  /** The tenant's logo in a corner of the photos (needs `logo` on the render). */
  cornerMark: boolean;
  /** Where the finished MP4 goes. */
  output: string;
  /** Where its poster (one frame of the tour, as a JPEG) goes. */
  poster: string;
}

/** The sound of a tour: silence, or a voice-over and/or a music track lowered under the voice. */
export interface AudioPlan {
  voice: string | null;
  /** Seconds into the tour the voice starts. */
  voiceAtS: number;
  music: string | null;
}

export const SILENCE: AudioPlan = { voice: null, voiceAtS: 0, music: null };

export interface TourInput {
  /** Local files of the photos, in the order shown (each at most the size given to fitPhotoArgs). */
  photos: readonly string[];
  formats: readonly FormatJob[];
  /** The tenant's logo (PNG/JPEG/WebP), used by title cards with `logo` and by corner marks. */
  logo: string | null;
  audio: AudioPlan;
  timings: TourTimings;
  /** With xfade parts cross-fade into each other; without it (old ffmpeg) each fades through black. */
  xfade: boolean;
  preset: string;
  /** Photos shown by one ffmpeg process (per segment): see segmentParts. */
  photosPerSegment: number;
  /** Photos of the first segment (which also shows the title card), when fewer than photosPerSegment. */
  photosInFirstSegment?: number;
  /** Scratch directory for segment files. */
  work: string;
}

/**
 * What a step is for, which says what may run beside what: the picture's runs (one per segment)
 * and the sound's (which needs only the voice) are independent of each other; the join (every
 * format's segments and sound, and their posters) waits for all of them.
 */
export type StepStage = 'picture' | 'sound' | 'join';

/** One ffmpeg run of a render. */
export interface Step {
  stage: StepStage;
  args: string[];
  /** Seconds of video it makes (for progress). */
  durationS: number;
  /** What it does, for error messages and logs. */
  what: string;
  /** Input index → photo index, to name a photo ffmpeg could not read. */
  photoInputs: Map<number, number>;
  /** Files to write before the run (each format's list of segments to join). */
  lists?: { path: string; files: string[] }[];
}

export interface TourPlan {
  /** Every run, in an order that also works one after the other: the picture's, the sound's, then each format's join. */
  steps: Step[];
  durationS: number;
  frames: number;
  /** A moment inside the first photo (the title card when there is none), for the poster frame. */
  posterAtS: number;
}

/** Escapes a value for a filter option inside a -filter_complex graph (two levels of quoting). */
export function filterValue(v: string): string {
  const option = v.replace(/[\\':]/g, (c) => `\\${c}`);
  return option.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}

export const DEFAULT_BACKGROUND = '0x1f2933';
export const DEFAULT_TEXT_COLOR = '0xffffff';

/** A part of the tour within one segment: the title card or a photo, from its frame `from` (inclusive) to `to` (exclusive). */
interface Part {
  photo: number | null;
  from: number;
  to: number;
}

/** Frame counts of the timings. */
export function frameTimings(t: TourTimings): { title: number; photo: number; fade: number } {
  return { title: Math.round(t.titleS * t.fps), photo: Math.round(t.photoS * t.fps), fade: Math.round(t.fadeS * t.fps) };
}

/**
 * Splits the tour into segments of at most `perSegment` photos, each rendered by its own
 * ffmpeg process (which opens only its own photos: one process holding every photo of a
 * 100-photo tour needs several GiB). A segment ends in the middle of a photo, and the next
 * one starts with that photo from the same frame on: the cut is where neither cross-fade is,
 * so the joined video is seamless and the segments are joined without re-encoding. The first
 * segment, which also shows the title card, may be given fewer photos (`inFirst`).
 */
export function segmentParts(n: number, perSegment: number, t: TourTimings, inFirst = perSegment): Part[][] {
  const f = frameTimings(t);
  const half = Math.floor(f.photo / 2);
  // A segment after the first opens the rest of its predecessor's last photo too, so it holds at least two.
  const per = Math.max(2, perSegment);
  const segments: Part[][] = [];
  let current: Part[] = [{ photo: null, from: 0, to: f.title }];
  for (let i = 0; i < n; i++) {
    if (current.filter((p) => p.photo !== null).length >= (segments.length === 0 ? Math.max(1, Math.min(inFirst, per)) : per)) {
      // The last part is a whole photo (a carried-over rest is always first): the cut is its middle.
      const last = current[current.length - 1]!;
      last.to = half;
      segments.push(current);
      current = [{ photo: last.photo, from: half, to: f.photo }];
    }
    current.push({ photo: i, from: 0, to: f.photo });
  }
  segments.push(current);
  return segments;
}

/** Frames a segment makes: its parts, minus a cross-fade between consecutive ones. */
function segmentFrames(parts: readonly Part[], fade: number, xfade: boolean): number {
  const total = parts.reduce((a, p) => a + (p.to - p.from), 0);
  return xfade ? total - fade * (parts.length - 1) : total;
}

/**
 * The frames of a segment where a part is first shown alone (after the cross-fade into it, or the
 * fade in from black), first part excepted (a segment starts with a key frame). Each starts a new
 * group of pictures: x264 otherwise predicts the new photo from the last cross-faded frame and
 * keeps refining the difference for frames after; a key frame there codes it once, and the pan's
 * frames after it are almost all skipped blocks.
 */
function partKeyFrames(parts: readonly Part[], t: TourTimings, xfade: boolean): number[] {
  const f = frameTimings(t);
  const into = xfade ? f.fade : Math.max(1, Math.floor(f.fade / 2));
  const frames: number[] = [];
  let start = 0;
  parts.forEach((p, i) => {
    if (i > 0) {
      if (xfade) start -= f.fade;
      if (into < p.to - p.from) frames.push(start + into);
    }
    start += p.to - p.from;
  });
  return frames;
}

/** The duration of a tour of n photos, in frames. */
export function tourFrames(n: number, t: TourTimings, xfade: boolean): number {
  const f = frameTimings(t);
  return xfade ? f.title + n * (f.photo - f.fade) : f.title + n * f.photo;
}

function seconds(frames: number, fps: number): string {
  return String(Math.round((frames / fps) * 1e6) / 1e6);
}

/**
 * Pixels a photo moves each frame. A whole, even number: each frame is then an exact translation
 * of the one before, luma and the half-resolution chroma of yuv420p alike, which the encoder
 * codes almost entirely as skipped blocks, and the move is a crop of a still scaled once
 * (a zoom rescales every frame, and every block moves by a fraction of a pixel, which costs
 * the encoder far more). 2 px a frame is 50 px/s at 25 fps: slow and without judder.
 */
const PAN_STEP = 2;

/** How far a photo of `frames` frames travels: the width the scaled still has beyond the frame. */
function panTravel(frames: number): number {
  return PAN_STEP * Math.max(0, frames - 1);
}

/**
 * The pan of photo i, even photos left to right, odd ones right to left, over a still scaled to
 * the frame's height and `panTravel` wider: the `count` frames from frame `from` of its `frames`
 * (a segment may start in the middle of a photo, and each piece pans its own frames).
 */
function pan(i: number, frames: number, W: number, H: number, fps: number, from: number, count: number): string {
  const travel = panTravel(frames);
  const at = from === 0 ? 'n' : `(n+${from})`;
  const x = i % 2 === 0 ? `${PAN_STEP}*${at}` : `${travel}-${PAN_STEP}*${at}`;
  return `loop=loop=${count - 1}:size=1:start=0,crop=${W}:${H}:x='${x}':y=0,setpts=N/(${fps}*TB)`;
}

/**
 * The title card of one format: a chain (its last filter unlabelled) making `frames` frames, with
 * any lines it needs first pushed onto `graph`.
 */
function titleCard(
  job: FormatJob,
  label: string,
  logoLabel: (use: 'title' | 'mark') => string | null,
  titleImage: string | null,
  frames: number,
  input: TourInput,
  graph: string[],
): string {
  const { width: W, height: H } = FORMATS[job.format];
  const { fps } = input.timings;
  const title = job.title;
  if (title.kind !== 'drawtext') return `[${titleImage}]${frames === 1 ? 'trim=end_frame=1,' : ''}scale=${W}:${H},format=yuv420p,setsar=1,settb=AVTB`;
  const base = Math.min(W, H);
  const sizes = title.lines.map((l) => Math.round(base * l.scale));
  const gap = Math.round(base * 0.03);
  const logoH = title.logo ? Math.round(base * 0.14) : 0;
  const total = sizes.reduce((a, b) => a + b, 0) + gap * (title.lines.length - 1) + (logoH ? logoH + gap * 2 : 0);
  let y = Math.round((H - total) / 2);
  const logoY = y;
  if (logoH) y += logoH + gap * 2;
  const draws = title.lines.map((l, i) => {
    const d = `drawtext=fontfile=${filterValue(title.fontFile)}:textfile=${filterValue(l.textFile)}:expansion=none:fontcolor=${title.color}:fontsize=${sizes[i]}:x=(w-text_w)/2:y=${y}`;
    y += sizes[i]! + gap;
    return d;
  });
  const finish = [...draws, 'format=yuv420p', 'setsar=1', 'settb=AVTB'].join(',');
  const bg = `color=c=${title.background}:s=${W}x${H}:r=${fps}:d=${seconds(frames, fps)}`;
  const logo = title.logo ? logoLabel('title') : null;
  if (!logo) return `${bg},${finish}`;
  graph.push(`${bg},format=yuv420p[${label}bg]`);
  graph.push(`[${logo}]scale=-2:${logoH}[${label}logo]`);
  // yuv420, not auto: auto blends in yuva420p, converting every frame there and back.
  return `[${label}bg][${label}logo]overlay=x=(W-w)/2:y=${logoY}:format=yuv420,${finish}`;
}

/**
 * The filters of one tour (title card, panning photos, cross-fades, captions, the
 * corner mark) for the parts of one segment in one format; `src(k)` names the photo k's
 * decoded stream for this format. Answers the graph lines and the label of the result.
 */
function formatGraph(
  job: FormatJob,
  fi: number,
  parts: readonly Part[],
  src: (photo: number) => string,
  logoLabel: (use: 'title' | 'mark') => string | null,
  titleImage: string | null,
  startFrame: number,
  input: TourInput,
): { graph: string[]; out: string } {
  const { width: W, height: H } = FORMATS[job.format];
  const { fps } = input.timings;
  const f = frameTimings(input.timings);
  const base = Math.min(W, H);
  const graph: string[] = [];
  // With cross-fades, each part is made in pieces so that only the frames overlapping a neighbour
  // go through xfade and the rest are joined by concat: a chain of xfades over whole parts passes
  // every frame of the tour through every link after it, which cost ffmpeg more than the
  // encoder did. Parts too short for their fades (none the timings make) keep the chain.
  const last = parts.length - 1;
  const fade = f.fade;
  const pieced = input.xfade && last > 0 && parts.every((p, pi) => p.to - p.from >= (pi > 0 ? fade : 0) + (pi < last ? fade : 0));
  const made = parts.map((part, pi) => {
    const label = `f${fi}p${pi}`;
    const len = part.to - part.from;
    const tailStart = pi < last ? len - fade : len;
    const ranges: { key: 'head' | 'body' | 'tail'; from: number; to: number }[] = !pieced
      ? [{ key: 'body', from: 0, to: len }]
      : [
          ...(pi > 0 ? [{ key: 'head' as const, from: 0, to: fade }] : []),
          ...(tailStart > (pi > 0 ? fade : 0) ? [{ key: 'body' as const, from: pi > 0 ? fade : 0, to: tailStart }] : []),
          ...(pi < last ? [{ key: 'tail' as const, from: tailStart, to: len }] : []),
        ];
    // The title card is still: made once and repeated when pieced, drawn for every frame otherwise.
    // A photo is scaled, cropped to the frame's height and its pan's width, and converted to the
    // encoder's yuv420p once, as a still; each piece loops it and pans over its own frames with a
    // crop (which only moves the planes' pointers). One loop split by trims would make every frame as
    // soon as its photo is reached and push the neighbour's frames into the cross-fade, which then
    // pulls the next photo early, and so on: with a two-input blend the whole tour ran ahead into
    // the queues (2 GB for 10 photos). A loop per piece makes frames only when they are asked for.
    const travel = panTravel(f.photo);
    const source =
      part.photo === null
        ? titleCard(job, label, logoLabel, titleImage, pieced ? 1 : f.title, input, graph)
        : `[${src(part.photo)}]scale=${W + travel}:${H}:force_original_aspect_ratio=increase:flags=bicubic,crop=${W + travel}:${H},setsar=1,format=yuv420p,settb=AVTB`;
    const shape = (r: { from: number; to: number }): string | null =>
      part.photo !== null
        ? pan(part.photo, f.photo, W, H, fps, part.from + r.from, r.to - r.from)
        : pieced
          ? `loop=loop=${r.to - r.from - 1}:size=1:start=0,setpts=N/(${fps}*TB)`
          : null;
    const names: Partial<Record<'head' | 'body' | 'tail', string>> = {};
    if (ranges.length === 1) {
      const r = ranges[0]!;
      const name = pieced ? `${label}${r.key[0]}` : label;
      const chain = shape(r);
      graph.push(`${source}${chain ? `,${chain}` : ''}[${name}]`);
      names[r.key] = name;
    } else {
      graph.push(`${source},split=${ranges.length}${ranges.map((r) => `[${label}${r.key[0]}in]`).join('')}`);
      for (const r of ranges) {
        names[r.key] = `${label}${r.key[0]}`;
        graph.push(`[${label}${r.key[0]}in]${shape(r) ?? 'null'}[${names[r.key]}]`);
      }
    }
    return names;
  });

  let out: string;
  if (pieced) {
    const sequence: string[] = [];
    made.forEach((m, i) => {
      if (i > 0) {
        const joined = `f${fi}x${i}`;
        // The outgoing frames fade out over the incoming ones, blended in yuv420p: xfade (ffmpeg
        // 5.1) works in yuv444p only, so each cross-fade cost three full-frame conversions a frame.
        graph.push(`[${made[i - 1]!.tail}]format=yuva420p,fade=t=out:s=0:n=${fade}:alpha=1[${joined}a]`);
        graph.push(`[${m.head}][${joined}a]overlay=format=yuv420:eof_action=pass[${joined}]`);
        sequence.push(joined);
      }
      if (m.body) sequence.push(m.body);
    });
    if (sequence.length === 1) out = sequence[0]!;
    else {
      graph.push(`${sequence.map((l) => `[${l}]`).join('')}concat=n=${sequence.length}:v=1:a=0[f${fi}cat]`);
      out = `f${fi}cat`;
    }
  } else if (input.xfade) {
    let prev = made[0]!.body!;
    let offset = parts[0]!.to - parts[0]!.from - fade;
    for (let i = 1; i < made.length; i++) {
      const next = `f${fi}x${i}`;
      graph.push(`[${prev}][${made[i]!.body}]xfade=transition=fade:duration=${seconds(fade, fps)}:offset=${seconds(offset, fps)}[${next}]`);
      prev = next;
      offset += parts[i]!.to - parts[i]!.from - fade;
    }
    out = prev;
  } else {
    const half = Math.max(1, Math.floor(fade / 2));
    const faded = parts.map((part, i) => {
      const len = part.to - part.from;
      const full = part.photo === null ? f.title : f.photo;
      const fades = [...(part.from === 0 ? [`fade=t=in:s=0:n=${half}`] : []), ...(part.to === full ? [`fade=t=out:s=${len - half}:n=${half}`] : [])];
      graph.push(`[${made[i]!.body}]${fades.length ? fades.join(',') : 'null'}[f${fi}f${i}]`);
      return `[f${fi}f${i}]`;
    });
    graph.push(`${faded.join('')}concat=n=${parts.length}:v=1:a=0[f${fi}cat]`);
    out = `f${fi}cat`;
  }

  // Captions and the corner mark are drawn over the joined parts; their times are the tour's, so a later segment shifts them.
  const startS = startFrame / fps;
  const frames = segmentFrames(parts, f.fade, input.xfade);
  const endS = startS + frames / fps;
  const overlays: string[] = [];
  if (job.captionFont) {
    const size = Math.round(base * 0.045);
    for (const cue of job.captions) {
      if (cue.toS <= startS || cue.fromS >= endS) continue;
      const from = Math.max(0, cue.fromS - startS).toFixed(3);
      const to = (cue.toS - startS).toFixed(3);
      overlays.push(
        `drawtext=fontfile=${filterValue(job.captionFont)}:textfile=${filterValue(cue.textFile)}:expansion=none:fontcolor=white:fontsize=${size}` +
          `:box=1:boxcolor=${job.captionBox}@0.7:boxborderw=${Math.round(size * 0.4)}:x=(w-text_w)/2:y=h*${W >= H ? '0.84' : '0.78'}-text_h/2` +
          `:enable='between(t\\,${from}\\,${to})'`,
      );
    }
  }
  if (overlays.length) {
    graph.push(`[${out}]${overlays.join(',')}[f${fi}cap]`);
    out = `f${fi}cap`;
  }
  const mark = job.cornerMark ? logoLabel('mark') : null;
  if (mark) {
    const markH = Math.round(base * 0.07);
    const margin = Math.round(base * 0.03);
    // Over the photos only: the title card shows the logo large already.
    const from = Math.max(0, f.title / fps - startS).toFixed(3);
    graph.push(`[${mark}]scale=-2:${markH},format=yuva420p,colorchannelmixer=aa=0.85[f${fi}mk]`);
    graph.push(`[${out}][f${fi}mk]overlay=x=W-w-${margin}:y=${margin}:format=yuv420:enable='gte(t\\,${from})',format=yuv420p[f${fi}mark]`);
    out = `f${fi}mark`;
  }
  return { graph, out };
}

/**
 * The audio filters: silence, the voice delayed to its start, the music looped and lowered
 * (ducked by a sidechain compressor keyed on the voice, so it dips while the voice speaks),
 * each cut to the tour's duration. `first` is the input index of the first audio input.
 */
export function audioInputs(audio: AudioPlan, durationS: string): { args: string[]; graph: string[]; label: string } {
  const args: string[] = [];
  const graph: string[] = [];
  let idx = 0;
  const next = () => idx++;
  const fmt = 'aformat=sample_rates=44100:channel_layouts=stereo';
  let voice: number | null = null;
  let music: number | null = null;
  if (audio.voice) {
    args.push('-i', audio.voice);
    voice = next();
  }
  if (audio.music) {
    args.push('-stream_loop', '-1', '-i', audio.music);
    music = next();
  }
  if (voice === null && music === null) {
    args.push('-f', 'lavfi', '-t', durationS, '-i', 'anullsrc=channel_layout=stereo:sample_rate=44100');
    return { args, graph: [], label: `${next()}:a` };
  }
  const delay = Math.round(audio.voiceAtS * 1000);
  if (voice !== null) graph.push(`[A${voice}:a]${fmt},adelay=${delay}|${delay},apad,atrim=0:${durationS}[voice]`);
  if (music !== null) {
    const fadeOut = Math.max(0, Number(durationS) - 2).toFixed(3);
    graph.push(`[A${music}:a]${fmt},atrim=0:${durationS},volume=0.5,afade=t=out:st=${fadeOut}:d=2[music]`);
  }
  if (voice !== null && music !== null) {
    graph.push('[voice]asplit=2[vkey][vmix]');
    graph.push('[music][vkey]sidechaincompress=threshold=0.02:ratio=10:attack=20:release=500:makeup=1[ducked]');
    graph.push(`[ducked][vmix]amix=inputs=2:duration=first:normalize=0,${fmt}[aout]`);
  } else graph.push(`[${voice !== null ? 'voice' : 'music'}]anull[aout]`);
  return { args, graph, label: '[aout]' };
}

/** Input labels `[A<k>:a]` of audioInputs, renumbered to the inputs' real indexes. */
function placeAudio(a: { args: string[]; graph: string[]; label: string }, first: number): { graph: string[]; map: string } {
  const graph = a.graph.map((g) => g.replace(/\[A(\d+):a\]/g, (_, k: string) => `[${first + Number(k)}:a]`));
  const map = a.label.startsWith('[') ? a.label : `${first + Number(a.label.split(':')[0])}:a`;
  return { graph, map };
}

function videoCodec(preset: string, fps: number): string[] {
  return ['-c:v', 'libx264', '-preset', preset, '-crf', '23', '-threads:v', String(X264_THREADS), '-pix_fmt', 'yuv420p', '-r', String(fps)];
}

const AUDIO_CODEC = ['-c:a', 'aac', '-b:a', '96k'];

/**
 * The ffmpeg runs of a tour in every format at once. The picture: each segment is one process
 * that decodes its photos once and makes every format from them (the photo is split, not decoded
 * again), without sound. The sound: one process mixes the voice and the music and encodes them
 * once for every format, beside the picture (it would otherwise take the picture's filter thread
 * and be encoded once per format). Then each format's segments are joined with the sound without
 * re-encoding either.
 */
export function planTour(input: TourInput): TourPlan {
  const { fps } = input.timings;
  const f = frameTimings(input.timings);
  const n = input.photos.length;
  const segments = segmentParts(n, input.photosPerSegment, input.timings, input.photosInFirstSegment);
  const frames = tourFrames(n, input.timings, input.xfade);
  const durationS = Math.round((frames / fps) * 1000) / 1000;
  const total = seconds(frames, fps);
  const posterFrame = n === 0 ? Math.floor(f.title / 2) : input.xfade ? f.title + Math.floor((f.photo - f.fade) / 2) : f.title + Math.floor(f.photo / 2);
  const posterAtS = Math.round((posterFrame / fps) * 1000) / 1000;
  const steps: Step[] = [];
  let startFrame = 0;
  const segmentFiles = input.formats.map(() => [] as string[]);
  // Each format's poster: the segment file holding its frame, and the frame's time in that file.
  const posterSource = { files: [] as string[], atS: 0 };
  segments.forEach((parts, si) => {
    const args: string[] = [];
    const graph: string[] = [];
    const photoInputs = new Map<number, number>();
    const F = input.formats.length;
    const photos = [...new Set(parts.filter((p) => p.photo !== null).map((p) => p.photo!))];
    const inputOf = new Map<number, number>();
    for (const k of photos) {
      // One decoder thread per photo: a thread per core for each of many inputs only costs address space.
      args.push('-threads', '1', '-i', input.photos[k]!);
      inputOf.set(k, photoInputs.size);
      photoInputs.set(photoInputs.size, k);
    }
    // Each photo is decoded once and split between the formats.
    if (F > 1) for (const k of photos) graph.push(`[${inputOf.get(k)}:v]split=${F}${input.formats.map((_, fi) => `[s${k}f${fi}]`).join('')}`);
    const hasTitle = parts[0]!.photo === null;
    const titleImages = input.formats.map((job) => {
      if (!hasTitle || job.title.kind !== 'image') return null;
      args.push('-loop', '1', '-framerate', String(fps), '-t', seconds(f.title, fps), '-i', job.title.path);
      return `${args.filter((x) => x === '-i').length - 1}:v`;
    });
    let logo: number | null = null;
    const logoUses = input.formats.flatMap((job) => [
      ...(job.title.kind === 'drawtext' && job.title.logo && hasTitle ? ['title' as const] : []),
      ...(job.cornerMark ? ['mark' as const] : []),
    ]);
    if (input.logo && logoUses.length > 0) {
      args.push('-i', input.logo);
      logo = args.filter((x) => x === '-i').length - 1;
      graph.push(`[${logo}:v]format=rgba,split=${logoUses.length}${logoUses.map((_, i) => `[logo${i}]`).join('')}`);
    }
    let logoNext = 0;
    const segFrames = segmentFrames(parts, f.fade, input.xfade);
    const outs = input.formats.map((job, fi) => {
      const src = (k: number) => (F > 1 ? `s${k}f${fi}` : `${inputOf.get(k)}:v`);
      const logoLabel = (use: 'title' | 'mark') => {
        if (logo === null) return null;
        if (use === 'mark' && !job.cornerMark) return null;
        return `logo${logoNext++}`;
      };
      const g = formatGraph(job, fi, parts, src, logoLabel, titleImages[fi]!, startFrame, input);
      graph.push(...g.graph);
      return g.out;
    });
    // The poster's frame starts a new GOP, so taking the poster decodes that frame alone instead of every frame before it.
    const poster = posterFrame >= startFrame && posterFrame < startFrame + segFrames ? posterFrame - startFrame : null;
    if (poster !== null) posterSource.atS = Number(seconds(poster, fps));
    const keyFrames = [...new Set([...partKeyFrames(parts, input.timings, input.xfade), ...(poster !== null ? [poster] : [])])].sort((a, b) => a - b);
    args.push('-filter_complex_threads', '1', '-filter_complex', graph.join(';'));
    input.formats.forEach((_, fi) => {
      const out = `${input.work}/seg-${si}-${fi}.mp4`;
      segmentFiles[fi]!.push(out);
      if (poster !== null) posterSource.files[fi] = out;
      args.push('-map', `[${outs[fi]}]`, ...videoCodec(input.preset, fps), '-frames:v', String(segFrames));
      if (keyFrames.length) args.push('-force_key_frames', keyFrames.map((k) => seconds(k, fps)).join(','));
      args.push(...BITEXACT, '-y', out);
    });
    steps.push({
      stage: 'picture',
      args,
      durationS: segFrames / fps,
      what: segments.length === 1 ? 'the tour' : `part ${si + 1} of ${segments.length} of the tour`,
      photoInputs,
    });
    startFrame += segFrames;
  });
  const sound = `${input.work}/sound.m4a`;
  const a = audioInputs(input.audio, total);
  const audio = placeAudio(a, 0);
  steps.push({
    stage: 'sound',
    args: [
      ...a.args,
      ...(audio.graph.length ? ['-filter_complex', audio.graph.join(';')] : []),
      '-map',
      audio.map,
      ...AUDIO_CODEC,
      '-t',
      total,
      ...BITEXACT,
      '-y',
      sound,
    ],
    durationS: 0,
    what: 'the sound of the tour',
    photoInputs: new Map(),
  });
  // One process joins every format and takes every poster: an ffmpeg process costs about a quarter
  // of a second of CPU to start (it loads some 200 shared libraries), more than a stream copy of a
  // tour or the decoding of the one frame a poster needs (a key frame).
  const lists = input.formats.map((_, fi) => ({ path: `${input.work}/segments-${fi}.txt`, files: segmentFiles[fi]! }));
  const args = lists.flatMap((l) => ['-f', 'concat', '-safe', '0', '-i', l.path]);
  const soundInput = lists.length;
  args.push('-i', sound);
  // Each poster's input is read for one frame only (`-t`): unbounded, ffmpeg 5.1 went on decoding
  // the whole segment after the poster was written, which cost more than the processes saved.
  for (const file of posterSource.files) args.push('-ss', String(posterSource.atS), '-t', seconds(1, fps), '-i', file);
  input.formats.forEach((job, fi) => {
    args.push('-map', `${fi}:v`, '-map', `${soundInput}:a`, '-c', 'copy', '-t', total, ...BITEXACT, '-movflags', '+faststart', '-y', job.output);
  });
  input.formats.forEach((job, fi) => {
    args.push('-map', `${soundInput + 1 + fi}:v`, '-frames:v', '1', '-q:v', '3', ...BITEXACT, '-y', job.poster);
  });
  steps.push({
    stage: 'join',
    args,
    durationS: 0,
    what: input.formats.length === 1 ? 'joining the tour' : `joining the ${input.formats.map((j) => j.format).join(', ')} tours`,
    photoInputs: new Map(),
    lists,
  });
  return { steps, durationS, frames, posterAtS };
}

/** A concat list of segment files (the concat demuxer's format; paths are ours, quoted all the same). */
export function concatList(files: readonly string[]): string {
  return files.map((f) => `file '${f.replace(/'/g, "'\\''")}'\n`).join('');
}

/**
 * Brings one photo down to what every format of the render needs (cover-fit to the largest
 * frame of each axis, no crop) as a high-quality JPEG, first frame only. Each photo is decoded
 * alone, so the tour itself, which opens several photos at once, holds frames of the output
 * size instead of full-resolution ones.
 */
export function fitPhotoArgs(photo: string, formats: readonly Format[], output: string): string[] {
  // Cover every format: scaled so that both sides are at least what the most demanding format needs.
  const W = Math.max(...formats.map((f) => FORMATS[f].width));
  const H = Math.max(...formats.map((f) => FORMATS[f].height));
  return [
    '-threads',
    '1',
    '-i',
    photo,
    '-frames:v',
    '1',
    '-vf',
    `scale=${W}:${H}:force_original_aspect_ratio=increase,setsar=1`,
    '-q:v',
    '2',
    ...BITEXACT,
    '-y',
    output,
  ];
}

/** The size fitPhotoArgs brings a photo of width x height to (its pixel count decides whether fitting is needed). */
export function fittedPixels(formats: readonly Format[]): number {
  const W = Math.max(...formats.map((f) => FORMATS[f].width));
  const H = Math.max(...formats.map((f) => FORMATS[f].height));
  return W * H;
}
